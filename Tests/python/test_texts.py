"""Text messages (SMS) through a real Kannel gateway (kannel.py: bearerbox, smsbox and the fake
phone network fakesmsc, Debian's kannel and kannel-extras).

The first tests need no clinic server: a stand-in HTTP server on the gateway's callback port
records what Kannel asks and answers as `clinic serve` will. They pin down what the server can
count on: a sendsms with coding 0 or 2 reaches the phone as sent, `+` and all; its delivery
reports (dlr-mask 31) come back as 8 and 1; a text from a phone reaches /v1/texts/incoming with
the sender's number and the whole text, and the answer's body goes back to that phone; an
error, an empty body or a 204 sends nothing back; any status but 200 and 202 (204 included) is
asked again, a delivery report's too.

The tests below them run the clinic server against the gateway: a phone confirmed by a code,
a waitlist offer by text whose link books, STOP and START, and a text written while the gateway
is down arriving once when it is back.
"""
import http.client
import http.server
import json
import os
import re
import subprocess
import threading
import time
import urllib.parse
import urllib.request
import uuid
from datetime import datetime, timezone

import pytest

from conftest import Server, api_patient, call, wait_until
from kannel import free_ports, gsm7, kannel  # noqa: F401 (kannel: the fixture)


class StandIn:
    """An HTTP server in place of `clinic serve` on the gateway's callback port. `requests`:
    (path, query) of each request in order (the query as a dict of its first values).
    `answer(path, query)` -> (status, body, headers) answers it: by default the text back as
    "You said: TEXT" (with X-Kannel-Coding: 2 when it is not GSM 7-bit) and 200 with no body
    for a delivery report."""

    def __init__(self, port):
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.requests = []
        self.changed = threading.Condition()
        self.answer = self.default_answer
        self.server = None

    @staticmethod
    def default_answer(path, query):
        if path == "/v1/texts/incoming":
            return 200, "You said: " + query.get("text", ""), {}
        return 200, "", {}

    def start(self):
        stand_in = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                address = urllib.parse.urlsplit(self.path)
                query = {name: values[0] for name, values in
                         urllib.parse.parse_qs(address.query, keep_blank_values=True).items()}
                with stand_in.changed:
                    stand_in.requests.append((address.path, query))
                    stand_in.changed.notify_all()
                status, body, headers = stand_in.answer(address.path, query)
                data = body.encode() if isinstance(body, str) else body
                headers = dict(headers)
                headers.setdefault("Content-Type", "text/plain; charset=utf-8")
                if body and isinstance(body, str) and not gsm7(body) and headers["Content-Type"].startswith("text/plain"):
                    headers.setdefault("X-Kannel-Coding", "2")
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if status != 204:
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if status != 204:
                    self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def snapshot(self):
        with self.changed:
            return list(self.requests)

    def wait_for(self, condition, timeout=15, what="requests"):
        """Waits until `condition(requests)` is true; returns the requests."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not condition(list(self.requests)):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out waiting for {what}; got {self.requests}")
                self.changed.wait(left)
            return list(self.requests)


@pytest.fixture
def stand_in(kannel):
    server = StandIn(kannel.server_port).start()
    yield server
    server.stop()


def texts_to(phone, number, count=1, timeout=15):
    """Waits until `number` has received `count` texts; returns them."""
    phone.wait_for(lambda texts: len([t for t in texts if t["to"] == number]) >= count, timeout)
    return phone.received_by(number)


def read(path):
    with open(path, errors="replace") as handle:
        return handle.read()


def reports_of(requests, delivery):
    return [query for path, query in requests if path == "/v1/texts/report" and query.get("delivery") == str(delivery)]


# The gateway on its own

def test_a_text_reaches_the_phone_as_sent_and_its_delivery_reports_come_back(kannel, stand_in):
    cases = [("+12025550123", "Booked: Mon 10:30, room 4 & desk B. Reply STOP to end texts.", 0, "text"),
             ("+12025550124", "Запись подтверждена", 2, "ucs-2")]
    for delivery, (number, text, coding, printed) in enumerate(cases, 1):
        report = f"{stand_in.url}/v1/texts/report?delivery={delivery}&sig=f00d&status=%d"
        status, body = kannel.sendsms(number, text, coding=coding, dlr_url=report)
        assert (status, body) == (202, "0: Accepted for delivery")
        (got,) = texts_to(kannel.phone, number)
        assert (got["from"], got["text"], got["coding"], got["parts"]) == ("Clinic", text, printed, 1)
        # 8 (the SMSC took it) and 1 (delivered), in either order, with the URL's own fields.
        requests = stand_in.wait_for(lambda requests: len(reports_of(requests, delivery)) >= 2, what="two reports")
        reports = reports_of(requests, delivery)
        assert sorted(r["status"] for r in reports) == ["1", "8"], reports
        assert all(r["sig"] == "f00d" for r in reports)


def test_a_long_text_arrives_whole_and_a_newline_stays(kannel, stand_in):
    link = "http://127.0.0.1:8080/o/" + "k" * 43
    long = "A time freed up at Bellevue Hospital, Cardiology, on Tuesday 14 March at 10:30 with Dr Anna Smith. " \
           "It is held for you for 15 minutes: " + link
    assert len(long) > 160
    status, _ = kannel.sendsms("+12025550131", long, dlr_url=f"{stand_in.url}/v1/texts/report?delivery=7&status=%d")
    assert status == 202
    assert kannel.sendsms("+12025550132", "Код: 123456\nНикому его не сообщайте.", coding=2)[0] == 202
    assert kannel.sendsms("+12025550133", "Code 123456\nTell no one.", coding=0)[0] == 202
    (got,) = texts_to(kannel.phone, "+12025550131")
    assert (got["text"], got["parts"]) == (long, 2)
    assert texts_to(kannel.phone, "+12025550132")[0]["text"] == "Код: 123456\nНикому его не сообщайте."
    assert texts_to(kannel.phone, "+12025550133")[0]["text"] == "Code 123456\nTell no one."
    # One report of each kind for the whole text, not one a part.
    requests = stand_in.wait_for(lambda requests: len(reports_of(requests, 7)) >= 2, what="two reports")
    assert sorted(r["status"] for r in reports_of(requests, 7)) == ["1", "8"]


def test_a_text_from_a_phone_reaches_the_server_and_the_answer_goes_back(kannel, stand_in):
    kannel.phone.send("+12025550101", "STOP")
    requests = stand_in.wait_for(lambda requests: len(requests) >= 1)
    assert requests[0] == ("/v1/texts/incoming",
                           {"key": kannel.secret, "from": "+12025550101", "to": kannel.number, "text": "STOP"})
    (reply,) = texts_to(kannel.phone, "+12025550101")
    assert (reply["from"], reply["text"], reply["coding"]) == (kannel.number, "You said: STOP", "text")

    # UCS-2 from the phone reaches the server as UTF-8, spaces as typed (%b); an answer not in
    # GSM 7-bit goes back as UCS-2 because the answer says X-Kannel-Coding: 2 ...
    kannel.phone.send("+12025550102", "Стоп,  пожалуйста")
    requests = stand_in.wait_for(lambda requests: len(requests) >= 2)
    assert requests[1][1]["text"] == "Стоп,  пожалуйста"
    (reply,) = texts_to(kannel.phone, "+12025550102")
    assert (reply["text"], reply["coding"]) == ("You said: Стоп,  пожалуйста", "ucs-2")

    # ... without it, smsbox makes it GSM 7-bit and every other letter a question mark.
    stand_in.answer = lambda path, query: (200, "Рассылка отключена", {"X-Kannel-Coding": "0"})
    kannel.phone.send("+12025550103", "stop")
    (reply,) = texts_to(kannel.phone, "+12025550103")
    assert (reply["text"], reply["coding"]) == ("?" * 8 + " " + "?" * 9, "text")


def test_an_error_an_empty_body_or_a_204_sends_nothing_back(kannel, stand_in):
    answers = {
        "+12025550141": (403, json.dumps({"error": {"code": "forbidden"}}), {"Content-Type": "application/json"}),
        "+12025550142": (404, "not found", {}),
        "+12025550143": (200, "", {}),
        "+12025550144": (204, "", {}),
        "+12025550145": (200, json.dumps({"reply": "hi"}), {"Content-Type": "application/json"}),
    }
    stand_in.answer = lambda path, query: answers[query["from"]]
    for number in answers:
        kannel.phone.send(number, "STOP")
    answered = dict(kannel.wait_answered(len(answers)))
    # The access log's status: the last attempt's.
    assert answered == {"+12025550141": 403, "+12025550142": 404, "+12025550143": 200, "+12025550144": 204,
                        "+12025550145": 200}
    # Any status but 200 and 202 is a failure that smsbox retries (http-request-retry) ...
    tries = {number: len([q for _, q in stand_in.snapshot() if q["from"] == number]) for number in answers}
    once, every = 1, 1 + kannel.http_retries
    assert tries == {"+12025550141": every, "+12025550142": every, "+12025550143": once, "+12025550144": every,
                     "+12025550145": once}
    # ... and then, like the empty body and the JSON one, sends nothing (the reply-* texts are
    # empty).
    kannel.settle()
    assert [t for t in kannel.phone.snapshot() if t["to"] in answers] == []


def test_a_delivery_report_answered_204_is_asked_again(kannel, stand_in):
    """The clinic server answers a report 200: smsbox takes 204 for a failure like any status
    but 200 and 202, and asks again (http-request-retry times)."""
    stand_in.answer = lambda path, query: (204, "", {})
    report = f"{stand_in.url}/v1/texts/report?delivery=9&status=%d"
    assert kannel.sendsms("+12025550171", "hi", dlr_url=report)[0] == 202
    every = 1 + kannel.http_retries
    requests = stand_in.wait_for(lambda requests: len(reports_of(requests, 9)) >= 2 * every, what="the reports again")
    assert sorted(r["status"] for r in reports_of(requests, 9)) == ["1"] * every + ["8"] * every


def test_a_text_that_finds_the_server_down_is_asked_again(kannel):
    """smsbox retries the get-url (http-request-retry, every http-queue-delay seconds): a
    server down for a moment still gets the text."""
    kannel.phone.send("+12025550151", "STOP")
    wait_until(lambda: "Couldn't fetch" in read(os.path.join(kannel.folder, "smsbox.log")), 10, "a failed fetch")
    stand_in = StandIn(kannel.server_port).start()
    try:
        (reply,) = texts_to(kannel.phone, "+12025550151")
        assert reply["text"] == "You said: STOP"
        assert [q["from"] for _, q in stand_in.snapshot()] == ["+12025550151"]
    finally:
        stand_in.stop()


def test_a_gateway_down_refuses_sendsms_and_delivers_again_when_it_is_back(kannel, stand_in):
    assert kannel.sendsms("+12025550161", "first")[0] == 202
    texts_to(kannel.phone, "+12025550161")
    kannel.stop_gateway()
    with pytest.raises(OSError):
        kannel.sendsms("+12025550161", "while down")
    kannel.start_gateway()
    assert kannel.sendsms("+12025550161", "second")[0] == 202
    assert [t["text"] for t in texts_to(kannel.phone, "+12025550161", 2)] == ["first", "second"]
    kannel.phone.send("+12025550162", "hello")
    assert texts_to(kannel.phone, "+12025550162")[0]["text"] == "You said: hello"


# The clinic server with the gateway (a draft: the server's side is being written)

DIRECTORY = """external_id,name,address,city,state,lat,lon,category,is_pediatric,is_hospital,time_zone
NYC,Bellevue Hospital,462 First Avenue,New York,NY,40.7390,-73.9754,GENERAL ACUTE CARE,0,1,
"""
PHONE_A = "+12025550101"
PHONE_B = "+12025550102"
LINK = re.compile(r"(https?://\S+?/o/[^\s.,;)]+)")


def day(offset):
    return datetime.fromtimestamp(time.time() + offset * 86400, tz=timezone.utc).strftime("%Y-%m-%d")


def site(clinic, kannel, tmp_path, env=None, prefix=()):
    """One clinic with demo departments and `clinic serve` on the gateway's callback port:
    (server, department)."""
    path = os.path.join(str(tmp_path), "directory.csv")
    with open(path, "w") as handle:
        handle.write(DIRECTORY)
    clinic.run("init", "--empty")
    clinic.run("admin", "import-clinics", path, "--demo")
    clinic_id = clinic.json("clinics", "list")[0]["id"]
    department = clinic.json("departments", str(clinic_id))[0]["id"]
    server = Server(clinic, dict(kannel.env, **(env or {})), log=os.path.join(str(tmp_path), "server.log"),
                    args=("--port", str(kannel.server_port)), prefix=prefix)
    return server, department


def confirm_phone(server, kannel, token, number):
    """PUT /v1/me/phone, the code from the text, POST /v1/me/phone/confirm."""
    before = len(kannel.phone.received_by(number))
    reply = call(server.url, "PUT", "/v1/me/phone", {"phone": number}, token=token)
    assert reply.status in (200, 202), reply.body
    assert (reply.body["phone"], reply.body["phoneConfirmed"]) == (number, False)
    text = texts_to(kannel.phone, number, before + 1, timeout=30)[before]
    code = re.search(r"\b(\d{6})\b", text["text"])
    assert code, text
    reply = call(server.url, "POST", "/v1/me/phone/confirm", {"code": code.group(1)}, token=token)
    assert reply.status == 200, reply.body
    assert (reply.body["phone"], reply.body["phoneConfirmed"]) == (number, True)


def browser(base, method, path, form=None, cookies=None):
    """A browser's request (a form post, cookies): (status, content type, body, cookies set)."""
    address = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=20)
    headers, data = {}, None
    if cookies:
        headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in cookies.items())
    if form is not None:
        data = urllib.parse.urlencode(form)
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    try:
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        body = response.read().decode(errors="replace")
        set_cookies = {}
        for header in response.msg.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            set_cookies[name.strip()] = rest.split(";")[0]
        return response.status, response.getheader("Content-Type", ""), body, dict(cookies or {}, **set_cookies)
    finally:
        connection.close()


