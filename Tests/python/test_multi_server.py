"""Three `clinic serve` processes on one PostgreSQL database (issue 25's multi-server store): the
rules that must hold across servers hold when clients spread over all three at once.

One PostgreSQL 15 for the module (scripts/postgres.sh, in a folder of its own, removed at the
end even on failure), filled once with the default directory (`clinic init`) before any server
starts; three servers on 127.0.0.1, each its own port, sharing the database URL (with
`connect_timeout=2`), PGPASSWORD and the two key files; one aiosmtpd server for their outbox
workers. Every request has a timeout, and every wait polls for its condition with a deadline.

1. 48 clients book one slot through the three servers at once: one 201, 47 `slot_taken`, one
   active appointment in the database (three rounds).
2. Concurrent bookings of different slots for one patient through the three servers never pass
   the active-appointment limit (`booking.max_active`, BookingPolicy.maxActive).
3. Wrong passwords for one login spread over the three servers lock it after the fifth on every
   server (sequential, and the five at once).
4. 50 messages in the outbox with three workers and one SMTP server: 50 e-mails, none twice.
5. A directory imported with the CLI while the servers run is what every server answers from
   once the database's notice has reached it.
6. SIGKILL of one server under a booking load: every 201 a client got is in the database, the
   other two keep booking, and a lost request retried with its Idempotency-Key books once.
7. PostgreSQL stopped under load: 503 `busy` with Retry-After (never a 500 or a hang); started
   again, the same server processes book again.
8. Six claims with one claim code through the three servers at once: one 200, five refusals, and
   the account has the winner's login (issue 42).
9. Twelve holds of one patient at once through the three servers leave one live hold.
10. A hold and a booking of one time at once through two servers: exactly one of them wins.
11. A session ended through one server (signed out, signed out from another device, ended by a
    password change; a staff account disabled by SQL beside the servers) is refused by the
    other two within one second, though each had it kept (issue 44: the servers keep sessions
    and hear their ends from PostgreSQL's notices); a profile changed through one is what the
    others answer with within a second.
12. Six appointments cancelled at once through the three servers with four patients waiting
    (issue 45): each freed time is taken by one server, no time is offered twice, each patient
    gets one offer in the order they joined, and the queue ends empty; an accepted offer books.
13. The servers killed (SIGKILL) while one of them is in the middle of an offer's transaction
    (held there by a test trigger): the freed time stays queued and nothing is left behind;
    started again, they offer it once, held once (issue 45).
"""
import concurrent.futures
import contextlib
import http.client
import json
import os
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from conftest import PASSWORD, STAFF_PASSWORD, Clinic, Postgres, Reply, Server, SMTPServer, call, code_from, text_part, wait_until

SERVERS = 3
# Seconds a request may take before the test calls it a hang.
REQUEST_TIMEOUT = 20
# The default of `booking.max_active` (BookingPolicy.maxActive, Sources/ClinicKit/Scheduling/Schedule.swift).
DEFAULT_MAX_ACTIVE = 5
# Manhattan: the default directory's clinics there have demo departments.
NEAR = (40.7390, -73.9754)
ACTIVE = "('scheduled', 'confirmed', 'arrived', 'in_progress')"
# The active-appointment limit while a load runs (tests 6 and 7 are not about the limit).
ROOMY_LIMIT = 1000


def day(offset):
    return (datetime.now(timezone.utc) + timedelta(days=offset)).strftime("%Y-%m-%d")


def at_once(jobs):
    """Runs the callables in threads of their own released together by a barrier; their results
    in order."""
    barrier = threading.Barrier(len(jobs))

    def released(job):
        barrier.wait(timeout=60)
        return job()

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        return list(pool.map(released, jobs))


def utc_text(value):
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(timezone.utc)


class Patient:
    def __init__(self, login, token, patient_id):
        self.login = login
        self.token = token
        self.id = patient_id
        self.reserved = 0  # bookings that may be active (test 6 and 7 share out the limit)


