"""The FHIR R4 front (/fhir/r4, docs/FHIR.md) against the real `clinic serve` on 127.0.0.1:
every response of a client's journey parsed with fhir.resources' R4B models and checked for the
IHE ITI Scheduling Appointment profile's required elements; the journey itself with fhirpy;
`Location?near` against `/v1/clinics/nearest`; holds that expire; and bad input answered with
an OperationOutcome, never a 500."""

import datetime
import json
import random

import pytest
from fhir.resources.R4B.bundle import Bundle
from fhir.resources.R4B.appointment import Appointment
from fhir.resources.R4B.capabilitystatement import CapabilityStatement
from fhir.resources.R4B.healthcareservice import HealthcareService
from fhir.resources.R4B.location import Location
from fhir.resources.R4B.operationoutcome import OperationOutcome
from fhir.resources.R4B.organization import Organization
from fhir.resources.R4B.patient import Patient
from fhir.resources.R4B.practitioner import Practitioner
from fhir.resources.R4B.practitionerrole import PractitionerRole
from fhir.resources.R4B.schedule import Schedule
from fhir.resources.R4B.slot import Slot
from fhirpy import SyncFHIRClient

from zoneinfo import ZoneInfo

from conftest import STAFF_PASSWORD, api_patient as patient, call, directory_site, wait_until

FHIR_JSON = "application/fhir+json"
CARDIOLOGY = "http://snomed.info/sct|394579002"
# Midtown Manhattan: dozens of clinics with cardiology within a few kilometres.
MANHATTAN = (40.7549, -73.9840)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """One server on the default directory for the module (on PostgreSQL in scripts/test.sh's
    second run). Holds last 10 s here; every test registers and signs in its patients from
    127.0.0.1, past the per-address limit."""
    with directory_site(str(tmp_path_factory.mktemp("fhir")), settings={"booking.hold_seconds": "10"},
                        server_env={"CLINIC_AUTH_RATE": "100000/100000"}) as (clinic, server):
        yield clinic, server


@pytest.fixture
def clinic(site):
    return site[0]


@pytest.fixture
def served(site):
    return site[1]


def fhir(base, method, path, body=None, token=None, headers=None):
    fields = {"Accept": FHIR_JSON, **(headers or {})}
    if body is not None and "Content-Type" not in fields:
        fields["Content-Type"] = FHIR_JSON
    import http.client
    import time
    import urllib.parse
    address = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    if token:
        fields["Authorization"] = "Bearer " + token
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    try:
        connection.request(method, "/fhir/r4" + path, body=data, headers=fields)
        response = connection.getresponse()
        raw = response.read()
        content_type = response.getheader("Content-Type") or ""
    finally:
        connection.close()
    return response.status, content_type, (json.loads(raw) if raw else None)


def ihe_appointment(resource, status):
    """The IHE ITI Appointment profile's required elements (start, end, requestedPeriod,
    participant.actor), and the status the operation gives."""
    assert resource["resourceType"] == "Appointment"
    assert resource["status"] == status
    assert resource["start"] and resource["end"] and resource["start"] < resource["end"]
    assert resource["requestedPeriod"] and resource["requestedPeriod"][0]["start"] == resource["start"]
    assert resource["participant"] and all(item["actor"]["reference"] for item in resource["participant"])
    assert "https://profiles.ihe.net/ITI/Scheduling/StructureDefinition/ihe-sched-appt" in resource["meta"]["profile"]


def bundle(status, content_type, body, expected=200):
    assert status == expected, body
    assert content_type.startswith(FHIR_JSON)
    return Bundle.model_validate(body)


def nearest_cardiology(base, days):
    """The first free cardiology time near Manhattan from `days` days on (a proposed Appointment)."""
    start = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=days)
    status, content_type, body = fhir(base, "GET", f"/Appointment/$find?start={start.date()}&specialty=cardiology"
                                      f"&near={MANHATTAN[0]}|{MANHATTAN[1]}&_count=1")
    bundle(status, content_type, body)
    return start, body["entry"][0]["resource"]


def parameters(*parts):
    return {"resourceType": "Parameters", "parameter": list(parts)}


