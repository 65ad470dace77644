"""The highly available layout (issue 26, docs/DEPLOY.md) under load: scripts/cluster.sh brings
up etcd, two Patroni-managed PostgreSQL 15 nodes with synchronous replication, HAProxy and two
`clinic serve`; clients book continuously through the HTTP balancer, as an app would (distinct
slots, an Idempotency-Key per booking, the same request again after a 502, 503 or 504 — each
`busy` with Retry-After, from a server or from the balancer — or a lost connection), while the
test kills parts of it by their pids:

1. the leader's postmaster (SIGKILL): the replica is promoted, bookings resume, and the old
   leader rejoins as a replica (Patroni keeps running there);
2. the leader's Patroni and postmaster together: the same, and the old leader, started again,
   rejoins (pg_rewind);
3. a planned switchover (`patronictl switchover`): no booking fails after the client's retries;
4. a clinic server (SIGKILL): the other one takes the traffic.

After each: every booking answered 201 is in the new leader's database, no slot is booked
twice, the database holds exactly the appointments the clients were told of (no Idempotency-Key
made two), and `clinic admin check` verifies the audit chain. The time without a successful
booking around each fault is printed. Every wait has a deadline; the cluster is taken down by
its pids at the end, also on failure."""
import http.client
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from conftest import PASSWORD, ROOT, call, wait_until

CLUSTER_SH = os.path.join(ROOT, "scripts", "cluster.sh")
PG_BIN = os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin")
REQUEST_TIMEOUT = 20
# A booking's retries end after this long (a client gives up; the test then fails).
BOOKING_DEADLINE = 120
THREADS = 6
# A small directory: two clinics in Manhattan, each with the demo departments.
DIRECTORY = """external_id,name,address,city,state,zip,lat,lon,category,is_pediatric,is_hospital
NY1,Bellevue Hospital Center,462 First Avenue,New York,NY,10016,40.7393,-73.9754,GENERAL ACUTE CARE,0,1
NY2,NYU Hospitals Center,550 First Avenue,New York,NY,10016,40.7420,-73.9739,GENERAL ACUTE CARE,0,1
"""