class Cluster:
    """The PostgreSQL server, the SMTP server, the CLI on the database and the three servers."""

    def __init__(self, folder, postgres, smtp):
        self.folder = folder
        self.postgres = postgres
        self.smtp = smtp
        keys = os.path.join(folder, "keys")
        os.makedirs(keys, mode=0o700, exist_ok=True)
        self.clinic = Clinic(folder, extra_env=dict(
            postgres.env(connect_timeout=2),
            CLINIC_KEY_FILE=os.path.join(keys, "clinic.key"),
            CLINIC_AUDIT_KEY_FILE=os.path.join(keys, "clinic.audit-key"),
            # Every client here is 127.0.0.1: the per-address bucket must not refuse the crowd.
            CLINIC_AUTH_RATE="100000/100000"))
        self.servers = [None] * SERVERS
        self.starts = [0] * SERVERS
        self.patients = []
        self.lock = threading.Lock()
        self._department = None

    def start(self, index):
        self.starts[index] += 1
        log = os.path.join(self.folder, f"server-{index}.log")
        self.servers[index] = Server(self.clinic, self.smtp.env, log=log)

    def ensure_running(self):
        """Starts again any server a test killed (or that died)."""
        for index, server in enumerate(self.servers):
            if server is None or not server.alive:
                self.start(index)

    def stop(self):
        for server in self.servers:
            if server is not None:
                try:
                    server.stop()
                except Exception:
                    server.kill()

    def url(self, index):
        return self.servers[index % SERVERS].url

    def logs(self):
        """The servers' logs without request lines, for failure messages."""
        lines = []
        for index in range(SERVERS):
            path = os.path.join(self.folder, f"server-{index}.log")
            if os.path.exists(path):
                with open(path, errors="replace") as handle:
                    lines += [f"[{index}] {line.rstrip()}" for line in handle if " request " not in line]
        return "\n".join(lines[-40:])

    def sql(self, statement):
        return self.postgres.query(statement)

    # Patients and slots

    def register(self, login, server=0):
        """A patient with a session. A login registered already (by an earlier attempt whose
        answer was lost: a crowd cut short by a failed test) is logged in, not registered twice."""
        reply = call(self.url(server), "POST", "/v1/patients", {
            "login": login, "password": PASSWORD, "name": "Anna", "surname": "Smith", "street": "Main Street",
            "house": "12", "city": "New York", "acceptPrivacy": True})
        assert reply.status == 201 or reply.code == "login_taken", (login, reply, reply.body)
        session = call(self.url(server + 1), "POST", "/v1/sessions", {"login": login, "password": PASSWORD})
        assert session.status == 201, (login, session, session.body)
        return Patient(login, session.body["token"], session.body["patient"]["id"])

    def crowd(self, count=48):
        """`count` registered patients with a session each, registered through every server."""
        with self.lock:
            missing = count - len(self.patients)
            if missing > 0:
                first = len(self.patients)
                with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
                    made = list(pool.map(lambda n: self.register(f"crowd{n:02d}", n), range(first, first + missing)))
                self.patients += made
            return self.patients[:count]

    def take_patient(self, limit):
        """The crowd's patient with the fewest bookings that may be active, below `limit`."""
        with self.lock:
            patient = min(self.patients, key=lambda p: p.reserved)
            assert patient.reserved < limit, "the crowd has no room left under the limit"
            patient.reserved += 1
            return patient

    def give_back(self, patient):
        with self.lock:
            patient.reserved -= 1

    def department(self):
        """A department of the clinic nearest to NEAR, with its clinic and doctors."""
        if self._department is None:
            reply = call(self.url(0), "GET", f"/v1/clinics/nearest?lat={NEAR[0]}&lon={NEAR[1]}&limit=20")
            assert reply.status == 200, reply.body
            for clinic in reply.body:
                departments = call(self.url(0), "GET", f"/v1/clinics/{clinic['id']}/departments").body
                for department in departments:
                    doctors = call(self.url(0), "GET", f"/v1/departments/{department['id']}/doctors").body
                    if doctors:
                        self._department = (clinic["id"], department["id"], [d["id"] for d in doctors])
                        break
                if self._department:
                    break
            assert self._department, "no clinic near Manhattan has a department with doctors"
        return self._department

    def free_slots(self, first_day, days, doctor=None):
        """The free slots of the department from `first_day` days ahead, one per start, by start."""
        _, department, _ = self.department()
        path = f"/v1/departments/{department}/slots?from={day(first_day)}&days={days}"
        if doctor:
            path += f"&doctorId={doctor}"
        reply = call(self.url(0), "GET", path)
        assert reply.status == 200, reply.body
        seen, slots = set(), []
        for slot in reply.body:
            if slot["isAvailable"] and slot["start"] not in seen:
                seen.add(slot["start"])
                slots.append(slot)
        return slots

    def book(self, server, patient, slot, key=None, timeout=REQUEST_TIMEOUT):
        _, department, _ = self.department()
        return call(self.url(server), "POST", "/v1/appointments",
                    {"departmentId": department, "start": slot["start"], "doctorId": slot["doctorId"]},
                    token=patient.token, headers={"Idempotency-Key": key or str(uuid.uuid4())}, timeout=timeout)

    def max_active(self):
        rows = self.sql("SELECT value FROM settings WHERE key = 'booking.max_active'")
        return int(rows[0][0]) if rows else DEFAULT_MAX_ACTIVE

    @contextlib.contextmanager
    def roomy_limit(self):
        """`booking.max_active` raised (the operator's setting) while a load books hundreds of
        slots for the crowd; put back afterwards."""
        before = self.max_active()
        self.clinic.run("admin", "settings", "set", "booking.max_active", str(ROOMY_LIMIT))
        try:
            yield ROOMY_LIMIT
        finally:
            self.clinic.run("admin", "settings", "set", "booking.max_active", str(before))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("multi-server"))
    postgres = Postgres()
    smtp = SMTPServer()
    cluster = None
    try:
        postgres.start()
        smtp.start()
        cluster = Cluster(folder, postgres, smtp)
        # The default directory, once, by one process, before any server opens the database.
        cluster.clinic.run("init", timeout=600)
        for index in range(SERVERS):
            cluster.start(index)
        yield cluster
    finally:
        if cluster is not None:
            cluster.stop()
        smtp.stop()
        postgres.remove()


@pytest.fixture
def servers(cluster):
    cluster.ensure_running()
    return cluster


def assert_in_database(cluster, booked):
    """Every 201 a client got is an active appointment with its patient, doctor and start."""
    if not booked:
        return
    ids = ",".join(str(appointment["id"]) for appointment, _ in booked)
    rows = {int(row[0]): row[1:] for row in cluster.sql(f"""
        SELECT id, client_id, doctor_id, extract(epoch FROM starts_at)::bigint, status
        FROM appointments WHERE id IN ({ids})""")}
    for appointment, patient in booked:
        assert appointment["id"] in rows, f"appointment {appointment['id']} was answered 201 but is not in the database"
        client, doctor, start, status = rows[appointment["id"]]
        assert (int(client), int(doctor), int(start), status) == (
            patient.id, appointment["doctorId"], int(utc_text(appointment["start"]).timestamp()), "scheduled"), appointment


# 1. Double booking

def test_48_clients_book_one_slot_through_three_servers_once(servers):
    cluster = servers
    patients = cluster.crowd(48)
    for round_number, first_day in enumerate((8, 9, 10)):
        slot = cluster.free_slots(first_day, 3)[0]
        replies = at_once([lambda i=i: cluster.book(i % SERVERS, patients[i], slot) for i in range(48)])
        created = [(i, r) for i, r in enumerate(replies) if r.status == 201]
        others = [(r.status, r.code) for r in replies if r.status != 201]
        assert len(created) == 1, (round_number, [r for r in replies if r.status == 201], cluster.logs())
        assert others == [(409, "slot_taken")] * 47, (round_number, sorted(set(others)), cluster.logs())
        winner, reply = created[0]
        patients[winner].reserved += 1
        start = int(utc_text(slot["start"]).timestamp())
        rows = cluster.sql(f"""
            SELECT id, client_id FROM appointments
            WHERE doctor_id = {slot['doctorId']} AND starts_at = to_timestamp({start}) AND status IN {ACTIVE}""")
        assert rows == [(str(reply.body["id"]), str(patients[winner].id))], rows