def assert_callbacks_answered_200(tmp_path):
    """Every request of the gateway (incoming texts, delivery reports) was answered 200 or 202,
    from the server's request log: smsbox asks again on any other status, 204 included
    (test_a_delivery_report_answered_204_is_asked_again)."""
    with open(os.path.join(str(tmp_path), "server.log"), errors="replace") as handle:
        answers = re.findall(r"route=(/v1/texts/\S+) status=(\d+)", handle.read())
    assert answers, "no request of the gateway in the server's log"
    assert [a for a in answers if a[1] not in ("200", "202")] == [], answers


def free_slot(server, department):
    """The first free slot from two days ahead (past the cancellation cutoff): (day, slot)."""
    for offset in range(2, 12):
        reply = call(server.url, "GET", f"/v1/departments/{department}/slots?from={day(offset)}&days=1")
        assert reply.status == 200, reply.body
        free = [slot for slot in reply.body if slot["isAvailable"]]
        if free:
            return day(offset), free[0]
    raise AssertionError("no free slot in ten days")


def test_a_freed_time_is_offered_by_text_and_its_link_books_once(clinic, kannel, tmp_path):
    # The outbox's round is an hour here: the code (asked for) and the offer (just made) wake it.
    server, department = site(clinic, kannel, tmp_path, env={"CLINIC_DELIVERY_INTERVAL": "3600"})
    try:
        token_a, _ = api_patient(server.url, "anna")
        token_b, _ = api_patient(server.url, "boris")
        confirm_phone(server, kannel, token_b, PHONE_B)
        reply = call(server.url, "PATCH", "/v1/me", {"textOffers": True, "textReminders": True}, token=token_b)
        assert reply.status == 200, reply.body

        when, slot = free_slot(server, department)
        booked = call(server.url, "POST", "/v1/appointments",
                      {"departmentId": department, "start": slot["start"], "doctorId": slot["doctorId"]},
                      token=token_a, headers={"Idempotency-Key": str(uuid.uuid4())})
        assert booked.status == 201, booked.body
        reply = call(server.url, "POST", "/v1/waitlist", {"departmentId": department, "from": when, "to": when},
                     token=token_b)
        assert reply.status == 201, reply.body
        texts_before = len(kannel.phone.received_by(PHONE_B))

        cancelled = call(server.url, "POST", f"/v1/appointments/{booked.body['id']}/cancel", token=token_a)
        assert cancelled.status == 200, cancelled.body
        offer = texts_to(kannel.phone, PHONE_B, texts_before + 1, timeout=30)[texts_before]
        assert offer["from"] == "Clinic"
        link = LINK.search(offer["text"])
        assert link, offer
        assert call(server.url, "GET", "/v1/waitlist/offers", token=token_b).body["items"], "the text's offer is open"
        address = urllib.parse.urlsplit(link.group(1))
        path = address.path + (f"?{address.query}" if address.query else "")

        # The link in a browser without a session: the link is the key.
        status, kind, page, cookies = browser(server.url, "GET", path)
        assert status == 200 and kind.startswith("text/html"), (status, page[:500])
        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        assert csrf, page[:2000]
        status, _, page, _ = browser(server.url, "POST", path + "/accept", form={"csrf": csrf.group(1)}, cookies=cookies)
        assert status in (200, 303), (status, page[:500])
        mine = call(server.url, "GET", "/v1/appointments", token=token_b).body["items"]
        assert [a["start"] for a in mine] == [slot["start"]], mine
        # The same link again: refused.
        status, _, page, _ = browser(server.url, "POST", path + "/accept", form={"csrf": csrf.group(1)}, cookies=cookies)
        assert status in (404, 410), (status, page[:500])
        assert browser(server.url, "GET", path)[0] in (404, 410)
        assert len(call(server.url, "GET", "/v1/appointments", token=token_b).body["items"]) == 1
        # The network's delivery reports come back to the signed address and are counted.
        def delivered():
            reply = call(server.url, "GET", "/metrics")
            found = re.search(r'clinic_texts_total\{event="delivered"\} (\d+)', reply.body if isinstance(reply.body, str) else "")
            return found and int(found.group(1)) >= 2
        wait_until(delivered, 20, "the code's and the offer's delivery reports")
        kannel.settle()
        assert_callbacks_answered_200(tmp_path)
    finally:
        server.stop()