def cluster_sh(*args, env=None, timeout=300):
    result = subprocess.run([CLUSTER_SH, *args], capture_output=True, text=True, timeout=timeout,
                            env=dict(os.environ, **(env or {})))
    if result.returncode != 0:
        raise AssertionError(f"cluster.sh {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result.stdout


class Cluster:
    def __init__(self, folder):
        self.folder = folder
        self.env = {"CLUSTER_DIR": folder}
        # `up` wants an empty folder: the directory file lies beside it.
        directory = folder + ".csv"
        with open(directory, "w") as handle:
            handle.write(DIRECTORY)
        try:
            # Every client reaches the servers from 127.0.0.1 (through HAProxy): the per-address
            # log-in bucket must not refuse the test's patients.
            line = cluster_sh("up", env=dict(self.env, CLUSTER_CLINICS=directory, CLINIC_AUTH_RATE="100000/100000"),
                              timeout=600).strip().splitlines()[-1]
        finally:
            os.remove(directory)
        self.info = json.loads(line)
        self.http = self.info["http"]
        self.ports = dict(line.strip().split("=", 1) for line in open(os.path.join(folder, "ports")) if "=" in line)

    def status(self):
        return json.loads(cluster_sh("status", "--json", env=self.env, timeout=60))

    def down(self):
        cluster_sh("down", env=self.env, timeout=180)

    def sql(self, statement):
        """Rows of one statement on the leader (through the `primary` listener), as text tuples."""
        result = subprocess.run([os.path.join(PG_BIN, "psql"), "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1",
                                 "-h", "127.0.0.1", "-p", self.ports["primary_port"], "-U", "clinic", "-d", "clinic",
                                 "-c", statement], capture_output=True, text=True, timeout=60,
                                env=dict(os.environ, PGPASSWORD=self.ports["clinic_password"]))
        if result.returncode != 0:
            raise AssertionError(f"psql: {result.stderr}")
        return [tuple(row.split("\t")) for row in result.stdout.splitlines() if row]

    def clinic(self, *args):
        env = dict(os.environ,
                   CLINIC_DB=f"postgresql://clinic@127.0.0.1:{self.ports['primary_port']}/clinic?sslmode=disable&connect_timeout=5",
                   PGPASSWORD=self.ports["clinic_password"],
                   CLINIC_KEY_FILE=os.path.join(self.folder, "keys", "clinic.key"),
                   CLINIC_AUDIT_KEY_FILE=os.path.join(self.folder, "keys", "clinic.audit-key"),
                   CLINIC_SESSION=os.path.join(self.folder, "test-session"), HOME=self.folder)
        binary = os.environ.get("CLINIC_BIN", os.path.join(ROOT, ".build", "debug", "clinic"))
        return subprocess.run([binary, *args], capture_output=True, text=True, env=env, timeout=300)

    def healthy(self):
        """A leader, the other member streaming as its synchronous replica, both servers up."""
        status = self.status()
        roles = sorted(member["role"] for member in status["members"])
        running = all(member["state"] in ("running", "streaming") for member in status["members"])
        return status if roles == ["leader", "sync_standby"] and running and all(
            server["pid"] for server in status["servers"]) else None


class Booker:
    """One client thread: its own patient, one doctor's slots (so the patient's bookings never
    overlap), each booking retried with its Idempotency-Key until it has a final answer."""

    def __init__(self, cluster, login, department, doctor):
        self.cluster = cluster
        self.department = department
        self.doctor = doctor
        registered = call(cluster.http, "POST", "/v1/patients", {
            "login": login, "password": PASSWORD, "name": "Anna", "surname": "Smith", "street": "Main Street",
            "house": "12", "city": "New York", "acceptPrivacy": True})
        assert registered.status == 201, registered.body
        session = call(cluster.http, "POST", "/v1/sessions", {"login": login, "password": PASSWORD})
        assert session.status == 201, session.body
        self.token = session.body["token"]
        self.patient = session.body["patient"]["id"]
        self.slots = []
        self.next_day = 2
        self.booked = []    # (appointment, key, finished at)
        self.failed = []    # (slot, last answer)
        self.hung = []      # requests without an answer within REQUEST_TIMEOUT
        self.retried = 0

    def _more_slots(self):
        first = (datetime.now(timezone.utc) + timedelta(days=self.next_day)).strftime("%Y-%m-%d")
        self.next_day += 14
        for _ in range(60):
            try:
                reply = call(self.cluster.http, "GET",
                             f"/v1/departments/{self.department}/slots?from={first}&days=14&doctorId={self.doctor}")
            except (OSError, http.client.HTTPException):
                reply = None
            if reply is not None and reply.status == 200:
                self.slots += [slot for slot in reply.body if slot["isAvailable"]]
                return
            time.sleep(0.5)
        raise AssertionError(f"no slots for doctor {self.doctor}: {reply}")

    def book_one(self):
        if not self.slots:
            self._more_slots()
        slot = self.slots.pop(0)
        key = str(uuid.uuid4())
        request = {"departmentId": self.department, "start": slot["start"], "doctorId": slot["doctorId"]}
        deadline = time.monotonic() + BOOKING_DEADLINE
        last = None
        while time.monotonic() < deadline:
            try:
                reply = call(self.cluster.http, "POST", "/v1/appointments", request, token=self.token,
                             headers={"Idempotency-Key": key}, timeout=REQUEST_TIMEOUT)
                status, headers, body = reply.status, reply.headers, reply.body
            except TimeoutError as error:
                # No answer within REQUEST_TIMEOUT: a hang, which a fault must never cause.
                self.hung.append((slot["start"], repr(error)))
                last = repr(error)
                continue
            except (OSError, http.client.HTTPException) as error:
                last = repr(error)
                self.retried += 1
                time.sleep(0.5)
                continue
            if status == 201:
                self.booked.append((body, key, time.monotonic()))
                return
            last = (status, body)
            if status in (502, 503, 504):
                error = body.get("error") if isinstance(body, dict) else None
                if not headers.get("retry-after") or not isinstance(error, dict) or error.get("code") != "busy":
                    break  # every "try again" must say so, in the API's shape (recorded as a failure below)
                self.retried += 1
                time.sleep(min(float(headers.get("retry-after", "1") or 1), 1.0))
                continue
            break
        self.failed.append((slot, last))


class Load:
    """THREADS bookers booking until stopped."""

    def __init__(self, bookers):
        self.bookers = bookers
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(booker,), daemon=True) for booker in bookers]
        self.errors = []

    def _run(self, booker):
        try:
            while not self.stopping.is_set():
                booker.book_one()
        except Exception as error:  # the test reads it after stop()
            self.errors.append(repr(error))

    def __enter__(self):
        for booker in self.bookers:
            booker.booked.clear()
            booker.failed.clear()
            booker.retried = 0
            booker.hung.clear()
        self.started = time.monotonic()
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=BOOKING_DEADLINE + 2 * REQUEST_TIMEOUT)
        assert not any(thread.is_alive() for thread in self.threads), "a booking client hung"
        self.seconds = time.monotonic() - self.started

    def count(self):
        return sum(len(booker.booked) for booker in self.bookers)

    def wait_for_bookings(self, more, timeout, what):
        target = self.count() + more
        wait_until(lambda: self.count() >= target or self.errors, timeout, what)
        assert not self.errors, self.errors

    def finished_times(self):
        return sorted(at for booker in self.bookers for _, _, at in booker.booked)