def test_a_client_finds_holds_and_books_the_nearest_cardiology_slot(clinic, served):
    base = served.url
    token, patient_id = patient(base, "fhir-anna")
    other_token, _ = patient(base, "fhir-boris")

    status, content_type, body = fhir(base, "GET", "/metadata")
    assert status == 200 and content_type.startswith(FHIR_JSON)
    capability = CapabilityStatement.model_validate(body)
    appointment = next(item for item in capability.rest[0].resource if item.type == "Appointment")
    assert {operation.name for operation in appointment.operation} == {"find", "hold", "book"}
    assert capability.instantiates == ["https://profiles.ihe.net/ITI/Scheduling/CapabilityStatement/IHE.Scheduling.server"]

    client = SyncFHIRClient(base + "/fhir/r4", authorization="Bearer " + token,
                            extra_headers={"Accept": FHIR_JSON})
    near = f"{MANHATTAN[0]}|{MANHATTAN[1]}|20|km"
    locations = client.resources("Location").search(near=near).search(
        **{"_has:HealthcareService:location:specialty": CARDIOLOGY}).limit(3).fetch()
    assert len(locations) == 3
    for location in locations:
        Location.model_validate(location.serialize())
    nearest = locations[0]
    services = client.resources("HealthcareService").search(location=f"Location/{nearest.id}", specialty=CARDIOLOGY).fetch()
    assert len(services) == 1 and services[0].specialty[0].coding[0].code == "394579002"
    HealthcareService.model_validate(services[0].serialize())

    start = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)
    end = start + datetime.timedelta(days=14)
    found = client.execute("Appointment/$find", method="post", data=parameters(
        {"name": "start", "valueDateTime": start.isoformat(timespec="seconds")},
        {"name": "end", "valueDateTime": end.isoformat(timespec="seconds")},
        {"name": "specialty", "valueCodeableConcept": {"coding": [{"system": "http://snomed.info/sct", "code": "394579002"}]}},
        {"name": "near", "valueString": f"{MANHATTAN[0]}|{MANHATTAN[1]}"}))
    found_bundle = Bundle.model_validate(found)
    assert found_bundle.entry, "no proposed appointment near Manhattan"
    proposals = [entry["resource"] for entry in found["entry"]]
    for item in proposals:
        ihe_appointment(item, "proposed")
    distances = [entry["search"]["extension"][0]["valueDistance"]["value"] for entry in found["entry"]]
    assert distances == sorted(distances)
    chosen = proposals[0]

    # The same find by GET, with the specialty as a token.
    status, content_type, body = fhir(base, "GET", f"/Appointment/$find?start={start.date()}&end={end.date()}"
                                      f"&specialty=394579002&location={chosen['participant'][2]['actor']['reference']}&_count=5")
    assert len(bundle(status, content_type, body).entry) >= 1

    hold = fhir(base, "POST", "/Appointment/$hold", parameters(
        {"name": "appointment-reference", "valueReference": {"reference": f"Appointment/{chosen['id']}"}}), token=token)
    held = bundle(*hold).entry[0].resource
    held_json = hold[2]["entry"][0]["resource"]
    ihe_appointment(held_json, "pending")
    assert held.start.isoformat().replace("+00:00", "Z") == chosen["start"]

    # A second client cannot hold it, nor book it through the API, while it is held.
    status, content_type, body = fhir(base, "POST", "/Appointment/$hold", parameters(
        {"name": "appointment-reference", "valueReference": {"reference": f"Appointment/{chosen['id']}"}}), token=other_token)
    assert status == 409 and content_type.startswith(FHIR_JSON)
    outcome = OperationOutcome.model_validate(body)
    assert outcome.issue[0].details.coding[0].code == "slot_taken"
    department, doctor = chosen["id"].split("-")[1:3]
    reply = call(base, "POST", "/v1/appointments", {"departmentId": int(department), "doctorId": int(doctor),
                                                    "start": chosen["start"]}, token=other_token)
    assert reply.status == 409 and reply.code == "slot_taken"

    booked = client.execute("Appointment/$book", method="post", data=parameters(
        {"name": "appointment-reference", "valueReference": {"reference": f"Appointment/{held_json['id']}"}},
        {"name": "comment", "valueString": "Chest pain on stairs"}))
    booked_bundle = Bundle.model_validate(booked)
    appointment_json = booked["entry"][0]["resource"]
    ihe_appointment(appointment_json, "booked")
    assert appointment_json["start"] == chosen["start"] and appointment_json["comment"] == "Chest pain on stairs"
    assert booked_bundle.entry[0].resource.id == appointment_json["id"]

    mine = client.resources("Appointment").search(patient=f"Patient/{patient_id}").fetch()
    assert [item.id for item in mine] == [appointment_json["id"]]
    # ITI-118's _include: the doctor, the clinic and the patient, once each, after the match.
    status, content_type, body = fhir(base, "GET", f"/Appointment?patient=Patient/{patient_id}&date=ge{start.date()}"
                                      "&_include=Appointment:actor", token=token)
    bundle(status, content_type, body)
    assert [(item["search"]["mode"], item["resource"]["resourceType"]) for item in body["entry"]] == [
        ("match", "Appointment"), ("include", "Patient"), ("include", "Practitioner"), ("include", "Location")]
    assert body["total"] == 1
    ihe_appointment(Appointment.model_validate(mine[0].serialize()).model_dump(mode="json"), "booked")
    # The inbox says so, as for a booking through the API.
    messages = call(base, "GET", "/v1/messages", token=token).body
    messages = messages["items"] if isinstance(messages, dict) else messages
    assert any(item.get("appointmentId") == int(appointment_json["id"]) for item in messages), messages
    # The API sees the same booking.
    reply = call(base, "GET", f"/v1/appointments/{appointment_json['id']}", token=token)
    assert reply.status == 200 and reply.body["status"] == "scheduled"

    cancelled = client.execute("Appointment/$book", method="post", data=parameters(
        {"name": "appointment-resource", "resource": {**appointment_json, "status": "cancelled"}}))
    assert cancelled["entry"][0]["resource"]["status"] == "cancelled"
    reply = call(base, "GET", f"/v1/appointments/{appointment_json['id']}", token=token)
    assert reply.body["status"] == "cancelled"
    # The other patient sees none of it.
    status, _, body = fhir(base, "GET", f"/Appointment/{appointment_json['id']}", token=other_token)
    assert status == 404 and body["resourceType"] == "OperationOutcome"
    status, _, body = fhir(base, "GET", f"/Appointment?patient=Patient/{patient_id}", token=other_token)
    assert status == 403 and body["resourceType"] == "OperationOutcome"