def test_stop_turns_texts_off_once_and_start_turns_them_on(clinic, kannel, tmp_path):
    server, _ = site(clinic, kannel, tmp_path)
    try:
        token, _ = api_patient(server.url, "boris")
        confirm_phone(server, kannel, token, PHONE_B)
        assert call(server.url, "PATCH", "/v1/me", {"textOffers": True, "textReminders": True}, token=token).status == 200
        before = len(kannel.phone.received_by(PHONE_B))
        answered = len(kannel.answered())

        kannel.phone.send(PHONE_B, "STOP")
        reply = texts_to(kannel.phone, PHONE_B, before + 1)[before]
        assert reply["from"] == kannel.number and reply["text"], reply  # the server's words: texts are off, START ...
        me = call(server.url, "GET", "/v1/me", token=token).body
        assert (me["textsStopped"], me["textOffers"], me["textReminders"]) == (True, True, True), me

        kannel.phone.send(PHONE_B, "stop")  # a second STOP: answered 200 with an empty body
        assert kannel.wait_answered(answered + 2)[-1] == (PHONE_B, 200)
        kannel.settle()
        assert len(kannel.phone.received_by(PHONE_B)) == before + 1, "the second STOP got a reply"

        kannel.phone.send(PHONE_B, "START")
        texts_to(kannel.phone, PHONE_B, before + 2)
        me = call(server.url, "GET", "/v1/me", token=token).body
        assert (me["textsStopped"], me["textOffers"], me["textReminders"]) == (False, True, True), me

        # A phone no patient has: no reply, and nobody's settings change.
        kannel.phone.send(PHONE_A, "STOP")
        assert kannel.wait_answered(answered + 4)[-1][0] == PHONE_A
        kannel.settle()
        assert kannel.phone.received_by(PHONE_A) == []
        assert call(server.url, "GET", "/v1/me", token=token).body["textsStopped"] is False
        assert_callbacks_answered_200(tmp_path)
    finally:
        server.stop()


