"""Shared fixtures of the calendar, e-mail and multi-server tests: the clinic binary on a fresh
database in a temporary folder, a real SMTP server (aiosmtpd on 127.0.0.1), `clinic serve`
processes, and a throwaway PostgreSQL (scripts/postgres.sh). Run by scripts/python-tests.sh
(which makes the virtual environment)."""
import contextlib
import email
import email.policy
import http.client
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse

import pytest
from aiosmtpd.controller import Controller

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLINIC_BIN = os.environ.get("CLINIC_BIN", os.path.join(ROOT, ".build", "debug", "clinic"))
PASSWORD = "correct horse battery staple"
STAFF_PASSWORD = "staff passphrase 77"


class Clinic:
    """Runs the clinic CLI against one database; `at` shifts the clock with libfaketime."""

    def __init__(self, folder, extra_env=None):
        self.folder = folder
        self.env = dict(os.environ)
        self.env.update({
            "CLINIC_DB": os.path.join(folder, "clinic.sqlite"),
            "CLINIC_SESSION": os.path.join(folder, "session"),
            "CLINIC_STAFF_SESSION": os.path.join(folder, "staff-session"),
            "TZ": "UTC",
        })
        self.env.update(extra_env or {})

    def run(self, *args, stdin=None, at=None, check=True, env=None, timeout=120):
        command = [CLINIC_BIN, *args]
        full_env = dict(self.env, **(env or {}))
        if at is not None:
            # The clock only: monotonic time stays real (timeouts, SQLite's busy wait).
            command = ["faketime", "-f", at, *command]
            full_env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
        result = subprocess.run(command, input=stdin, capture_output=True, text=True, env=full_env, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"clinic {' '.join(args)} exited {result.returncode}: {result.stderr}")
        return result

    def json(self, *args, **kwargs):
        return json.loads(self.run(*args, "--json", **kwargs).stdout)

    def register(self, login, city="New York", language=None):
        self.run("register", "--login", login, "--name", "Anna", "--surname", "Smith", "--street", "Main Street",
                 "--house", "12", "--city", city, "--accept-privacy", "--password-stdin", stdin=f"{PASSWORD}\n{PASSWORD}\n")
        self.run("login", "--login", login, "--password-stdin", stdin=f"{PASSWORD}\n")
        if language:
            self.run("profile", "edit", "--lang", language)

    def free_slot(self, department, day, days=1):
        """The first bookable slot of a department on a local date (YYYY-MM-DD)."""
        slots = self.json("slots", "--department", str(department), "--from", day, "--days", str(days))
        free = [slot for slot in slots if slot["isAvailable"]]
        assert free, f"no free slot in department {department} on {day}"
        return free[0]

    def staff(self, login, role, clinic_id):
        self.run("admin", "staff", "add", "--login", login, "--name", "Sam", "--surname", "Lee", "--role", role,
                 "--clinic", str(clinic_id), "--password-stdin", stdin=f"{STAFF_PASSWORD}\n{STAFF_PASSWORD}\n")
        self.run("staff", "login", "--login", login, "--password-stdin", stdin=f"{STAFF_PASSWORD}\n")


@pytest.fixture
def clinic(tmp_path):
    return Clinic(str(tmp_path))


class Mailbox:
    """What the SMTP server accepted. `hold` seconds are waited after a message is stored and
    before the 250 is answered (the window a crash may fall into)."""

    def __init__(self):
        self.messages = []
        self.lock = threading.Lock()
        self.stored = threading.Event()
        self.hold = 0

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.messages.append((envelope.mail_from, list(envelope.rcpt_tos),
                                  email.message_from_bytes(envelope.content, policy=email.policy.default)))
        self.stored.set()
        if self.hold:
            import asyncio
            await asyncio.sleep(self.hold)
        return "250 Message accepted for delivery"

    def snapshot(self):
        with self.lock:
            return list(self.messages)

    def wait_for(self, count, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.snapshot()) >= count:
                return self.snapshot()
            time.sleep(0.1)
        raise AssertionError(f"expected {count} messages, got {len(self.snapshot())}")