def test_a_retried_book_books_once(clinic, served):
    base = served.url
    token, _ = patient(base, "fhir-retry")
    start, proposal = nearest_cardiology(base, days=2)
    request = parameters({"name": "appointment-reference", "valueReference": {"reference": f"Appointment/{proposal['id']}"}})
    first = fhir(base, "POST", "/Appointment/$book", request, token=token, headers={"Idempotency-Key": "book-1"})
    again = fhir(base, "POST", "/Appointment/$book", request, token=token, headers={"Idempotency-Key": "book-1"})
    assert first[0] == again[0] == 200 and first[2]["entry"][0]["resource"]["id"] == again[2]["entry"][0]["resource"]["id"]
    # If-None-Exist: the booking that exists is the answer, nothing is booked twice.
    condition = {"If-None-Exist": f"date={proposal['start']}&status=booked"}
    third = fhir(base, "POST", "/Appointment/$book", request, token=token, headers=condition)
    assert third[0] == 200 and third[2]["entry"][0]["resource"]["id"] == first[2]["entry"][0]["resource"]["id"]
    reply = call(base, "GET", "/v1/appointments?scope=all", token=token)
    assert len(reply.body["items"]) == 1


def test_the_waitlist_is_an_appointment_waiting_and_an_offer_is_pending_that_book_accepts(clinic, served):
    base = served.url
    anna, _ = patient(base, "fhir-wl-anna")
    bob, bob_id = patient(base, "fhir-wl-bob")
    _, proposal = nearest_cardiology(base, days=4)
    department = int(proposal["id"].split("-")[1])
    booked = fhir(base, "POST", "/Appointment/$book", parameters(
        {"name": "appointment-reference", "valueReference": {"reference": f"Appointment/{proposal['id']}"}}), token=anna)
    assert booked[0] == 200, booked[2]
    appointment = booked[2]["entry"][0]["resource"]["id"]
    joined = call(base, "POST", "/v1/waitlist", {"departmentId": department}, token=bob)
    assert joined.status == 201, joined.body

    waiting = bundle(*fhir(base, "GET", f"/Appointment?patient={bob_id}&status=waitlist", token=bob))
    (entry,) = [item.resource for item in waiting.entry]
    assert isinstance(entry, Appointment) and entry.status == "waitlist" and entry.id == f"waitlist-{joined.body['id']}"
    assert entry.requestedPeriod[0].start < entry.requestedPeriod[0].end and entry.start is None
    assert fhir(base, "GET", f"/Appointment/{entry.id}", token=anna)[0] == 404, "another patient's entry is not found"

    assert call(base, "POST", f"/v1/appointments/{appointment}/cancel", token=anna).status == 200
    def offered():
        found = fhir(base, "GET", f"/Appointment?patient={bob_id}&status=pending", token=bob)[2]
        return found.get("entry")
    (item,) = wait_until(offered, 20, "the cancelled time offered to the waiting patient")
    bundle(200, FHIR_JSON, {"resourceType": "Bundle", "type": "searchset", "entry": [item]})
    offer = item["resource"]
    ihe_appointment(offer, "pending")
    assert offer["id"].startswith("offer-") and offer["start"] == proposal["start"]
    assert any(extension["url"] == "urn:clinickit:extension:hold-expires" for extension in offer["extension"])
    request = parameters({"name": "appointment-reference", "valueReference": {"reference": f"Appointment/{offer['id']}"}})
    assert fhir(base, "POST", "/Appointment/$book", request, token=anna)[0] == 404, "an offer books only for its patient"
    status, content_type, body = fhir(base, "POST", "/Appointment/$book", request, token=bob)
    accepted = bundle(status, content_type, body)
    ihe_appointment(body["entry"][0]["resource"], "booked")
    assert accepted.entry[0].resource.start.isoformat().startswith(proposal["start"][:16])
    assert fhir(base, "GET", f"/Appointment/{offer['id']}", token=bob)[0] == 404, "the offer is taken"