def downtime(load, fault_at):
    """The longest time without a successful booking around the fault (from the last 201
    before it to the first after it, or the longest gap after it)."""
    times = load.finished_times()
    before = [at for at in times if at <= fault_at]
    after = [at for at in times if at > fault_at]
    assert after, "no booking succeeded after the fault"
    gaps = [b - a for a, b in zip(times, times[1:]) if b > fault_at]
    start = before[-1] if before else fault_at
    return max([after[0] - start] + gaps)


@pytest.fixture(scope="module")
def cluster():
    folder = tempfile.mkdtemp(prefix="clinic-cl-", dir="/tmp")
    made = None
    try:
        made = Cluster(folder)
        yield made
    finally:
        if os.path.exists(os.path.join(folder, "ports")):
            cluster_sh("down", env={"CLUSTER_DIR": folder}, timeout=180)
        else:
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def bookers(cluster):
    # The operator's limit on a patient's active appointments, raised for the load.
    result = cluster.clinic("admin", "settings", "set", "booking.max_active", "1000")
    assert result.returncode == 0, result.stderr
    made = []
    clinics = call(cluster.http, "GET", "/v1/clinics/nearest?lat=40.74&lon=-73.975&limit=2").body
    for clinic in clinics:
        for department in call(cluster.http, "GET", f"/v1/clinics/{clinic['id']}/departments").body:
            for doctor in call(cluster.http, "GET", f"/v1/departments/{department['id']}/doctors").body:
                if len(made) < THREADS:
                    made.append(Booker(cluster, f"load{len(made)}", department["id"], doctor["id"]))
    assert len(made) == THREADS, f"only {len(made)} doctors in the small directory"
    return made


def verify(cluster, bookers):
    """What every scenario must leave behind."""
    booked = [(appointment, booker) for booker in bookers for appointment, _, _ in booker.booked]
    failed = [(booker.patient, slot, last) for booker in bookers for slot, last in booker.failed]
    assert not failed, f"bookings without a final 201: {failed[:5]}"
    hung = [entry for booker in bookers for entry in booker.hung]
    assert not hung, f"requests that got no answer within {REQUEST_TIMEOUT} s: {hung[:5]}"
    ids = {appointment["id"] for appointment, _ in booked}
    assert len(ids) == len(booked), "two bookings were answered with one appointment"
    patients = ",".join(str(booker.patient) for booker in bookers)
    rows = {int(row[0]): row[1:] for row in cluster.sql(
        f"SELECT id, client_id, doctor_id, status FROM appointments WHERE client_id IN ({patients})")}
    for appointment, booker in booked:
        assert appointment["id"] in rows, f"appointment {appointment['id']} was answered 201 but is not on the new leader"
        client, doctor, status = rows[appointment["id"]]
        assert (int(client), int(doctor), status) == (booker.patient, appointment["doctorId"], "scheduled")
    all_booked = {appointment_id for booker in bookers for appointment_id in booker.all_ids}
    assert set(rows) == all_booked, (
        f"the database holds appointments no client was told of (a retry booked twice?): {sorted(set(rows) - all_booked)[:10]}")
    doubles = cluster.sql("""SELECT doctor_id, starts_at, count(*) FROM appointments
                             WHERE status IN ('scheduled', 'confirmed', 'arrived', 'in_progress')
                             GROUP BY doctor_id, starts_at HAVING count(*) > 1""")
    assert doubles == [], f"slots booked twice: {doubles}"
    check = cluster.clinic("admin", "check", "--json")
    assert check.returncode == 0 and json.loads(check.stdout)["ok"] is True, check.stdout + check.stderr