# 2. The active-appointment limit

def test_one_patients_concurrent_bookings_never_pass_the_limit(servers):
    cluster = servers
    limit = cluster.max_active()
    _, _, doctors = cluster.department()
    for round_number in range(2):
        patient = cluster.register(f"limit{round_number}", round_number)
        # One doctor's slots: they never overlap, so only the limit can refuse one.
        slots = cluster.free_slots(15 + 7 * round_number, 7, doctor=doctors[0])
        attempts = limit + 10
        assert len(slots) >= attempts, len(slots)
        replies = at_once([lambda i=i: cluster.book(i % SERVERS, patient, slots[i]) for i in range(attempts)])
        created = [r for r in replies if r.status == 201]
        refused = [(r.status, r.code) for r in replies if r.status != 201]
        assert len(created) <= limit, f"{len(created)} active appointments, the limit is {limit}"
        assert len(created) == limit, (replies, cluster.logs())
        assert refused == [(422, "limit_reached")] * (attempts - limit), (sorted(set(refused)), cluster.logs())
        (count,), = cluster.sql(f"""
            SELECT count(*) FROM appointments WHERE client_id = {patient.id} AND status IN {ACTIVE} AND starts_at >= now()""")
        assert int(count) == limit


# 3. Log-in throttling

def log_in(cluster, server, login, password):
    return call(cluster.url(server), "POST", "/v1/sessions", {"login": login, "password": password})


def assert_locked(reply):
    assert (reply.status, reply.code) == (429, "account_locked"), (reply, reply.body)
    assert int(reply.headers["retry-after"]) > 0


def assert_locked_everywhere(cluster, login, after):
    """A sixth wrong password (through server `after`) and the right one through every server
    are refused as locked, and the database counted exactly five failures."""
    assert_locked(log_in(cluster, after, login, "wrong password 5"))
    for server in range(SERVERS):
        assert_locked(log_in(cluster, server, login, PASSWORD))
    assert cluster.sql(f"SELECT failures FROM login_attempts WHERE login_key = '{login}'") == [("5",)]


def test_wrong_passwords_over_three_servers_lock_the_login_after_the_fifth(servers):
    cluster = servers
    cluster.register("locked1")
    for attempt in range(5):
        reply = log_in(cluster, attempt, "locked1", f"wrong password {attempt}")
        assert (reply.status, reply.code) == (401, "invalid_credentials"), (attempt + 1, reply, reply.body)
    assert_locked_everywhere(cluster, "locked1", after=5)


def test_five_wrong_passwords_at_once_over_three_servers_lock_the_login(servers):
    cluster = servers
    cluster.register("locked2")
    replies = at_once([lambda i=i: log_in(cluster, i, "locked2", f"wrong password {i}") for i in range(5)])
    assert [(r.status, r.code) for r in replies] == [(401, "invalid_credentials")] * 5, replies
    assert_locked_everywhere(cluster, "locked2", after=2)


# 4. The outbox

def test_fifty_messages_through_three_outbox_workers_arrive_once_each(servers):
    cluster = servers
    mailbox = cluster.smtp.mailbox
    clinic_id, department, _ = cluster.department()
    cluster.clinic.run("admin", "staff", "add", "--login", "desk", "--name", "Sam", "--surname", "Lee", "--role", "receptionist",
                       "--clinic", str(clinic_id), "--password-stdin", stdin=f"{STAFF_PASSWORD}\n{STAFF_PASSWORD}\n")
    staff = call(cluster.url(1), "POST", "/v1/staff/sessions", {"login": "desk", "password": STAFF_PASSWORD})
    assert staff.status == 201, staff.body

    patient = cluster.register("mailee", 2)
    before = len(mailbox.snapshot())
    reply = call(cluster.url(0), "PUT", "/v1/me/email", {"address": "mailee@example.org"}, token=patient.token)
    assert reply.status == 202, reply.body
    code = code_from(mailbox.wait_for(before + 1, timeout=30)[before][2])
    reply = call(cluster.url(1), "POST", "/v1/me/email/confirm", {"code": code}, token=patient.token)
    assert reply.status == 200 and reply.body["email"] == "mailee@example.org", reply.body
    # Staff may write only to a patient with an appointment at their clinic.
    booked = cluster.book(2, patient, cluster.free_slots(30, 3)[0])
    assert booked.status == 201, booked.body

    def note(i):
        return f"Multi-server note {i:02d}."

    def send(i):
        return call(cluster.url(i), "POST", "/v1/staff/messages", {"patientLogin": "mailee", "text": note(i)},
                    token=staff.body["token"])

    replies = at_once([lambda i=i: send(i) for i in range(50)])
    assert [(r.status, r.body) for r in replies] == [(201, {"recipients": 1})] * 50, replies

    def notes():
        return [m for _, _, m in mailbox.snapshot() if "Multi-server note" in text_part(m)]

    def all_marked_sent():
        (sent,), = cluster.sql(f"""
            SELECT count(*) FROM deliveries d JOIN messages m ON m.id = d.message_id
            WHERE d.client_id = {patient.id} AND m.body LIKE '%Multi-server note%' AND d.state = 'sent'""")
        return int(sent) == 50

    wait_until(lambda: len(notes()) >= 50, 90, "50 e-mails")
    wait_until(all_marked_sent, 30, "50 deliveries marked sent")
    # A copy sent twice would come from a second claim of a row: each claim counts an attempt.
    attempts = cluster.sql(f"""
        SELECT d.attempts, count(*) FROM deliveries d JOIN messages m ON m.id = d.message_id
        WHERE d.client_id = {patient.id} AND m.body LIKE '%Multi-server note%' GROUP BY d.attempts""")
    assert attempts == [("1", "50")], attempts
    mails = notes()
    texts = sorted(next(note(i) for i in range(50) if note(i) in text_part(m)) for m in mails)
    assert texts == sorted(note(i) for i in range(50)), [t for t in texts if texts.count(t) > 1]
    assert len({str(m["message-id"]) for m in mails}) == 50
    # Which servers sent them: every worker may have, none is required to; the three ran at once.
    assert all(recipients == ["mailee@example.org"] for _, recipients, m in mailbox.snapshot()
               if "Multi-server note" in text_part(m))