def free_port():
    """A free port below the ephemeral range (scripts/free-ports.py says why)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "free_ports", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "free-ports.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.free_ports(1)[0]


class SMTPServer:
    """aiosmtpd on 127.0.0.1; with `tls_context`, STARTTLS is demanded and AUTH PLAIN/LOGIN
    accepts `credentials` (only over TLS)."""

    def __init__(self, tls_context=None, credentials=None):
        self.port = free_port()
        self.mailbox = Mailbox()
        self.controller = None
        self.tls_context = tls_context
        self.credentials = credentials
        self.logins = []

    def authenticate(self, server, session, envelope, mechanism, auth_data):
        from aiosmtpd.smtp import AuthResult
        login = auth_data.login.decode() if isinstance(auth_data.login, bytes) else auth_data.login
        password = auth_data.password.decode() if isinstance(auth_data.password, bytes) else auth_data.password
        self.logins.append((login, password))
        return AuthResult(success=(login, password) == self.credentials)

    def start(self):
        if self.tls_context:
            self.controller = Controller(self.mailbox, hostname="127.0.0.1", port=self.port, tls_context=self.tls_context,
                                         require_starttls=True, auth_require_tls=True, authenticator=self.authenticate,
                                         auth_required=True)
        else:
            self.controller = Controller(self.mailbox, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def stop(self):
        if self.controller:
            self.controller.stop()
            self.controller = None

    @property
    def env(self):
        return {"CLINIC_SMTP_URL": f"smtp://127.0.0.1:{self.port}", "CLINIC_MAIL_FROM": "clinic@example.org"}


@pytest.fixture
def smtp():
    server = SMTPServer()
    server.start()
    yield server
    server.stop()


class Server:
    """`clinic serve --port 0`, its address read from its first line (within `timeout` seconds).
    `log`: a file for its stderr (the request log), else it is dropped."""

    def __init__(self, clinic, extra_env=None, log=None, timeout=120, args=(), prefix=()):
        """`prefix`: a command that runs the server as its one child (`faketime`): the server's
        own pid is then that child's, and signals go to it (the wrapper ends with it)."""
        env = dict(clinic.env, CLINIC_DELIVERY_INTERVAL="1")
        env.update(extra_env or {})
        stderr = open(log, "ab") if log else subprocess.DEVNULL
        try:
            self.process = subprocess.Popen([*prefix, CLINIC_BIN, "serve", "--port", "0", *args], env=env, stdout=subprocess.PIPE,
                                            stderr=stderr)
        finally:
            if log:
                stderr.close()
        line = self._first_line(timeout)
        self.pid = self.process.pid
        if prefix and self.process.poll() is None:
            with open(f"/proc/{self.pid}/task/{self.pid}/children") as children:
                self.pid = int(children.read().split()[0])
        match = re.search(r"(https?://\S+)", line)
        if not match:
            self.kill()
            raise AssertionError(f"no address in {line!r}" + (f" (log: {log})" if log else ""))
        self.url = match.group(1)

    def _first_line(self, timeout):
        """The first line of stdout, read straight from the pipe so that a server that never
        gets to listen fails the test instead of hanging it."""
        deadline = time.monotonic() + timeout
        data = b""
        descriptor = self.process.stdout.fileno()
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select([descriptor], [], [], left)
            if not ready:
                continue
            chunk = os.read(descriptor, 4096)
            if not chunk:
                break
            data += chunk
        return data.decode(errors="replace")

    def peak_rss_mb(self):
        """The process's peak resident memory so far (VmHWM in /proc), in MB."""
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        raise AssertionError("no VmHWM")

    @property
    def alive(self):
        return self.process.poll() is None

    def _signal(self, number):
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, number)

    def kill(self):
        """SIGKILL: no graceful shutdown."""
        self._signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self):
        if self.process.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
                raise


def text_part(message):
    return message.get_body(preferencelist=("plain",)).get_content()


def calendar_parts(message):
    return [part.get_content() for part in message.iter_attachments() if part.get_content_type() == "text/calendar"]


def code_from(message):
    match = re.search(r"\b(\d{6})\b", str(message["subject"]))
    assert match, message["subject"]
    return match.group(1)


PG_BIN = os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin")
POSTGRES_SH = os.path.join(ROOT, "scripts", "postgres.sh")