def test_a_text_with_the_wrong_key_is_refused_and_answered_with_nothing(clinic, kannel, tmp_path):
    server, _ = site(clinic, kannel, tmp_path, env={"CLINIC_SMS_SECRET": "not-what-kannel-sends"})
    try:
        token, _ = api_patient(server.url, "boris")
        kannel.phone.send(PHONE_B, "STOP")
        assert kannel.wait_answered(1) == [(PHONE_B, 403)]
        kannel.settle()
        assert kannel.phone.received_by(PHONE_B) == []
        assert call(server.url, "GET", "/v1/me", token=token).status == 200
    finally:
        server.stop()


def test_a_text_written_while_the_gateway_is_down_arrives_once_when_it_is_back(clinic, kannel, tmp_path):
    # The server's wall clock runs through libfaketime with its offset in a file (read again at
    # most once a second; monotonic time, NIO's timers, stays real): the outbox's first back-off,
    # a minute, is passed by moving the clock rather than by waiting it out.
    # (`faketime` itself, not LD_PRELOAD alone: without the shared memory it makes, the
    # server's process starts without its arguments.)
    clock = tmp_path / "clock"
    clock.write_text("+0s\n")
    server, _ = site(clinic, kannel, tmp_path, env={"FAKETIME_TIMESTAMP_FILE": str(clock), "FAKETIME_CACHE_DURATION": "1",
                                                    "FAKETIME_DONT_FAKE_MONOTONIC": "1"},
                     prefix=("faketime", "-f", "+0s", "env", "-u", "FAKETIME"))
    try:
        token, _ = api_patient(server.url, "boris")
        kannel.stop_gateway()
        reply = call(server.url, "PUT", "/v1/me/phone", {"phone": PHONE_B}, token=token)
        assert reply.status in (200, 202), reply.body  # the code's text waits in the outbox
        time.sleep(2.5)  # two rounds of the server's worker (CLINIC_DELIVERY_INTERVAL=1) find the gateway down
        assert kannel.phone.received_by(PHONE_B) == []
        kannel.start_gateway()
        time.sleep(2.5)  # two more rounds with the gateway back: the back-off still holds the text
        assert kannel.phone.received_by(PHONE_B) == []
        clock.write_text("+70s\n")  # past the back-off (a minute, as for e-mail: test_mail.py)
        (text,) = texts_to(kannel.phone, PHONE_B, timeout=30)
        assert re.search(r"\b\d{6}\b", text["text"]), text
        time.sleep(2.5)  # two more rounds: nothing more may come
        assert len(kannel.phone.received_by(PHONE_B)) == 1
    finally:
        server.stop()