# 5. The directory

DIRECTORY = """external_id,name,address,city,state,lat,lon,category,is_pediatric,is_hospital,time_zone
MULTI-1,Multi Server Prairie Hospital,1 Prairie Road,Hays,KS,{lat},{lon},GENERAL ACUTE CARE,0,1,America/Chicago
"""
PRAIRIE = (38.20, -99.40)


def nearest(cluster, server):
    reply = call(cluster.url(server), "GET", f"/v1/clinics/nearest?lat={PRAIRIE[0]}&lon={PRAIRIE[1]}&limit=1")
    assert reply.status == 200, reply.body
    return reply.body[0]


def test_a_directory_imported_while_the_servers_run_is_what_every_server_answers_from(servers):
    cluster = servers
    # Each server builds its finder (and keeps it) before the import.
    before = [nearest(cluster, server) for server in range(SERVERS)]
    assert all(clinic["name"] != "Multi Server Prairie Hospital" and clinic["distanceMeters"] > 1000 for clinic in before), before
    path = os.path.join(cluster.folder, "prairie.csv")
    with open(path, "w") as handle:
        handle.write(DIRECTORY.format(lat=PRAIRIE[0], lon=PRAIRIE[1]))
    report = cluster.clinic.json("admin", "import-clinics", path, "--demo")
    assert (report["inserted"], report["updated"]) == (1, 0), report
    # The import committed before the command returned: each server sees it as soon as
    # PostgreSQL's notice of the change has arrived (a server keeps a search's facts until then,
    # issue 44) and it has rebuilt its finder (seconds for a debug build's 7,146 clinics).
    for server in range(SERVERS):
        clinic = wait_until(lambda: (lambda found: found if found["name"] == "Multi Server Prairie Hospital" else None)(
            nearest(cluster, server)), 20, f"the imported clinic on server {server}", interval=0.01)
        assert clinic["distanceMeters"] < 50, (server, clinic)
        departments = call(cluster.url(server), "GET", f"/v1/clinics/{clinic['id']}/departments")
        assert departments.status == 200 and departments.body, departments.body
    # A second import moves it; every server follows again.
    with open(path, "w") as handle:
        handle.write(DIRECTORY.format(lat=PRAIRIE[0] + 1, lon=PRAIRIE[1]))
    assert cluster.clinic.json("admin", "import-clinics", path)["updated"] == 1
    for server in range(SERVERS):
        wait_until(lambda: (lambda found: found["name"] != "Multi Server Prairie Hospital" or found["distanceMeters"] > 100_000)(
            nearest(cluster, server)), 20, f"the moved clinic on server {server}", interval=0.01)


# 8-10. Claim codes and holds: rules the database holds (issue 42)

def staff_token(cluster, login="multi-desk"):
    """A receptionist of the department's clinic, signed in through the API."""
    clinic, _, _ = cluster.department()
    exists = cluster.sql(f"SELECT count(*) FROM staff_accounts WHERE login = '{login}'")
    if int(exists[0][0]) == 0:
        cluster.clinic.run("admin", "staff", "add", "--login", login, "--name", "Sam", "--surname", "Lee", "--role",
                           "receptionist", "--clinic", str(clinic), "--password-stdin",
                           stdin=f"{STAFF_PASSWORD}\n{STAFF_PASSWORD}\n")
    reply = call(cluster.url(0), "POST", "/v1/staff/sessions", {"login": login, "password": STAFF_PASSWORD})
    assert reply.status == 201, reply.body
    return reply.body["token"]


def test_one_claim_code_used_at_once_through_three_servers_claims_once(servers):
    cluster = servers
    token = staff_token(cluster)
    for round_number in range(4):
        made = call(cluster.url(0), "POST", "/v1/staff/patients", {
            "name": "Ivan", "surname": "Kuzmin", "birthDate": "1980-01-31", "phone": f"775-555-01{round_number:02d}"},
            token=token)
        assert made.status == 201, made.body
        given = call(cluster.url(1), "POST", f"/v1/staff/patients/{made.body['id']}/claim-code", token=token)
        assert given.status == 201, given.body
        logins = [f"claim{round_number}x{i}" for i in range(6)]
        replies = at_once([lambda i=i: call(cluster.url(i), "POST", "/v1/patients/claim", {
            "code": given.body["code"], "login": logins[i], "password": PASSWORD}) for i in range(6)])
        won = [i for i, reply in enumerate(replies) if reply.status == 200]
        assert len(won) == 1, (round_number, replies, cluster.logs())
        assert sorted((r.status, r.code) for r in replies if r.status != 200) == [(400, "invalid_input")] * 5, replies
        (login,), = cluster.sql(f"SELECT login FROM clients WHERE id = {made.body['id']}")
        assert login == logins[won[0]] == replies[won[0]].body["patient"]["login"], (login, won)


def fhir_hold(cluster, server, token, slot):
    _, department, _ = cluster.department()
    proposal = f"p-{department}-{slot['doctorId']}-{int(utc_text(slot['start']).timestamp())}"
    return call(cluster.url(server), "POST", "/fhir/r4/Appointment/$hold", {"resourceType": "Parameters", "parameter": [
        {"name": "appointment-reference", "valueReference": {"reference": f"Appointment/{proposal}"}}]}, token=token)


