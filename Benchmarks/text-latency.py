#!/usr/bin/env python3
"""The time from a cancellation to the waitlist offer's text on the phone (issue 45), through
a real Kannel (Tests/python/kannel.py: bearerbox, smsbox, fakesmsc as the phone network), on
SQLite and on PostgreSQL, idle and under a booking load. Not part of CI (docs/BENCHMARKS.md).

  Benchmarks/text-latency.py [--store sqlite|postgres|both] [--rounds N]
  CLINIC_BIN: the clinic binary (default .build/release/clinic: swift build -c release)

Each round: a patient with a confirmed number waits for one doctor's day; another patient
cancels an appointment of that day; the clock runs from the cancellation's answer to the
offer's text arriving at fakesmsc. The baseline in the same run is the phone network alone:
a text handed to Kannel's sendsms until it arrives (fakesmsc picks texts up about once a
second, so that is the floor). The load: LOAD_THREADS clients booking and cancelling in other
departments of the clinic as fast as the server answers."""
import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from datetime import datetime, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("CLINIC_BIN", os.path.join(ROOT, ".build", "release", "clinic"))
sys.path.insert(0, os.path.join(ROOT, "Tests", "python"))

from conftest import PASSWORD, Clinic, Postgres, Server, call, wait_until  # noqa: E402
from kannel import Kannel  # noqa: E402

LOAD_THREADS = 6
DIRECTORY = """external_id,name,address,city,state,lat,lon,category,is_pediatric,is_hospital,time_zone
NYC,Bellevue Hospital,462 First Avenue,New York,NY,40.7390,-73.9754,GENERAL ACUTE CARE,0,1,
"""


def day(offset):
    return datetime.fromtimestamp(time.time() + offset * 86400, tz=timezone.utc).strftime("%Y-%m-%d")


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def patient(url, login):
    reply = call(url, "POST", "/v1/patients", {"login": login, "password": PASSWORD, "name": "Anna", "surname": "Smith",
                                               "street": "Main Street", "house": "12", "city": "New York", "acceptPrivacy": True})
    assert reply.status == 201, reply.body
    session = call(url, "POST", "/v1/sessions", {"login": login, "password": PASSWORD})
    assert session.status == 201, session.body
    return session.body["token"]


class Load:
    """Clients booking a free time of their department and cancelling it, in a loop."""

    def __init__(self, url, tokens, departments):
        self.url, self.tokens, self.departments = url, tokens, departments
        self.stop = threading.Event()
        self.booked = 0
        self.lock = threading.Lock()
        self.threads = []

    def client(self, token, department):
        offset = random.randint(20, 200)
        while not self.stop.is_set():
            slots = call(self.url, "GET", f"/v1/departments/{department}/slots?from={day(offset)}&days=1").body
            free = [slot for slot in slots or [] if slot.get("isAvailable")]
            if not free:
                offset = random.randint(20, 200)
                continue
            slot = random.choice(free)
            reply = call(self.url, "POST", "/v1/appointments", {"departmentId": department, "start": slot["start"],
                                                                  "doctorId": slot["doctorId"]},
                         token=token, headers={"Idempotency-Key": str(uuid.uuid4())})
            if reply.status == 201:
                with self.lock:
                    self.booked += 1
                call(self.url, "POST", f"/v1/appointments/{reply.body['id']}/cancel", token=token)

    def __enter__(self):
        self.started = time.monotonic()
        for index, token in enumerate(self.tokens):
            thread = threading.Thread(target=self.client, args=(token, self.departments[index % len(self.departments)]),
                                      daemon=True)
            thread.start()
            self.threads.append(thread)
        return self

    def __exit__(self, *_):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=30)
        self.seconds = time.monotonic() - self.started

    @property
    def per_second(self):
        return self.booked / max(self.seconds, 0.001)


def confirm_numbers(url, kannel, tokens, first_number):
    """Each patient's number confirmed with the code texted to it: {token: number}."""
    numbers = {token: f"+1202555{first_number + index:04d}" for index, token in enumerate(tokens)}
    for token, number in numbers.items():
        reply = call(url, "PUT", "/v1/me/phone", {"phone": number}, token=token)
        assert reply.status == 202, reply.body
    for token, number in numbers.items():
        text = wait_until(lambda: kannel.phone.received_by(number), 60, f"the code to {number}")[-1]["text"]
        code = next(word for word in text.replace(".", " ").split() if word.isdigit() and len(word) == 6)
        reply = call(url, "POST", "/v1/me/phone/confirm", {"code": code}, token=token)
        assert reply.status == 200, reply.body
    return numbers


def network_floor(kannel, rounds):
    """sendsms → the phone: what the fake network alone takes."""
    times = []
    for index in range(rounds):
        number = f"+1303555{index:04d}"
        started = time.monotonic()
        kannel.sendsms(number, f"floor {index}")
        wait_until(lambda: kannel.phone.received_by(number), 30, "the floor's text", interval=0.01)
        times.append(time.monotonic() - started)
    return times