def test_a_held_slot_is_refused_to_others_until_it_expires(clinic, served):
    base = served.url
    first, _ = patient(base, "fhir-first")
    second, _ = patient(base, "fhir-second")
    start, proposal = nearest_cardiology(base, days=3)
    request = parameters({"name": "appointment-reference", "valueReference": {"reference": f"Appointment/{proposal['id']}"}})
    held = fhir(base, "POST", "/Appointment/$hold", request, token=first)
    assert held[0] == 200, held[2]
    expires = held[2]["entry"][0]["resource"]["extension"][1]["valueInstant"]
    assert fhir(base, "POST", "/Appointment/$hold", request, token=second)[0] == 409
    # The slot shows as busy meanwhile, to everyone, and $find does not offer it.
    doctor = proposal["id"].split("-")[2]
    slot_id = f"{doctor}-{proposal['id'].split('-')[3]}"
    status, _, slot = fhir(base, "GET", f"/Slot/{slot_id}")
    assert status == 200 and slot["status"] == "busy"
    # The CLI cannot book it either.
    clinic.register("fhir-cli")
    department = proposal["id"].split("-")[1]
    refused = clinic.run("book", "--department", department, "--doctor", doctor, "--at", proposal["start"], check=False)
    assert refused.returncode != 0 and "taken" in refused.stderr
    # booking.hold_seconds is 10 here: then the second client gets it.
    wait_until(lambda: fhir(base, "POST", "/Appointment/$hold", request, token=second)[0] == 200, 40,
               f"the hold expiring at {expires}", interval=0.5)
    status, _, slot = fhir(base, "GET", f"/Slot/{slot_id}")
    assert slot["status"] == "busy"
    # The first client's expired hold is gone: booking it is refused, the slot being the second's.
    hold_id = held[2]["entry"][0]["resource"]["id"]
    status, _, body = fhir(base, "POST", "/Appointment/$book", parameters(
        {"name": "appointment-reference", "valueReference": {"reference": f"Appointment/{hold_id}"}}), token=first)
    assert status in (404, 409) and body["resourceType"] == "OperationOutcome"