def live_holds(cluster, patient):
    (count,), = cluster.sql(f"SELECT count(*) FROM slot_holds WHERE client_id = {patient.id} AND expires_at > now()")
    return int(count)


def test_one_patients_holds_at_once_through_three_servers_leave_one_hold(servers):
    cluster = servers
    _, _, doctors = cluster.department()
    patient = cluster.register("holder")
    for round_number in range(3):
        slots = cluster.free_slots(45 + 3 * round_number, 3, doctor=doctors[0])[:12]
        assert len(slots) == 12, len(slots)
        replies = at_once([lambda i=i: fhir_hold(cluster, i % SERVERS, patient.token, slots[i]) for i in range(12)])
        # Each hold releases the patient's earlier one: all may succeed, one stays.
        assert all(reply.status in (200, 409) for reply in replies), (replies, cluster.logs())
        assert any(reply.status == 200 for reply in replies), replies
        assert live_holds(cluster, patient) == 1, (round_number, replies)


def test_a_hold_and_a_booking_of_one_time_at_once_exclude_each_other(servers):
    cluster = servers
    _, _, doctors = cluster.department()
    holder = cluster.register("holder2")
    cluster.crowd(48)
    slots = cluster.free_slots(55, 14, doctor=doctors[0])
    assert len(slots) >= 24, len(slots)
    for round_number in range(8):
        slot = slots[3 * round_number]
        booker = cluster.take_patient(cluster.max_active())
        held, booked = at_once([lambda: fhir_hold(cluster, 0, holder.token, slot),
                                lambda: cluster.book(1, booker, slot)])
        wins = [held.status == 200, booked.status == 201]
        assert wins.count(True) == 1, (round_number, held, held.body, booked, booked.body, cluster.logs())
        assert (held.status, booked.status, booked.code) in ((200, 409, "slot_taken"), (409, 201, None)), (held, booked)
        if booked.status != 201:
            cluster.give_back(booker)
        start = int(utc_text(slot["start"]).timestamp())
        (appointments,), = cluster.sql(f"""
            SELECT count(*) FROM appointments WHERE doctor_id = {slot['doctorId']} AND status IN {ACTIVE}
            AND starts_at = to_timestamp({start})""")
        (holds,), = cluster.sql(f"""
            SELECT count(*) FROM slot_holds WHERE doctor_id = {slot['doctorId']} AND expires_at > now()
            AND starts_at = to_timestamp({start})""")
        assert int(appointments) + int(holds) == 1, (round_number, appointments, holds)


# 6. A server killed under load

class Load:
    """Booking threads, `per_server` for each server, each booking the next free slot for the
    crowd's patient with the most room; every outcome recorded."""

    def __init__(self, cluster, slots, per_server=3, limit=ROOMY_LIMIT, booking_timeout=REQUEST_TIMEOUT, pause=0.05):
        self.cluster = cluster
        self.slots = list(slots)
        self.limit = limit
        self.timeout = booking_timeout
        self.pause = pause
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.booked = []          # (appointment, patient, server, reply)
        self.replies = []         # (server, reply)
        self.lost = []            # (server, patient, slot, key, error, sent)
        self.in_flight = [0] * SERVERS
        self.errors = []          # a client thread's own failure
        self.threads = [threading.Thread(target=self.run, args=(index % SERVERS,), daemon=True)
                        for index in range(per_server * SERVERS)]

    def start(self):
        for thread in self.threads:
            thread.start()
        return self

    def finish(self):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=REQUEST_TIMEOUT + 10)
        assert not any(thread.is_alive() for thread in self.threads), "a client is still waiting for an answer"
        assert not self.errors, self.errors

    def count(self, server=None, since=0.0, status=201):
        with self.lock:
            return sum(1 for s, r in self.replies if (server is None or s == server) and r.sent >= since and r.status == status)

    def run(self, server):
        try:
            self.book_until_stopped(server)
        except Exception as error:  # noqa: BLE001 - reported by finish()
            with self.lock:
                self.errors.append(repr(error))

    def book_until_stopped(self, server):
        while not self.stop.is_set():
            with self.lock:
                if not self.slots:
                    return
                slot = self.slots.pop(0)
                self.in_flight[server] += 1
            patient = self.cluster.take_patient(self.limit)
            key = str(uuid.uuid4())
            sent = time.monotonic()
            try:
                reply = self.cluster.book(server, patient, slot, key=key, timeout=self.timeout)
            except (OSError, http.client.HTTPException) as error:
                with self.lock:
                    self.in_flight[server] -= 1
                    self.lost.append((server, patient, slot, key, error, sent))
                if isinstance(error, (ConnectionRefusedError,)):
                    return  # the server is gone: this client stops
                continue
            with self.lock:
                self.in_flight[server] -= 1
                self.replies.append((server, reply))
                if reply.status == 201:
                    self.booked.append((reply.body, patient, server, reply))
            if reply.status != 201:
                self.cluster.give_back(patient)
            self.stop.wait(self.pause)

    def slots_left(self):
        with self.lock:
            return len(self.slots)


