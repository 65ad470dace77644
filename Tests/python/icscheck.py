"""Reads an iCalendar document with the `icalendar` package the way a calendar without the
IANA database would: each event's DTSTART through the document's own VTIMEZONE."""
from datetime import datetime, timezone

import icalendar


def starts(text):
    """{UID: (DTSTART as a UTC datetime, SEQUENCE, STATUS)} of every event, DTSTART converted
    with the embedded VTIMEZONE named by its TZID (never a zone looked up by name)."""
    calendar = icalendar.Calendar.from_ical(text)
    zones = {}
    for component in calendar.walk("VTIMEZONE"):
        zones[str(component["TZID"])] = component.to_tz(lookup_tzid=False)
    events = {}
    for event in calendar.walk("VEVENT"):
        prop = event["DTSTART"]
        tzid = prop.params.get("TZID")
        assert tzid in zones, f"DTSTART names {tzid!r}, which the document does not define"
        naive = prop.dt.replace(tzinfo=None)
        local = naive.replace(tzinfo=zones[tzid])
        events[str(event["UID"])] = (local.astimezone(timezone.utc), int(event["SEQUENCE"]), str(event["STATUS"]))
    return events


def utc(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