def test_every_resource_of_the_directory_reads_and_parses(clinic, served):
    base = served.url
    token, patient_id = patient(base, "fhir-reader")
    status, content_type, body = fhir(base, "GET", "/Location?address-city=New+York&_count=5")
    first = bundle(status, content_type, body)
    assert len(first.entry) == 5 and all(entry.resource.address.city == "NEW YORK" for entry in first.entry)
    following = [link["url"] for link in body["link"] if link["relation"] == "next"]
    status, content_type, more = fhir(base, "GET", "/Location" + following[0].split("/Location", 1)[1])
    assert not {entry["resource"]["id"] for entry in more["entry"]} & {entry["resource"]["id"] for entry in body["entry"]}

    location_id = body["entry"][0]["resource"]["id"]
    status, _, body = fhir(base, "GET", f"/Location/{location_id}")
    location = Location.model_validate(body)
    assert location.extension[0].valueCode == "America/New_York" and location.hoursOfOperation
    assert location.position.latitude and location.managingOrganization.reference == f"Organization/{location_id}"
    Organization.model_validate(fhir(base, "GET", f"/Organization/{location_id}")[2])
    services = bundle(*fhir(base, "GET", f"/HealthcareService?location=Location/{location_id}"))
    service_id = services.entry[0].resource.id
    HealthcareService.model_validate(fhir(base, "GET", f"/HealthcareService/{service_id}")[2])
    roles = bundle(*fhir(base, "GET", f"/PractitionerRole?service=HealthcareService/{service_id}"))
    doctor_id = roles.entry[0].resource.id
    role = PractitionerRole.model_validate(fhir(base, "GET", f"/PractitionerRole/{doctor_id}")[2])
    assert role.availableTime and role.healthcareService[0].reference == f"HealthcareService/{service_id}"
    Practitioner.model_validate(fhir(base, "GET", f"/Practitioner/{doctor_id}")[2])
    schedule = Schedule.model_validate(fhir(base, "GET", f"/Schedule/{doctor_id}")[2])
    assert schedule.actor[0].reference == f"Practitioner/{doctor_id}"
    assert bundle(*fhir(base, "GET", f"/Schedule?actor=Location/{location_id}")).entry

    # Slots of a window, the offset's plus sent bare (a space once decoded) or encoded.
    # A weekday a week or more ahead: the demo doctors work Monday to Friday (a run on a
    # Saturday once asked for a Saturday and found no free slot to check).
    weekday = datetime.date.today() + datetime.timedelta(days=7)
    while weekday.weekday() >= 5:
        weekday += datetime.timedelta(days=1)
    day = weekday.isoformat()
    window = f"start=ge{day}T00:00:00+00:00&start=lt{day}T23:59:59%2B00:00"
    slots = bundle(*fhir(base, "GET", f"/Slot?schedule=Schedule/{doctor_id}&{window}"))
    free = bundle(*fhir(base, "GET", f"/Slot?schedule=Schedule/{doctor_id}&{window}&status=free"))
    assert all(entry.resource.status == "free" for entry in free.entry)
    assert all(entry.resource.start.date().isoformat() == day for entry in slots.entry)
    if slots.entry:
        Slot.model_validate(fhir(base, "GET", f"/Slot/{slots.entry[0].resource.id}")[2])

    own = Patient.model_validate(fhir(base, "GET", f"/Patient/{patient_id}", token=token)[2])
    assert own.name[0].family == "Smith"
    assert fhir(base, "GET", f"/Patient/{patient_id + 1}", token=token)[0] == 404
    assert fhir(base, "GET", f"/Patient/{patient_id}")[0] == 401