def rounds_of_offers(url, kannel, waiters, bookers, department, doctor, first_offset):
    """One cancellation per waiter, its offer's text timed."""
    times = []
    offset = first_offset
    for (token, number), booker in zip(waiters.items(), bookers):
        # One day per round, a working day of the doctor's (a waiter waits for that day only).
        while True:
            offset += 1
            slots = [s for s in call(url, "GET", f"/v1/departments/{department}/slots?from={day(offset)}&days=1&doctorId={doctor}").body
                     if s["isAvailable"]]
            if slots:
                break
            assert offset < first_offset + 400, "no working day left"
        booked = call(url, "POST", "/v1/appointments", {"departmentId": department, "start": slots[0]["start"], "doctorId": doctor},
                      token=booker, headers={"Idempotency-Key": str(uuid.uuid4())})
        assert booked.status == 201, booked.body
        joined = call(url, "POST", "/v1/waitlist", {"departmentId": department, "doctorId": doctor, "from": day(offset),
                                                    "to": day(offset)}, token=token)
        assert joined.status == 201, joined.body
        before = len(kannel.phone.received_by(number))
        cancelled = call(url, "POST", f"/v1/appointments/{booked.body['id']}/cancel", token=booker)
        started = time.monotonic()
        assert cancelled.status == 200, cancelled.body
        wait_until(lambda: len(kannel.phone.received_by(number)) > before, 60, "the offer's text", interval=0.01)
        times.append(time.monotonic() - started)
        call(url, "DELETE", f"/v1/waitlist/{joined.body['id']}", token=token)
    return times


def run(store, rounds, folder):
    postgres = Postgres().start() if store == "postgres" else None
    kannel = Kannel(os.path.join(folder, "kannel"))
    server = None
    try:
        extra = {}
        if postgres:
            extra = dict(postgres.env(), CLINIC_KEY_FILE=os.path.join(folder, "clinic.key"),
                         CLINIC_AUDIT_KEY_FILE=os.path.join(folder, "clinic.audit-key"))
        clinic = Clinic(folder, extra_env=dict(extra, CLINIC_AUTH_RATE="100000/100000"))
        path = os.path.join(folder, "directory.csv")
        with open(path, "w") as handle:
            handle.write(DIRECTORY)
        clinic.run("init", "--empty", timeout=600)
        clinic.run("admin", "import-clinics", path, "--demo", timeout=600)
        clinic.run("admin", "settings", "set", "booking.max_active", "1000")
        kannel.start()
        # The outbox's round is long: texts go when the waitlist wakes it, as they do in production.
        server = Server(clinic, dict(kannel.env, CLINIC_DELIVERY_INTERVAL="30"), log=os.path.join(folder, "server.log"),
                        args=("--port", str(kannel.server_port)))
        url = server.url
        clinic_id = call(url, "GET", "/v1/clinics?limit=1").body["items"][0]["id"]
        departments = [d["id"] for d in call(url, "GET", f"/v1/clinics/{clinic_id}/departments").body]
        department, others = departments[0], departments[1:]
        doctor = call(url, "GET", f"/v1/departments/{department}/doctors").body[0]["id"]
        waiters = [patient(url, f"waiter{n}") for n in range(2 * rounds)]
        bookers = [patient(url, f"booker{n}") for n in range(2 * rounds)]
        loaders = [patient(url, f"loader{n}") for n in range(LOAD_THREADS)]
        numbers = confirm_numbers(url, kannel, waiters, 100)
        floor = network_floor(kannel, rounds)
        idle = rounds_of_offers(url, kannel, dict(list(numbers.items())[:rounds]), bookers[:rounds], department, doctor, 3)
        with Load(url, loaders, others) as load:
            time.sleep(2)
            busy = rounds_of_offers(url, kannel, dict(list(numbers.items())[rounds:]), bookers[rounds:], department, doctor,
                                    100)
        return {"floor": floor, "idle": idle, "busy": busy, "load": load.per_second}
    finally:
        if server:
            server.stop()
        kannel.stop()
        if postgres:
            postgres.remove()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--rounds", type=int, default=15)
    arguments = parser.parse_args()
    stores = ["sqlite", "postgres"] if arguments.store == "both" else [arguments.store]
    results = {}
    for store in stores:
        with tempfile.TemporaryDirectory(prefix=f"text-latency-{store}-") as folder:
            results[store] = run(store, arguments.rounds, folder)
    print(f"\nCancellation → the offer's text on the phone ({arguments.rounds} rounds each; seconds)")
    print(f"{'':34}" + "".join(f"{store:>25}" for store in stores))
    rows = [("phone network alone (sendsms → phone)", "floor"), ("cancellation → text, idle", "idle"),
            ("cancellation → text, under load", "busy")]
    for label, key in rows:
        cells = "".join(f"{statistics.median(results[s][key]):>10.2f} p50 {percentile(results[s][key], 0.99):>6.2f} p99"
                        for s in stores)
        print(f"{label:34}{cells}")
    print(f"{'the load: bookings/s':34}" + "".join(f"{results[s]['load']:>25.0f}" for s in stores))


if __name__ == "__main__":
    main()