def test_a_server_killed_under_load_loses_no_answered_booking(servers):
    cluster = servers
    cluster.crowd(48)
    slots = cluster.free_slots(40, 28)
    assert len(slots) > 300, len(slots)
    victim = 0
    with cluster.roomy_limit():
        load = Load(cluster, slots).start()
        try:
            wait_until(lambda: load.count() >= 12 and load.in_flight[victim] > 0, 60, "bookings in flight on the victim")
            cluster.servers[victim].kill()
            killed = time.monotonic()
            survivors = [s for s in range(SERVERS) if s != victim]
            wait_until(lambda: all(load.count(s, since=killed) >= 5 for s in survivors), 60,
                       f"bookings through the other servers after the kill ({load.slots_left()} slots left)")
        finally:
            load.finish()
    print(f"kill: {len(load.booked)} booked, {len(load.lost)} without an answer, {len(load.slots)} slots left")
    assert cluster.servers[victim].process.returncode == -9
    statuses = sorted({(r.status, r.code) for _, r in load.replies})
    assert statuses == [(201, None)], (statuses, cluster.logs())
    assert all(server == victim for server, *_ in load.lost), [(s, e) for s, _, _, _, e, _ in load.lost]
    booked = [(appointment, patient) for appointment, patient, _, _ in load.booked]
    assert_in_database(cluster, booked)
    for server in survivors:
        assert call(cluster.url(server), "GET", "/healthz").status == 200
        assert call(cluster.url(server), "GET", "/readyz").status == 200
    # A client that got no answer retries on another server with the same key: the booking is
    # made once, whether or not the killed server had committed it.
    with cluster.roomy_limit():
        retries = [cluster.book(survivors[index % 2], patient, slot, key=key)
                   for index, (_, patient, slot, key, _, _) in enumerate(load.lost)]
    print(f"retried {len(retries)}, replayed {sum(r.headers.get('idempotent-replayed') == 'true' for r in retries)}")
    for (_, patient, slot, _, _, _), reply in zip(load.lost, retries):
        assert reply.status == 201, (reply, reply.body)
        start = int(utc_text(slot["start"]).timestamp())
        rows = cluster.sql(f"""
            SELECT id, client_id FROM appointments
            WHERE doctor_id = {slot['doctorId']} AND starts_at = to_timestamp({start}) AND status IN {ACTIVE}""")
        assert rows == [(str(reply.body["id"]), str(patient.id))], rows


# 7. PostgreSQL stopped under load

def test_postgres_stopped_under_load_is_busy_then_the_servers_recover(servers):
    cluster = servers
    cluster.crowd(48)
    processes = [server.process.pid for server in cluster.servers]
    slots = cluster.free_slots(70, 28)
    load = Load(cluster, slots, per_server=2)
    reader_replies = []
    reader_lock = threading.Lock()

    def read(server):
        # Reads beside the bookings: a patient's appointments (a session lookup and a query).
        patient = cluster.patients[server]
        while not load.stop.is_set():
            try:
                reply = call(cluster.url(server), "GET", "/v1/appointments?scope=all", token=patient.token)
            except (OSError, http.client.HTTPException) as error:
                reply = error
            with reader_lock:
                reader_replies.append((server, reply))
            load.stop.wait(0.05)

    readers = [threading.Thread(target=read, args=(s,), daemon=True) for s in range(SERVERS)]
    with cluster.roomy_limit():
        load.start()
        for reader in readers:
            reader.start()
        try:
            wait_until(lambda: load.count() >= 6, 60, "bookings before the stop")
            # As a crash: no backend says goodbye; the start after it recovers from the WAL.
            cluster.postgres.down("immediate")
            down = time.monotonic()
            # While it is down: every server answers, with 503 busy.
            wait_until(lambda: all(load.count(s, since=down + 0.5, status=503) >= 3 for s in range(SERVERS)), 60,
                       "503s from every server while PostgreSQL is down")
            up_started = time.monotonic()
            cluster.postgres.up()
            up = time.monotonic()
            wait_until(lambda: all(load.count(s, since=up) >= 2 for s in range(SERVERS)), 60,
                       f"bookings through every server after PostgreSQL came back ({load.slots_left()} slots left)")
        finally:
            load.finish()
            for reader in readers:
                reader.join(timeout=REQUEST_TIMEOUT + 10)
            if not os.path.exists(os.path.join(cluster.postgres.folder, "data", "postmaster.pid")):
                cluster.postgres.up()  # for what follows, whatever failed
    print(f"outage: {len(load.booked)} booked, {load.count(status=503)} busy, {len(reader_replies)} reads,"
          f" {up - down:.1f} s down, {len(load.slots)} slots left")
    assert [server.process.pid for server in cluster.servers] == processes and all(s.alive for s in cluster.servers)
    assert not load.lost, [(s, e) for s, _, _, _, e, _ in load.lost]
    with reader_lock:
        reads = list(reader_replies)
    assert all(isinstance(r, Reply) for _, r in reads), [r for _, r in reads if not isinstance(r, Reply)]
    everything = [r for _, r in load.replies] + [r for _, r in reads]
    assert max(r.seconds for r in everything) < 15, max(r.seconds for r in everything)
    unexpected = sorted({(r.status, r.code) for r in everything} - {(201, None), (200, None), (503, "busy")})
    assert not unexpected, (unexpected, cluster.logs())
    for reply in everything:
        if reply.status == 503:
            assert reply.headers.get("retry-after", "").isdigit(), reply.headers
    # Sent while it was down (after the stop had taken effect, before the start began): all busy.
    during = [r for r in everything if down + 0.5 <= r.sent and r.sent + r.seconds <= up_started]
    assert during and all((r.status, r.code) == (503, "busy") for r in during), sorted({(r.status, r.code) for r in during})
    assert_in_database(cluster, [(appointment, patient) for appointment, patient, _, _ in load.booked])


# 11. Kept sessions end everywhere (issue 44)

REVOCATION_LIMIT = 1.0


def refused_everywhere_within(cluster, path, token, changed, accepted=None, what="a session ended elsewhere"):
    """Polls servers 1 and 2 with `token` from `changed` (time.monotonic() when the change's answer
    arrived) until each refuses it (401), or answers what `accepted` accepts; the seconds each took."""
    seconds = []
    for server in (1, 2):
        def done():
            reply = call(cluster.url(server), "GET", path, token=token, timeout=REQUEST_TIMEOUT)
            return reply.status == 401 if accepted is None else (reply.status == 200 and accepted(reply.body))
        wait_until(done, 5, f"{what} on server {server}", interval=0.01)
        seconds.append(time.monotonic() - changed)
    print(f"{what}: seen by servers 1 and 2 after {seconds[0] * 1000:.0f} and {seconds[1] * 1000:.0f} ms")
    assert max(seconds) <= REVOCATION_LIMIT, (what, seconds)
    return seconds