class Postgres:
    """A throwaway PostgreSQL 15 made by scripts/postgres.sh in a folder of its own under /tmp
    (as root the server runs as `postgres`, which must reach the folder: pytest's own temporary
    folders are private to their user). `down` and `up` stop and start the same server again
    (same folder, socket and port); `remove` stops it and deletes the folder."""

    def __init__(self):
        self.folder = tempfile.mkdtemp(prefix="clinic-pg-", dir="/tmp")
        self.url = None

    def _script(self, *args, timeout=180):
        result = subprocess.run([POSTGRES_SH, *args], capture_output=True, text=True, timeout=timeout,
                                env=dict(os.environ, PG_BIN=PG_BIN))
        if result.returncode != 0:
            raise AssertionError(f"postgres.sh {' '.join(args)} exited {result.returncode}: {result.stderr}")
        return result.stdout

    def start(self):
        self.url = self._script("start", self.folder).strip().splitlines()[-1]
        with open(os.path.join(self.folder, "password")) as handle:
            self.password = handle.read().strip()
        with open(os.path.join(self.folder, "port")) as handle:
            self.port = handle.read().strip()
        return self

    def down(self, mode="fast"):
        self._script("down", self.folder, mode)

    def up(self):
        self._script("up", self.folder)

    def remove(self):
        """Stops the server and deletes its folder (also after a failed start)."""
        try:
            self._script("stop", self.folder)
        finally:
            pid = os.path.join(self.folder, "data", "postmaster.pid")
            if os.path.isdir(self.folder) and not os.path.exists(pid):
                shutil.rmtree(self.folder, ignore_errors=True)

    def env(self, connect_timeout=None):
        """CLINIC_DB and PGPASSWORD for the clinic binary on this server."""
        url = self.url + (f"&connect_timeout={connect_timeout}" if connect_timeout else "")
        return {"CLINIC_DB": url, "PGPASSWORD": self.password}

    def query(self, sql):
        """The rows of one statement as tuples of text (psql's unaligned output), as clinic_test."""
        result = subprocess.run([os.path.join(PG_BIN, "psql"), "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1",
                                 "-h", os.path.join(self.folder, "socket"), "-p", self.port, "-U", "clinic_test",
                                 "-d", "clinic_test", "-c", sql],
                                capture_output=True, text=True, timeout=60, env=dict(os.environ, PGPASSWORD=self.password))
        if result.returncode != 0:
            raise AssertionError(f"psql: {result.stderr}")
        return [tuple(line.split("\t")) for line in result.stdout.splitlines() if line]


# HTTP without a client library (test_multi_server.py, test_cluster.py)

class Reply:
    def __init__(self, status, headers, body, sent, seconds):
        self.status = status
        self.headers = headers
        self.body = body
        self.sent = sent          # time.monotonic() when the request was sent
        self.seconds = seconds    # how long the answer took

    @property
    def code(self):
        if isinstance(self.body, dict) and isinstance(self.body.get("error"), dict):
            return self.body["error"].get("code")
        return None

    def __repr__(self):
        return f"<{self.status} {self.code or ''} after {self.seconds:.1f}s>"


def call(base, method, path, body=None, token=None, headers=None, timeout=20):
    """One request on a connection of its own; raises OSError / HTTPException when there is no answer."""
    address = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=timeout)
    fields = dict(headers or {})
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        fields["Content-Type"] = "application/json"
    if token:
        fields["Authorization"] = "Bearer " + token
    sent = time.monotonic()
    try:
        connection.request(method, path, body=data, headers=fields)
        response = connection.getresponse()
        raw = response.read()
        answer = {name.lower(): value for name, value in response.getheaders()}
    finally:
        connection.close()
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = raw.decode(errors="replace")
    return Reply(response.status, answer, parsed, sent, time.monotonic() - sent)


def api_patient(base, login):
    """Registers a patient in New York through the API and signs in: (token, patient id)."""
    reply = call(base, "POST", "/v1/patients", {
        "login": login, "password": PASSWORD, "name": "Anna", "surname": "Smith", "street": "Main Street",
        "house": "12", "city": "New York", "acceptPrivacy": True})
    assert reply.status == 201, reply.body
    session = call(base, "POST", "/v1/sessions", {"login": login, "password": PASSWORD})
    assert session.status == 201, session.body
    return session.body["token"], session.body["patient"]["id"]


def wait_until(condition, timeout, what, interval=0.1):
    """Polls `condition` until it returns something true; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


@contextlib.contextmanager
def directory_site(folder, settings=None, server_env=None):
    """`clinic init` (the default directory: 7,146 clinics with demo departments) and
    `clinic serve` on it, for a module's tests (test_web.py, test_fhir.py). With
    CLINIC_TEST_STORE=postgres (scripts/test.sh's second run) the database is a PostgreSQL of
    its own, started here and removed after. `settings`: booking rules set before the server starts."""
    postgres = Postgres().start() if os.environ.get("CLINIC_TEST_STORE") == "postgres" else None
    try:
        extra = {}
        if postgres:
            extra = dict(postgres.env(), CLINIC_KEY_FILE=os.path.join(folder, "clinic.key"),
                         CLINIC_AUDIT_KEY_FILE=os.path.join(folder, "clinic.audit-key"))
        clinic = Clinic(folder, extra_env=extra)
        # Filling PostgreSQL with the 7,146 clinics takes about 12 s on two cores (a debug
        # build); the limit leaves room for a machine busy with anything else.
        clinic.run("init", timeout=600)
        for key, value in (settings or {}).items():
            clinic.run("admin", "settings", "set", key, value)
        server = Server(clinic, extra_env=server_env)
        try:
            yield clinic, server
        finally:
            server.stop()
    finally:
        if postgres:
            postgres.remove()