def test_staff_visit_types_moves_and_refusals(clinic, served):
    base = served.url
    token, patient_id = patient(base, "fhir-visits")
    start, proposal = nearest_cardiology(base, days=4)
    department = proposal["id"].split("-")[1]
    location = next(p["actor"]["reference"] for p in proposal["participant"] if p["actor"]["reference"].startswith("Location/"))
    clinic_id = location.split("/")[1]

    # A clinic admin adds a 40-minute visit type with a price: the department's service type.
    clinic.staff("fhir-admin", "clinic-admin", int(clinic_id))
    clinic.run("staff", "visit-types", "add", "--department", department, "--name-en", "Long consultation",
               "--name-ru", "Долгая консультация", "--minutes", "40", "--price-cents", "12000")
    service = HealthcareService.model_validate(fhir(base, "GET", f"/HealthcareService/{department}")[2])
    visit = service.type[0]
    visit_id = visit.coding[0].code
    assert {item.url: (item.valueInteger or item.valueMoney.value) for item in visit.extension} == {
        "urn:clinickit:extension:visit-minutes": 40, "urn:clinickit:extension:visit-price": 120}

    found = bundle(*fhir(base, "GET", f"/Appointment/$find?service=HealthcareService/{department}&visit-type={visit_id}"
                                      f"&start={start.date()}&_count=3"))
    proposals = [entry.resource for entry in found.entry]
    assert len(proposals) == 3 and all(item.minutesDuration == 40 and item.serviceType[0].coding[0].code == visit_id
                                       for item in proposals)
    first = found.model_dump(mode="json")["entry"][0]["resource"]
    booked = fhir(base, "POST", "/Appointment/$book", parameters(
        {"name": "appointment-resource", "resource": {**first, "status": "pending"}}), token=token)
    appointment = bundle(*booked).entry[0].resource
    assert appointment.status == "booked" and appointment.minutesDuration == 40

    # Moved by PATCH to the third proposed start (the second may overlap the first visit).
    later = found.model_dump(mode="json")["entry"][2]["resource"]["start"]
    status, content_type, moved = fhir(base, "PATCH", f"/Appointment/{appointment.id}",
                                       [{"op": "replace", "path": "/start", "value": later}], token=token,
                                       headers={"Content-Type": "application/json-patch+json"})
    assert status == 200 and Appointment.model_validate(moved).start.isoformat().replace("+00:00", "Z") == later
    assert moved["minutesDuration"] == 40, "a move keeps the visit's length"

    # Staff see their clinic's day, and the patient sees that they were read.
    before = len(call(base, "GET", "/v1/me/access-log", token=token).body)
    staff = call(base, "POST", "/v1/staff/sessions", {"login": "fhir-admin", "password": STAFF_PASSWORD})
    assert staff.status == 201, staff.body
    day = datetime.datetime.fromisoformat(later.replace("Z", "+00:00")).astimezone(ZoneInfo("America/New_York")).date()
    day_bundle = bundle(*fhir(base, "GET", f"/Appointment?date={day}", token=staff.body["token"]))
    assert appointment.id in [entry.resource.id for entry in day_bundle.entry]
    log = call(base, "GET", "/v1/me/access-log", token=token).body
    assert len(log) > before and log[0]["action"] == "patient.read" and log[0]["role"] == "clinic-admin"
    assert fhir(base, "GET", "/Appointment?date=ge2026-01-01", token=staff.body["token"])[0] == 400

    # Cancelled by PUT.
    status, _, cancelled = fhir(base, "PUT", f"/Appointment/{appointment.id}", {**moved, "status": "cancelled"}, token=token)
    assert status == 200 and cancelled["status"] == "cancelled"

    # 422: a proposal whose time has passed; 412: If-None-Exist matching two bookings.
    past = f"p-{department}-{proposal['id'].split('-')[2]}-1000000000"
    status, _, body = fhir(base, "POST", "/Appointment/$hold", parameters(
        {"name": "appointment-reference", "valueReference": {"reference": f"Appointment/{past}"}}), token=token)
    assert status == 422 and body["issue"][0]["code"] == "business-rule"
    many = bundle(*fhir(base, "GET", f"/Appointment/$find?service=HealthcareService/{department}&visit-type={visit_id}"
                                     f"&start={start.date()}&_count=20")).model_dump(mode="json")["entry"]
    chosen = [many[0]["resource"]]
    chosen.append(next(item["resource"] for item in many if item["resource"]["start"] >= chosen[0]["end"]))
    for item in chosen:
        status, _, body = fhir(base, "POST", "/Appointment/$book", parameters(
            {"name": "appointment-reference", "valueReference": {"reference": f"Appointment/{item['id']}"}}), token=token)
        assert status == 200, body
    third = next(item["resource"] for item in many if item["resource"]["start"] >= chosen[1]["end"])
    status, _, body = fhir(base, "POST", "/Appointment/$book", parameters(
        {"name": "appointment-reference", "valueReference": {"reference": f"Appointment/{third['id']}"}}), token=token,
        headers={"If-None-Exist": "status=booked"})
    assert status == 412 and body["issue"][0]["details"]["coding"][0]["code"] == "precondition_failed"


def test_the_capability_statement_tells_the_truth(clinic, served):
    """Every search parameter the CapabilityStatement lists is one the server reads (an unknown
    one is refused by name), and every operation it lists answers."""
    base = served.url
    capability = fhir(base, "GET", "/metadata")[2]
    for resource in capability["rest"][0]["resource"]:
        for parameter in resource.get("searchParam", []):
            status, _, body = fhir(base, "GET", f"/{resource['type']}?{parameter['name']}=1")
            text = json.dumps(body)
            assert "is not known here" not in text, (resource["type"], parameter["name"], body)
            assert status < 500, (resource["type"], parameter["name"], body)
        unknown = fhir(base, "GET", f"/{resource['type']}?no-such-parameter=1")
        assert unknown[0] in (400, 401) and unknown[2]["resourceType"] == "OperationOutcome"
        for operation in resource.get("operation", []):
            status, _, body = fhir(base, "POST", f"/{resource['type']}/${operation['name']}", parameters())
            assert status in (400, 401) and body["resourceType"] == "OperationOutcome", (operation, status, body)