def kept_everywhere(cluster, path, token):
    """The token's look-up made (and kept) by every server."""
    for server in range(SERVERS):
        reply = call(cluster.url(server), "GET", path, token=token)
        assert reply.status == 200, (server, reply.body)


def sign_in(cluster, login, password, server=0):
    reply = call(cluster.url(server), "POST", "/v1/sessions", {"login": login, "password": password})
    assert reply.status == 201, reply.body
    return reply.body["token"]


def test_a_session_ended_through_one_server_is_refused_by_the_others_within_a_second(servers):
    cluster = servers
    patient = cluster.register("revoked")

    # Signed out.
    kept_everywhere(cluster, "/v1/me", patient.token)
    reply = call(cluster.url(0), "DELETE", "/v1/sessions/current", token=patient.token)
    assert reply.status == 204, reply.body
    refused_everywhere_within(cluster, "/v1/me", patient.token, time.monotonic(), what="signed out")

    # Signed out from another device, then "sign out everywhere else".
    phone, laptop = sign_in(cluster, "revoked", PASSWORD), sign_in(cluster, "revoked", PASSWORD)
    kept_everywhere(cluster, "/v1/me", phone)
    listed = call(cluster.url(0), "GET", "/v1/sessions", token=laptop)
    others = [session["id"] for session in listed.body if not session["current"]]
    assert len(others) == 1, listed.body
    assert call(cluster.url(0), "DELETE", f"/v1/sessions/{others[0]}", token=laptop).status == 204
    refused_everywhere_within(cluster, "/v1/me", phone, time.monotonic(), what="signed out from another device")
    phone = sign_in(cluster, "revoked", PASSWORD)
    kept_everywhere(cluster, "/v1/me", phone)
    assert call(cluster.url(0), "DELETE", "/v1/sessions/others", token=laptop).status == 204
    refused_everywhere_within(cluster, "/v1/me", phone, time.monotonic(), what="signed out everywhere else")

    # Ended by a password change made on another device.
    phone = sign_in(cluster, "revoked", PASSWORD)
    kept_everywhere(cluster, "/v1/me", phone)
    kept_everywhere(cluster, "/v1/me", laptop)
    reply = call(cluster.url(0), "POST", "/v1/me/password", {"oldPassword": PASSWORD, "newPassword": PASSWORD + " 2"},
                 token=laptop)
    assert reply.status == 200 and reply.body["changed"], reply.body
    refused_everywhere_within(cluster, "/v1/me", phone, time.monotonic(), what="ended by a password change")
    for server in range(SERVERS):
        assert call(cluster.url(server), "GET", "/v1/me", token=laptop).status == 200, "the device that changed it stays"

    # A profile changed through one server is what the others answer with.
    reply = call(cluster.url(0), "PATCH", "/v1/me", {"name": "Anya"}, token=laptop)
    assert reply.status == 200, reply.body
    refused_everywhere_within(cluster, "/v1/me", laptop, time.monotonic(), accepted=lambda me: me["name"] == "Anya",
                              what="a new name")

    # A staff account disabled beside the servers (SQL by hand: the database announces it).
    token = staff_token(cluster, login="revoked-desk")
    kept_everywhere(cluster, "/v1/staff/me", token)
    cluster.sql("UPDATE staff_accounts SET is_active = false WHERE login = 'revoked-desk'")
    refused_everywhere_within(cluster, "/v1/staff/me", token, time.monotonic(), what="a staff account disabled")


# 12. The waitlist across servers

def test_concurrent_cancellations_through_three_servers_are_each_offered_once_in_order(servers):
    """Six appointments of one doctor cancelled at once through the three servers, with four
    patients waiting for that doctor's day (issue 45): every server's worker works the same
    queue, yet each freed time is taken by one of them, no time is offered twice, each waiting
    patient gets one offer (one open offer per entry), in the order they joined, and the queue
    ends empty. An accepted offer books; a held time is refused to anyone else."""
    cluster = servers
    _, department, doctors = cluster.department()
    doctor = doctors[0]
    # The first working day from 70 days ahead (the slots of `from=` are that day in the clinic's time).
    offset = next(offset for offset in range(70, 78) if len(cluster.free_slots(offset, 1, doctor=doctor)) >= 6)
    slots = cluster.free_slots(offset, 1, doctor=doctor)[:6]
    bookers = [cluster.register(f"wl-booker{i}", i) for i in range(6)]
    waiters = [cluster.register(f"wl-wait{i}", i) for i in range(4)]
    booked = [cluster.book(i % SERVERS, bookers[i], slots[i]) for i in range(6)]
    assert all(reply.status == 201 for reply in booked), booked
    window = {"departmentId": department, "doctorId": doctor, "from": day(offset), "to": day(offset)}
    entries = []
    for i, waiter in enumerate(waiters):
        reply = call(cluster.url(i), "POST", "/v1/waitlist", window, token=waiter.token)
        assert reply.status == 201, reply.body
        entries.append(reply.body["id"])
    try:
        cancelled = at_once([lambda i=i: call(cluster.url(i), "POST", f"/v1/appointments/{booked[i].body['id']}/cancel",
                                              token=bookers[i].token) for i in range(6)])
        assert all(reply.status == 200 for reply in cancelled), cancelled

        def settled():
            (queued,), = cluster.sql("SELECT count(*) FROM waitlist_freed")
            offers = cluster.sql(f"""
                SELECT o.id, o.entry_id, extract(epoch FROM o.starts_at)::bigint FROM waitlist_offers o
                WHERE o.entry_id IN ({','.join(map(str, entries))}) ORDER BY o.id""")
            return offers if int(queued) == 0 and len(offers) == 4 else None
        offers = wait_until(settled, 15, "four offers and an empty queue")
        # One offer per waiting patient, in the order they joined; four different times.
        assert [int(entry) for _, entry, _ in offers] == entries, (offers, entries)
        starts = [int(start) for _, _, start in offers]
        assert len(set(starts)) == 4 and set(starts) <= {int(utc_text(slot["start"]).timestamp()) for slot in slots}, offers
        (doubled,), = cluster.sql("""
            SELECT count(*) FROM (SELECT doctor_id, starts_at FROM waitlist_offers WHERE status = 'open'
                                  GROUP BY doctor_id, starts_at HAVING count(*) > 1) twice""")
        assert int(doubled) == 0
        # Each patient sees their offer through any server; a held time is nobody else's.
        for i, waiter in enumerate(waiters):
            mine = call(cluster.url(i + 1), "GET", "/v1/waitlist/offers", token=waiter.token).body["items"]
            assert [offer["entryId"] for offer in mine] == [entries[i]], mine
        held = next(slot for slot in slots if int(utc_text(slot["start"]).timestamp()) == starts[1])
        assert cluster.book(2, bookers[0], held).code == "slot_taken"
        accepted = call(cluster.url(2), "POST", f"/v1/waitlist/offers/{offers[0][0]}/accept", token=waiters[0].token,
                        headers={"Idempotency-Key": str(uuid.uuid4())})
        assert accepted.status == 201 and accepted.body["start"] == next(
            slot["start"] for slot in slots if int(utc_text(slot["start"]).timestamp()) == starts[0]), accepted.body
        (active,), = cluster.sql(f"""
            SELECT count(*) FROM appointments WHERE doctor_id = {doctor} AND status IN {ACTIVE}
            AND starts_at = to_timestamp({starts[0]})""")
        assert int(active) == 1
    finally:
        for entry, waiter in zip(entries, waiters):
            call(cluster.url(0), "DELETE", f"/v1/waitlist/{entry}", token=waiter.token)