def remember(bookers):
    for booker in bookers:
        booker.all_ids = getattr(booker, "all_ids", set()) | {appointment["id"] for appointment, _, _ in booker.booked}


def report(what, load, fault_at, bookers, capsys):
    """Prints the fault's figures past pytest's capture (they belong in the CI log)."""
    gap = downtime(load, fault_at)
    retries = sum(booker.retried for booker in bookers)
    # Printed, not asserted (a timed assertion flakes on a shared machine): the waits above fail
    # the test if bookings do not resume; docs/BENCHMARKS.md records the figures.
    with capsys.disabled():
        print(f"\n{what}: {load.count()} bookings in {load.seconds:.1f} s ({load.count() / load.seconds:.1f}/s with "
              f"{THREADS} clients, one booking at a time each), {gap:.1f} s without a successful booking, "
              f"{retries} retried requests")
    return gap


def failover(cluster, bookers, capsys, what, kill, after=None):
    """Bookings under load while `kill(leader)` takes the leader down: the replica is promoted,
    bookings resume, nothing acknowledged is lost; then `after(leader)` (if any) and the old
    leader is back as the new leader's synchronous replica (pg_rewind)."""
    wait_until(cluster.healthy, 120, "a healthy cluster")
    old = cluster.status()
    leader = next(member for member in old["members"] if member["name"] == old["leader"])
    with Load(bookers) as load:
        load.wait_for_bookings(30, 120, "bookings before the fault")
        fault_at = time.monotonic()
        kill(leader)
        wait_until(lambda: cluster.status()["leader"] not in (None, old["leader"]), 120, "the replica to be promoted")
        load.wait_for_bookings(30, 180, "bookings after the failover")
    remember(bookers)
    verify(cluster, bookers)
    report(what, load, fault_at, bookers, capsys)
    if after:
        after(leader)
    healthy = wait_until(cluster.healthy, 180, "the old leader to rejoin as a replica")
    assert healthy["leader"] != old["leader"]


def test_failover_when_the_leaders_postgres_is_killed(cluster, bookers, capsys):
    # Patroni on the old leader stays alive: it rejoins as the new leader's replica by itself.
    failover(cluster, bookers, capsys, "leader's postmaster killed",
             lambda leader: os.kill(leader["postmasterPid"], signal.SIGKILL))


def test_failover_when_the_leaders_patroni_and_postgres_are_killed(cluster, bookers, capsys):
    def kill(leader):
        os.kill(leader["patroniPid"], signal.SIGKILL)
        os.kill(leader["postmasterPid"], signal.SIGKILL)

    # The old leader, started again, rejoins as a replica (pg_rewind onto the new timeline).
    failover(cluster, bookers, capsys, "leader's Patroni and postmaster killed", kill,
             after=lambda leader: cluster_sh("start-member", leader["name"], env=cluster.env))


def test_planned_switchover_fails_no_booking(cluster, bookers, capsys):
    wait_until(cluster.healthy, 120, "a healthy cluster")
    old = cluster.status()["leader"]
    with Load(bookers) as load:
        load.wait_for_bookings(30, 120, "bookings before the switchover")
        fault_at = time.monotonic()
        cluster_sh("switchover", env=cluster.env, timeout=120)
        wait_until(lambda: cluster.status()["leader"] not in (None, old), 120, "the switchover")
        load.wait_for_bookings(30, 180, "bookings after the switchover")
    remember(bookers)
    verify(cluster, bookers)
    report("planned switchover", load, fault_at, bookers, capsys)
    wait_until(cluster.healthy, 180, "the old leader as a replica")


def test_a_killed_server_leaves_the_other_the_traffic(cluster, bookers, capsys):
    wait_until(cluster.healthy, 120, "a healthy cluster")
    server = cluster.status()["servers"][0]
    with Load(bookers) as load:
        load.wait_for_bookings(30, 120, "bookings before the fault")
        fault_at = time.monotonic()
        os.kill(server["pid"], signal.SIGKILL)
        load.wait_for_bookings(60, 180, "bookings through the other server")
    remember(bookers)
    verify(cluster, bookers)
    report("a clinic server killed", load, fault_at, bookers, capsys)
    cluster_sh("start-server", "1", env=cluster.env)
    wait_until(cluster.healthy, 60, "both servers again")
