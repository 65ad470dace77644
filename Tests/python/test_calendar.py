"""Every .ics the project produces (one appointment from the CLI and the API, the private feed)
parses with `icalendar`, and each DTSTART read through the embedded VTIMEZONE is the
appointment's instant: in New York and Adak on each side of the next U.S. spring clock change,
in Phoenix (no DST) and in Minsk (UTC+3 all year)."""
import datetime
import os
import urllib.error
import urllib.request

from conftest import PASSWORD, Server
from icscheck import starts, utc

DIRECTORY = """external_id,name,address,city,state,lat,lon,category,is_pediatric,is_hospital,time_zone
NYC,Bellevue Hospital,462 First Avenue,New York,NY,40.7390,-73.9754,GENERAL ACUTE CARE,0,1,
ADK,Adak Clinic,100 Main Road,Adak,AK,51.8800,-176.6580,GENERAL ACUTE CARE,0,0,
PHX,Banner University Medical Center,1111 E McDowell Rd,Phoenix,AZ,33.4655,-112.0570,GENERAL ACUTE CARE,0,1,
MSK,Minsk City Hospital,Nezavisimosti Ave 64,Minsk,,53.9200,27.5900,GENERAL ACUTE CARE,0,1,
"""

EXPECTED_ZONES = {"NYC": "America/New_York", "ADK": "America/Adak", "PHX": "America/Phoenix", "MSK": "Europe/Minsk"}


def next_spring_change(today=None):
    """The next U.S. spring clock change (the second Sunday of March) whose Friday before is
    at least two days ahead, so that its slots are bookable whatever the hour the test runs."""
    today = today or datetime.date.today()
    for year in (today.year, today.year + 1):
        first = datetime.date(year, 3, 1)
        sunday = first + datetime.timedelta(days=(6 - first.weekday()) % 7 + 7)
        if sunday - datetime.timedelta(days=2) >= today + datetime.timedelta(days=2):
            return sunday
    raise AssertionError("no change ahead")


CHANGE = next_spring_change()
FRIDAY, MONDAY, TUESDAY = (str(CHANGE + datetime.timedelta(days=n)) for n in (-2, 1, 2))
# Friday before and Monday after the change; Minsk and Phoenix have none.
DAYS = {"NYC": [FRIDAY, MONDAY], "ADK": [FRIDAY, MONDAY], "PHX": [MONDAY], "MSK": [MONDAY]}


def test_the_next_change_is_a_second_sunday_of_march():
    assert next_spring_change(datetime.date(2026, 11, 24)) == datetime.date(2027, 3, 14)
    assert next_spring_change(datetime.date(2027, 3, 11)) == datetime.date(2028, 3, 12)
    assert next_spring_change(datetime.date(2027, 3, 10)) == datetime.date(2027, 3, 14)


def test_every_calendar_file_gives_the_appointments_instant(clinic, tmp_path):
    path = os.path.join(str(tmp_path), "directory.csv")
    with open(path, "w") as handle:
        handle.write(DIRECTORY)
    clinic.run("init", "--empty")
    clinic.run("admin", "import-clinics", path, "--demo")
    clinic.run("admin", "settings", "set", "booking.max_active", "20")
    clinic.run("admin", "settings", "set", "booking.horizon_days", "400")  # the change may be a year away
    clinic.register("anna")
    booked = {}
    for external_id, days in DAYS.items():
        clinic_row = find_clinic(clinic, external_id)
        assert clinic_row["timeZone"] == EXPECTED_ZONES[external_id]
        department = clinic.json("departments", str(clinic_row["id"]))[0]["id"]
        for day in days:
            slot = clinic.free_slot(department, day)
            appointment = clinic.json("book", "--department", str(department), "--at", slot["start"])
            booked[appointment["id"]] = appointment
    assert len(booked) == 6

    for appointment_id, appointment in booked.items():
        text = clinic.run("appointments", "ics", str(appointment_id)).stdout
        events = starts(text)
        assert len(events) == 1
        (start, sequence, status), = events.values()
        assert start == utc(appointment["start"]), (appointment_id, start, appointment["start"])
        assert (sequence, status) == (0, "CONFIRMED")

    # A reschedule raises SEQUENCE and moves DTSTART; a cancellation says CANCELLED.
    first = min(booked)
    department = booked[first]["departmentId"]
    later = clinic.free_slot(department, TUESDAY)
    moved = clinic.json("reschedule", str(first), "--to", later["start"])
    (start, sequence, status), = starts(clinic.run("appointments", "ics", str(first)).stdout).values()
    assert (start, sequence, status) == (utc(moved["start"]), 1, "CONFIRMED")
    clinic.run("cancel", str(first))
    (start, sequence, status), = starts(clinic.run("appointments", "ics", str(first)).stdout).values()
    assert (sequence, status) == (2, "CANCELLED")
    booked[first] = moved

    # The private feed (over HTTP, with its own token) and the API's file say the same.
    feed = clinic.json("profile", "calendar-url")
    server = Server(clinic)
    try:
        token = feed["token"]
        with urllib.request.urlopen(f"{server.url}/v1/me/calendar.ics?token={token}") as answer:
            assert answer.headers["Content-Type"].startswith("text/calendar")
            events = starts(answer.read().decode())
        assert len(events) == 6
        assert sorted(start for start, _, _ in events.values()) == sorted(utc(a["start"]) for a in booked.values())
        session = read_session(clinic)
        other = max(booked)
        request = urllib.request.Request(f"{server.url}/v1/appointments/{other}.ics",
                                         headers={"Authorization": f"Bearer {session}"})
        with urllib.request.urlopen(request) as answer:
            (start, _, _), = starts(answer.read().decode()).values()
        assert start == utc(booked[other]["start"])
        # A rotated address ends the old one.
        clinic.run("profile", "calendar-url", "--rotate")
        try:
            urllib.request.urlopen(f"{server.url}/v1/me/calendar.ics?token={token}")
            raise AssertionError("the old calendar address still works")
        except urllib.error.HTTPError as error:
            assert error.code == 404
    finally:
        server.stop()


NAMES = {"NYC": "Bellevue Hospital", "ADK": "Adak Clinic", "PHX": "Banner University Medical Center",
         "MSK": "Minsk City Hospital"}


def find_clinic(clinic, external_id):
    for row in clinic.json("clinics", "list", "--limit", "50"):
        if row["name"] == NAMES[external_id]:
            return row
    raise AssertionError(f"no clinic {external_id}")


def read_session(clinic):
    with open(clinic.env["CLINIC_SESSION"]) as handle:
        return handle.read().strip()