def test_a_server_killed_in_the_middle_of_an_offer_leaves_the_time_queued_and_it_is_offered_once(servers):
    """Issue 45: a freed time is taken from the queue in the transaction that offers it, so a
    server that dies in the middle of that transaction takes nothing with it. A trigger made
    for this test holds every offer's INSERT (while a flag row exists) inside the offering
    transaction; the servers are killed (SIGKILL) while one of them is there; PostgreSQL rolls
    that transaction back when its client is gone; the servers started again offer the time
    once, held once."""
    cluster = servers
    _, department, doctors = cluster.department()
    doctor = doctors[-1]
    offset = next(offset for offset in range(80, 90) if cluster.free_slots(offset, 1, doctor=doctor))
    slot = cluster.free_slots(offset, 1, doctor=doctor)[0]
    booker, waiter = cluster.register("wl-kill-booker", 0), cluster.register("wl-kill-waiter", 1)
    booked = cluster.book(0, booker, slot)
    assert booked.status == 201, booked.body
    joined = call(cluster.url(1), "POST", "/v1/waitlist",
                  {"departmentId": department, "doctorId": doctor, "from": day(offset), "to": day(offset)}, token=waiter.token)
    assert joined.status == 201, joined.body
    entry = joined.body["id"]
    cluster.sql("""
        CREATE TABLE test_hold_offers (held boolean);
        INSERT INTO test_hold_offers VALUES (true);
        CREATE FUNCTION test_hold_offer() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            WHILE EXISTS (SELECT 1 FROM test_hold_offers) LOOP PERFORM pg_sleep(0.1); END LOOP;
            RETURN NEW;
        END $$;
        CREATE TRIGGER test_hold_offer BEFORE INSERT ON waitlist_offers FOR EACH ROW EXECUTE FUNCTION test_hold_offer();""")
    try:
        cancelled = call(cluster.url(2), "POST", f"/v1/appointments/{booked.body['id']}/cancel", token=booker.token)
        assert cancelled.status == 200, cancelled.body
        sleeping = "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%waitlist_offers%'"
        wait_until(lambda: cluster.sql(sleeping)[0][0] != "0", 20, "a server in the middle of an offer")
        for server in cluster.servers:
            server.kill()
        cluster.sql("DELETE FROM test_hold_offers")
        # The held statement ends, finds its client gone, and its transaction is rolled back.
        busy = "SELECT count(*) FROM pg_stat_activity WHERE datname = 'clinic_test' AND pid <> pg_backend_pid() AND state <> 'idle'"
        wait_until(lambda: cluster.sql(busy)[0][0] == "0", 20, "the dead servers' transactions rolled back")
        (queued,), = cluster.sql("SELECT count(*) FROM waitlist_freed")
        (offered,), = cluster.sql(f"SELECT count(*) FROM waitlist_offers WHERE entry_id = {entry}")
        assert (queued, offered) == ("1", "0"), "the time is queued still, and no offer was left behind"

        cluster.ensure_running()
        start = int(utc_text(slot["start"]).timestamp())

        def offered_once():
            rows = cluster.sql(f"SELECT id, status FROM waitlist_offers WHERE entry_id = {entry}")
            (left,), = cluster.sql("SELECT count(*) FROM waitlist_freed")
            return rows if rows and left == "0" else None
        (offer,) = wait_until(offered_once, 30, "the time offered by a server started again")
        assert offer[1] == "open"
        (holds,), = cluster.sql(f"""SELECT count(*) FROM slot_holds WHERE for_offer AND doctor_id = {doctor}
                                    AND starts_at = to_timestamp({start})""")
        assert holds == "1"
        mine = call(cluster.url(0), "GET", "/v1/waitlist/offers", token=waiter.token).body["items"]
        assert [item["start"] for item in mine] == [slot["start"]], mine
    finally:
        cluster.sql("DROP TRIGGER IF EXISTS test_hold_offer ON waitlist_offers; DROP FUNCTION IF EXISTS test_hold_offer();"
                    " DROP TABLE IF EXISTS test_hold_offers")
        cluster.ensure_running()
        call(cluster.url(0), "DELETE", f"/v1/waitlist/{entry}", token=waiter.token)