def test_near_combines_with_type_state_and_specialty(clinic, served):
    base = served.url
    near = f"near={MANHATTAN[0]}|{MANHATTAN[1]}|50|mi"
    in_new_jersey = bundle(*fhir(base, "GET", f"/Location?{near}&address-state=nj&_count=20")).entry
    assert len(in_new_jersey) == 20 and all(item.resource.address.state == "NJ" for item in in_new_jersey)
    pediatric = bundle(*fhir(base, "GET", f"/Location?{near}&type=PEDC&_count=5")).entry
    assert pediatric and all(any(coding.code == "PEDC" for coding in item.resource.type[0].coding) for item in pediatric)
    everything = fhir(base, "GET", f"/Location?{near}&_count=100")[2]["entry"]
    distances = [item["search"]["extension"][0]["valueDistance"]["value"] for item in everything]
    assert distances == sorted(distances) and distances[-1] <= 50 * 1609.344
    # The specialty filter keeps the order of the unfiltered search.
    cardiology = bundle(*fhir(base, "GET", f"/Location?{near}&_count=10&_has:HealthcareService:location:specialty={CARDIOLOGY}"))
    ids = [item.resource.id for item in cardiology.entry]
    with_cardiology = []
    for item in everything:
        location = item["resource"]["id"]
        services = fhir(base, "GET", f"/HealthcareService?location=Location/{location}&specialty={CARDIOLOGY}")[2]
        if services.get("entry"):
            with_cardiology.append(location)
        if len(with_cardiology) == 3:
            break
    assert ids[:3] == with_cardiology


POINTS = [
    (51.88, 179.99),     # the Aleutians, across the antimeridian from Adak
    (52.0, -179.9),
    (-14.3, 179.5),      # west of American Samoa, across the antimeridian
    (13.45, 144.75),     # Guam
    (89.9, 0.0),         # near the North Pole: every meridian is close
    (-89.5, 45.0),       # near the South Pole
    (71.3, -156.8),      # Utqiagvik, Alaska
    (19.7, -155.1),      # Hawaii
]


def test_location_near_equals_the_nearest_clinics_of_the_api(clinic, served):
    base = served.url
    generator = random.Random(27)
    points = POINTS + [(generator.uniform(-90, 90), generator.uniform(-180, 180)) for _ in range(12)]
    for latitude, longitude in points:
        reply = call(base, "GET", f"/v1/clinics/nearest?lat={latitude}&lon={longitude}&limit=15")
        assert reply.status == 200, reply.body
        status, content_type, body = fhir(base, "GET", f"/Location?near={latitude}|{longitude}&_count=10")
        first = bundle(status, content_type, body)
        following = [link["url"] for link in body["link"] if link["relation"] == "next"]
        assert following, "a next link"
        status, content_type, more = fhir(base, "GET", "/Location" + following[0].split("/Location", 1)[1])
        entries = body["entry"] + bundle(status, content_type, more).entry and body["entry"] + more["entry"]
        got = [(int(entry["resource"]["id"]), entry["search"]["extension"][0]["valueDistance"]["value"]) for entry in entries[:15]]
        expected = [(item["id"], item["distanceMeters"]) for item in reply.body]
        assert [item[0] for item in got] == [item[0] for item in expected], (latitude, longitude)
        for (_, metres), (_, api) in zip(got, expected):
            assert abs(metres - api) < 1, (latitude, longitude, metres, api)
        assert len(first.entry) == 10


@pytest.mark.parametrize("path", [
    "/Location?near=40|-74&colour=blue",               # an unknown parameter
    "/Location?near=40|-74|5|furlongs",                 # a unit FHIR's near does not take
    "/Location?near=91|-74",                            # a latitude off the globe
    "/Location?near=forty|-74",
    "/Location?near=40|-74&_count=0",
    "/Location?near=40|-74&_count=10000",
    "/Location?near=40|-74&_format=xml",
    "/Slot?start=ge2026-12-01",                         # no schedule
    "/Slot?schedule=Schedule/1&start=ge2026-13-01",
    "/Appointment/$find?specialty=cardiology",          # nowhere to look
    "/Appointment/$find?near=40|-74&specialty=cardiology&start=2027-01-01&end=2026-12-01",
    "/Appointment/$find?location=Location/x",
    "/Location?near=40|-74&_offset=9223372036854775807",  # an offset that would overflow when added to
    "/Location?near=40|-74&_offset=-1",
    "/Slot?schedule=Schedule/1&start=lt2001-01-02",     # a window that ends before it starts
    "/Slot?schedule=Schedule/1&start=ge1960-01-01",     # before 1970
    "/Appointment/$find?location=Location/1&start=12026-01-01",
])
def test_bad_search_input_is_an_operation_outcome(clinic, served, path):
    status, content_type, body = fhir(served.url, "GET", path)
    assert status == 400, (path, status, body)
    assert content_type.startswith(FHIR_JSON)
    outcome = OperationOutcome.model_validate(body)
    assert outcome.issue[0].code == "invalid" and outcome.issue[0].details.coding[0].code == "invalid_input"