def test_the_trial_script_runs_kannel_without_an_operator(tmp_path):
    """Issue 55 (B17): scripts/kannel-trial.sh starts bearerbox, smsbox and fakesmsc for a
    trial (fakesmsc kept alive without a terminal), prints the settings for `clinic serve`, a
    text sent through its sendsms reaches the fake phones' log, and `stop` ends every process."""
    folder = str(tmp_path / "trial")
    ports = free_ports(4)
    script = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "kannel-trial.sh")
    env = dict(os.environ, KANNEL_TRIAL_PORTS=" ".join(str(port) for port in ports))
    started = subprocess.run([script, "start", folder, "http://127.0.0.1:9"], env=env, capture_output=True, text=True,
                             timeout=60, stdin=subprocess.DEVNULL)
    try:
        assert started.returncode == 0, started.stderr
        settings = dict(re.findall(r"(CLINIC_SMS_\w+)=(\S+)", started.stdout))
        assert settings["CLINIC_SMS_URL"] == f"http://127.0.0.1:{ports[2]}/cgi-bin/sendsms", started.stdout
        query = urllib.parse.urlencode({"username": settings["CLINIC_SMS_USER"], "password": settings["CLINIC_SMS_PASSWORD"],
                                        "from": "+15550100", "to": "+12025550188", "text": "Hello from the trial"})
        with urllib.request.urlopen(settings["CLINIC_SMS_URL"] + "?" + query, timeout=10) as answer:
            assert answer.status == 202
        log = os.path.join(folder, "phones.log")
        wait_until(lambda: "<+15550100 +12025550188 text Hello from the trial>" in open(log, encoding="utf-8").read(), 15,
                   "the text on the fake phone")
    finally:
        stopped = subprocess.run([script, "stop", folder], env=env, capture_output=True, text=True, timeout=60)
    assert stopped.returncode == 0, stopped.stderr
    assert not any(name.endswith(".pid") for name in os.listdir(folder))