def test_an_ihe_find_without_a_place_looks_near_the_patients_registered_address(clinic, served):
    """Issue 42: IHE's $find has no location parameter; with a specialty and dates alone a
    signed-in patient's search looks near their registered address (New York) and says so in an
    OperationOutcome entry of severity information; without a patient it is refused (above)."""
    base = served.url
    token, _ = patient(base, "fhir-placeless")
    start = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=3)
    end = start + datetime.timedelta(days=7)
    status, content_type, body = fhir(base, "GET", f"/Appointment/$find?start={start.date()}&end={end.date()}"
                                      f"&specialty=cardiology&_count=5", token=token)
    found = bundle(status, content_type, body)
    appointments = [entry for entry in body["entry"] if entry["resource"]["resourceType"] == "Appointment"]
    outcomes = [entry for entry in body["entry"] if entry["resource"]["resourceType"] == "OperationOutcome"]
    assert appointments and found.total == len(appointments), body
    assert len(outcomes) == 1 and outcomes[0]["search"]["mode"] == "outcome", body
    issue = OperationOutcome.model_validate(outcomes[0]["resource"]).issue[0]
    assert issue.severity == "information" and "registered address" in issue.diagnostics, issue
    distances = [entry["search"]["extension"][0]["valueDistance"]["value"] for entry in appointments]
    assert distances == sorted(distances) and distances[0] < 50_000, distances
    # A place given: no outcome entry.
    status, _, body = fhir(base, "GET", f"/Appointment/$find?start={start.date()}&specialty=cardiology"
                                        f"&near={MANHATTAN[0]}|{MANHATTAN[1]}&_count=1", token=token)
    assert status == 200 and [e["resource"]["resourceType"] for e in body["entry"]] == ["Appointment"], body


def test_bad_operation_input_is_an_operation_outcome(clinic, served):
    base = served.url
    token, _ = patient(base, "fhir-bad")

    def outcome(expected, *args, **kwargs):
        status, content_type, body = fhir(base, *args, **kwargs)
        assert status == expected, (args, status, body)
        assert content_type.startswith(FHIR_JSON)
        return OperationOutcome.model_validate(body)

    # A body that is not FHIR JSON.
    outcome(415, "POST", "/Appointment/$find", b"start=2026-12-01", headers={"Content-Type": "text/plain"})
    outcome(400, "POST", "/Appointment/$hold", b"{not json", token=token)
    outcome(400, "POST", "/Appointment/$hold", {"resourceType": "Patient"}, token=token)
    # Parameters with parts missing.
    outcome(400, "POST", "/Appointment/$hold", parameters(), token=token)
    outcome(400, "POST", "/Appointment/$book", parameters({"name": "comment", "valueString": "hello"}), token=token)
    outcome(400, "POST", "/Appointment/$hold", parameters({"valueString": "x"}), token=token)
    outcome(400, "POST", "/Appointment/$book", parameters({"name": "appointment-resource", "resource": {
        "resourceType": "Appointment", "id": "1", "status": "waitlist"}}), token=token)
    # A proposed appointment that never was, and a hold of nobody's.
    outcome(404, "POST", "/Appointment/$hold", parameters(
        {"name": "appointment-reference", "valueReference": {"reference": "Appointment/42"}}), token=token)
    outcome(404, "POST", "/Appointment/$book", parameters(
        {"name": "appointment-reference", "valueReference": {"reference": "Appointment/hold-999"}}), token=token)
    # Not signed in, and a token that is nobody's.
    outcome(401, "POST", "/Appointment/$hold", parameters())
    outcome(401, "GET", "/Appointment", token="not-a-token")
    outcome(404, "GET", "/Nothing")
    outcome(405, "DELETE", "/Location/1")
    outcome(404, "GET", "/Location/999999999")
    # Ids that carry an instant no one can write.
    outcome(404, "GET", "/Slot/1-9223372036854775807")
    outcome(404, "GET", "/Appointment/p-1-1-9223372036854775807", token=token)
    outcome(400, "GET", "/Appointment?date=lt1960-01-01", token=token)
    status, _, body = fhir(base, "GET", "/Appointment?date=gt9999-12-31", token=token)
    assert status == 200 and body["total"] == 0
    # In Russian when asked.
    russian = outcome(404, "GET", "/Location/999999999", headers={"Accept-Language": "ru"})
    assert "нет" in russian.issue[0].details.text
