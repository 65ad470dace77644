"""A real Kannel SMS gateway for the text-message tests (test_texts.py): Debian's bearerbox and
smsbox (package `kannel`) with the fake phone network fakesmsc (`kannel-extras`) behind them,
in a folder of their own on free ports of 127.0.0.1. deploy/kannel/kannel.conf is the
production shape of the same configuration.

    gateway = Kannel(folder)          # ports chosen, nothing runs yet; gateway.env is known
    gateway.start()                   # bearerbox, smsbox, fakesmsc, each waited for
    server = Server(clinic, gateway.env, args=("--port", str(gateway.server_port)))
    gateway.phone.send("+12025550101", "STOP")          # a text from a phone (MO)
    gateway.phone.wait_for(lambda texts: ..., timeout)  # the texts the phones got (MT)
    gateway.wait_answered(n)          # smsbox has finished with n MOs (its access log)
    gateway.settle()                  # every text bearerbox has had reached the phones
    gateway.stop_gateway(); gateway.start_gateway()     # the gateway down and up again
    gateway.stop()

The ordering: `clinic serve` must know CLINIC_SMS_URL when it starts, and Kannel's sms-service
must know the server's address when it starts. Both are fixed before either runs: Kannel takes
a free port for the server too (`server_port`), the server is started on it with `--port N`
(the last --port wins over conftest's `--port 0`), and CLINIC_SMS_CALLBACK_URL and the
sms-service's get-url point at it. Kannel does not need the server to be up to start; an MO that
finds it down is retried (`http-request-retry`).

What fakesmsc (Kannel 1.4.5) does, found by running it (it has no other documentation):
- It connects to bearerbox's `smsc = fake` port. In interactive mode (no message arguments) it
  reads MOs from stdin as `FROM TO text CONTENT` (or `FROM TO ucs2 URLENCODED-UTF-16BE`), and
  logs every MT on stderr, not stdout, as `... DEBUG: Got message N: <FROM TO text CONTENT>`,
  `<FROM TO ucs-2 URLENCODED-UTF-16BE>`, `<FROM TO data URLENCODED>` or, for each part of a
  concatenated text, `<FROM TO udh URLENCODED-UDH data URLENCODED-PART>` (that form does not
  say whether the part is UCS-2). A plain text's newline ends the line: the rest comes as
  `Got message N+1: <rest>`.
- It reads stdin one line per wake-up: lines written together stay in its buffer until more
  input comes. Phone.send writes one line and waits for fakesmsc's `sent message N` first.
- It takes about a second to take an MT off its socket (bearerbox writes it at once): a text
  reaches `phone` a second after sendsms, whatever `-i` says.
- `+` travels as it is both ways: `FROM` `+12025550101` reaches the get-url's %p as
  `%2B12025550101`, and sendsms `to=%2B12025550123` reaches fakesmsc as `+12025550123`.
- It exits (after a glibc "double free" message) when bearerbox goes away; smsbox exits too
  ("Bearerbox told us to die"). start_gateway starts all three again; the texts received so far
  stay in `phone`.
- With dlr-mask 31 the fake SMSC reports 8 (SMSC accepted) and 1 (delivered) for each text,
  in either order (a concatenated text: one 8 and one 1 in all).
"""
import http.client
import importlib.util
import os
import re
import secrets
import select
import signal
import socket
import subprocess
import threading
import time
import urllib.parse

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BEARERBOX = os.environ.get("KANNEL_BEARERBOX", "/usr/sbin/bearerbox")
SMSBOX = os.environ.get("KANNEL_SMSBOX", "/usr/sbin/smsbox")
FAKESMSC = os.environ.get("KANNEL_FAKESMSC", "/usr/lib/kannel/test/fakesmsc")

BARRIER = "+15550199"  # the number Kannel.settle texts

# Characters of the GSM 03.38 default alphabet and its extension table: a text made of these
# goes as `text` (coding 0); any other goes as UCS-2.
GSM7 = set("@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§"
           "¿abcdefghijklmnopqrstuvwxyzäöñüà^{}\\[~]|€")


def gsm7(text):
    """Whether `text` fits the GSM 7-bit alphabet (coding 0); else it needs UCS-2 (coding 2)."""
    return all(character in GSM7 for character in text)


def free_ports(count):
    """`count` different free ports below the ephemeral range (scripts/free-ports.py)."""
    spec = importlib.util.spec_from_file_location("free_ports", os.path.join(HERE, "..", "..", "scripts", "free-ports.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.free_ports(count)


def _unquote(value):
    """Kannel's URL encoding (octstr_url_encode): `+` is a space, %XX a byte."""
    return urllib.parse.unquote_to_bytes(value.replace("+", " "))


def _concatenation(udh):
    """(reference, total, number) of a concatenated part's UDH, or None."""
    index = 1
    while index + 1 < len(udh):
        element, length = udh[index], udh[index + 1]
        body = udh[index + 2:index + 2 + length]
        if element == 0x00 and length == 3:
            return body[0], body[1], body[2]
        if element == 0x08 and length == 4:
            return (body[0] << 8) | body[1], body[2], body[3]
        index += 2 + length
    return None


def _decode_parts(data):
    """A concatenated text's bytes: fakesmsc does not say their coding. UCS-2 of any script has
    control bytes (0x00 for Latin, 0x04 for Cyrillic) in its high bytes; the UTF-8 Kannel keeps
    a 7-bit text in has none."""
    if len(data) % 2 == 0 and any(byte < 0x09 for byte in data[0::2]):
        try:
            return data.decode("utf-16-be"), "ucs-2"
        except UnicodeDecodeError:
            pass
    return data.decode("utf-8", errors="replace"), "text"


MT_LINE = re.compile(r"^(\S+) (\S+) (text|ucs-2|data|udh) ?(.*)$", re.S)
GOT = re.compile(r"Got message (\d+): <(.*)>$", re.S)
SENT = re.compile(r"fakesmsc: sent message (\d+)")


class Phone:
    """The phones on the far side of the fake SMSC (fakesmsc). `messages`: every text (MT) the
    phones received, in order, as dicts {from, to, text, coding, parts}; `send` is a text from a
    phone (MO)."""

    def __init__(self, gateway):
        self.gateway = gateway
        self.process = None
        self.reader = None
        self.lock = threading.Condition()
        self.messages = []
        self.sent = 0          # MOs fakesmsc reported sent, this process
        self.parts = {}        # (from, to, reference) -> {number: bytes}
        self.pending = None    # a plain text that may go on in the next line
        self.send_lock = threading.Lock()

    # The process

    def _start(self):
        log = open(os.path.join(self.gateway.folder, "fakesmsc.log"), "ab")
        with self.lock:
            self.sent = 0
            self.parts = {}
        self.process = subprocess.Popen(
            [FAKESMSC, "-H", "127.0.0.1", "-r", str(self.gateway.smsc_port), "-i", "0.01"],
            stdin=subprocess.PIPE, stdout=log, stderr=subprocess.PIPE)
        self.reader = threading.Thread(target=self._read, args=(self.process, log), daemon=True)
        self.reader.start()

    def _read(self, process, log):
        """fakesmsc's stderr, line by line. A plain text is held until the next text or 0.2 s of
        quiet, for the rest of it after a newline comes as a line of its own."""
        descriptor = process.stderr.fileno()
        buffer = b""
        try:
            while True:
                ready, _, _ = select.select([descriptor], [], [], 0.2)
                if not ready:
                    self._publish()
                    continue
                chunk = os.read(descriptor, 65536)
                if not chunk:
                    break
                log.write(chunk)
                log.flush()
                *lines, buffer = (buffer + chunk).split(b"\n")
                for raw in lines:
                    self._line(raw.decode("utf-8", errors="replace"))
        finally:
            self._publish()
            log.close()

    def _line(self, line):
        sent = SENT.search(line)
        if sent:
            with self.lock:
                self.sent = int(sent.group(1))
                self.lock.notify_all()
            return
        got = GOT.search(line)
        if got:
            self._received(got.group(2))

    def _publish(self):
        with self.lock:
            if self.pending is not None:
                self.messages.append(self.pending)
                self.pending = None
                self.lock.notify_all()

    def _received(self, line):
        match = MT_LINE.match(line)
        with self.lock:
            if not match:
                # The rest of a plain text after a newline.
                if self.pending is not None:
                    self.pending["text"] += "\n" + line
                elif self.messages and self.messages[-1]["coding"] == "text" and self.messages[-1]["parts"] == 1:
                    self.messages[-1]["text"] += "\n" + line
                    self.lock.notify_all()
                return
            if self.pending is not None:
                self.messages.append(self.pending)
                self.pending = None
                self.lock.notify_all()
            sender, receiver, kind, rest = match.groups()
            message = {"from": sender, "to": receiver, "coding": kind, "parts": 1, "at": time.monotonic()}
            if kind == "text":
                message["text"] = rest
                self.pending = message
                return
            if kind == "ucs-2":
                message["text"] = _unquote(rest).decode("utf-16-be", errors="replace")
            elif kind == "data":
                message["text"] = _unquote(rest).decode("utf-8", errors="replace")
            else:
                udh, _, data = rest.partition(" data ")
                udh, data = _unquote(udh), _unquote(data)
                concatenated = _concatenation(udh)
                if concatenated is None:
                    message["text"], message["coding"] = _decode_parts(data)
                else:
                    reference, total, number = concatenated
                    parts = self.parts.setdefault((sender, receiver, reference), {})
                    parts[number] = data
                    if len(parts) < total:
                        self.lock.notify_all()
                        return
                    del self.parts[(sender, receiver, reference)]
                    message["text"], message["coding"] = _decode_parts(b"".join(parts[n] for n in sorted(parts)))
                    message["parts"] = total
            self.messages.append(message)
            self.lock.notify_all()

    def _stop(self, timeout=10):
        process = self.process
        if process is None:
            return
        try:
            process.stdin.close()
        except OSError:
            pass
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=timeout)
        if self.reader:
            self.reader.join(timeout)
        self.process = None

    # The tests' side

    def send(self, from_number, text, to=None, coding=None, timeout=10):
        """A text from `from_number` to the clinic's number (or `to`): plain if it fits GSM 7-bit
        and has no newline, else UCS-2 (`coding`: "text" or "ucs2" to choose). Returns once
        fakesmsc has passed it to bearerbox."""
        to = to or self.gateway.number
        if coding is None:
            coding = "text" if gsm7(text) and "\n" not in text and "\r" not in text else "ucs2"
        if coding == "text":
            assert "\n" not in text and "\r" not in text, "a plain MO is one line; send it as ucs2"
            line = f"{from_number} {to} text {text}\n"
        else:
            line = f"{from_number} {to} ucs2 {urllib.parse.quote(text.encode('utf-16-be'), safe='')}\n"
        with self.send_lock:
            assert self.process is not None and self.process.poll() is None, "fakesmsc is not running"
            with self.lock:
                before = self.sent
            self.process.stdin.write(line.encode())
            self.process.stdin.flush()
            deadline = time.monotonic() + timeout
            with self.lock:
                while self.sent <= before:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise AssertionError(f"fakesmsc did not send {line.strip()!r} within {timeout} s\n"
                                             + self.gateway.logs())
                    self.lock.wait(left)

    def snapshot(self):
        with self.lock:
            return [dict(message) for message in self.messages]

    def received_by(self, number):
        """The texts `number` received, in order."""
        return [message for message in self.snapshot() if message["to"] == number]

    def wait_for(self, what, timeout=15):
        """Waits until the phones have received `what` texts in all (an int), or until
        `what(texts)` is true (a function given the list of texts so far); returns the list."""
        if isinstance(what, int):
            count = what
            what = lambda texts: len(texts) >= count  # noqa: E731
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                texts = [dict(message) for message in self.messages]
                if what(texts):
                    return texts
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out after {timeout} s waiting for texts; the phones have {texts}\n"
                                         + self.gateway.logs())
                self.lock.wait(min(left, 0.5))


class Kannel:
    """bearerbox + smsbox + fakesmsc on free ports of 127.0.0.1, configured in `folder`
    (kannel.conf, the logs). `callback_url`: where Kannel reaches the clinic server (default
    http://127.0.0.1:`server_port`, a free port taken for it)."""

    def __init__(self, folder, callback_url=None, secret=None, sender="Clinic", number="+15550100",
                 http_retries=2, http_retry_delay=1):
        self.folder = folder
        os.makedirs(folder, exist_ok=True)
        self.admin_port, self.box_port, self.sendsms_port, self.smsc_port, self.server_port = free_ports(5)
        self.callback_url = (callback_url or f"http://127.0.0.1:{self.server_port}").rstrip("/")
        self.user = "clinic"
        self.password = secrets.token_hex(12)
        self.admin_password = secrets.token_hex(12)
        self.secret = secret or secrets.token_hex(16)
        self.sender = sender
        self.number = number            # the clinic's own number: the receiver of every MO
        self.http_retries = http_retries
        self.http_retry_delay = http_retry_delay
        self.config_path = os.path.join(folder, "kannel.conf")
        self.bearerbox = None
        self.smsbox = None
        self.phone = Phone(self)

    @property
    def sendsms_url(self):
        return f"http://127.0.0.1:{self.sendsms_port}/cgi-bin/sendsms"

    @property
    def env(self):
        """The CLINIC_SMS_* settings of `clinic serve` for this gateway."""
        return {
            "CLINIC_SMS_URL": self.sendsms_url,
            "CLINIC_SMS_USER": self.user,
            "CLINIC_SMS_PASSWORD": self.password,
            "CLINIC_SMS_FROM": self.sender,
            "CLINIC_SMS_SECRET": self.secret,
            "CLINIC_SMS_CALLBACK_URL": self.callback_url,
        }

    def config(self):
        folder = self.folder
        return f"""# Written by Tests/python/kannel.py; deploy/kannel/kannel.conf is the production shape.
group = core
admin-port = {self.admin_port}
admin-interface = 127.0.0.1
admin-password = {self.admin_password}
status-password = {self.admin_password}
admin-allow-ip = "127.0.0.1"
smsbox-port = {self.box_port}
box-deny-ip = "*.*.*.*"
box-allow-ip = "127.0.0.1"
log-file = "{folder}/bearerbox.log"
log-level = 0
access-log = "{folder}/bearerbox-access.log"
dlr-storage = internal

group = smsc
smsc = fake
smsc-id = fake
host = 127.0.0.1
port = {self.smsc_port}
connect-allow-ip = "127.0.0.1"

group = smsbox
bearerbox-host = 127.0.0.1
bearerbox-port = {self.box_port}
sendsms-port = {self.sendsms_port}
sendsms-interface = 127.0.0.1
log-file = "{folder}/smsbox.log"
log-level = 0
access-log = "{folder}/smsbox-access.log"
mo-recode = true
http-request-retry = {self.http_retries}
http-queue-delay = {self.http_retry_delay}
reply-couldnotfetch = ""
reply-couldnotrepresent = ""
reply-requestfailed = ""
reply-emptymessage = ""

group = sendsms-user
username = {self.user}
password = {self.password}
user-deny-ip = "*.*.*.*"
user-allow-ip = "127.0.0.1"
concatenation = true
max-messages = 4

group = sms-service
keyword = default
catch-all = true
get-url = "{self.callback_url}/v1/texts/incoming?key={self.secret}&from=%p&to=%P&text=%b"
accept-x-kannel-headers = true
max-messages = 3
concatenation = true
omit-empty = true
"""

    # Processes

    def start(self, callback_url=None, timeout=30):
        if callback_url:
            self.callback_url = callback_url.rstrip("/")
        self.start_gateway(timeout)
        return self

    def _spawn(self, program, name):
        with open(os.path.join(self.folder, f"{name}.out"), "ab") as out:
            return subprocess.Popen([program, "-v", "1", self.config_path], stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, cwd=self.folder)

    def start_gateway(self, timeout=30):
        """Starts bearerbox, smsbox and fakesmsc, and waits until smsbox is connected, the fake
        SMSC online and sendsms answers."""
        assert self.bearerbox is None, "the gateway runs already"
        with open(self.config_path, "w") as handle:
            handle.write(self.config())
        deadline = time.monotonic() + timeout
        try:
            self.bearerbox = self._spawn(BEARERBOX, "bearerbox")
            self._wait(lambda: self.status() is not None, deadline, "bearerbox's status page", self.bearerbox)
            self.smsbox = self._spawn(SMSBOX, "smsbox")
            self.phone._start()
            self._wait(self._ready, deadline, "smsbox and fakesmsc connected, sendsms listening", self.bearerbox,
                       self.smsbox, self.phone.process)
        except BaseException:
            self.stop_gateway()
            raise

    def _ready(self):
        status = self.status() or ""
        if not re.search(r"smsbox:\S*, IP 127\.0\.0\.1 .*on-line", status):
            return False
        if not re.search(rf"fake\[fake\]\s+FAKE:{self.smsc_port} \(online", status):
            return False
        try:
            socket.create_connection(("127.0.0.1", self.sendsms_port), timeout=1).close()
        except OSError:
            return False
        return True

    def _wait(self, condition, deadline, what, *processes):
        while not condition():
            for process in processes:
                if process is not None and process.poll() is not None:
                    raise AssertionError(f"{process.args[0]} exited {process.returncode} before {what}\n" + self.logs())
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}\n" + self.logs())
            time.sleep(0.05)

    def stop_gateway(self, kill=False, timeout=15):
        """Takes the gateway down: smsbox, fakesmsc and bearerbox stopped (SIGTERM, or SIGKILL
        with `kill`; whatever is left after `timeout` is killed). sendsms is then refused
        (connection refused) until start_gateway. (bearerbox alone stopped would end the other
        two as well, but takes a second to.)"""
        processes = [process for process in (self.smsbox, self.phone.process, self.bearerbox) if process is not None]
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for process in processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        self.phone._stop()
        self.bearerbox = self.smsbox = None

    def stop(self):
        """Ends all three at once (SIGKILL: bearerbox's graceful stop takes a second)."""
        self.stop_gateway(kill=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # Looking in

    def status(self):
        """bearerbox's status.txt, or None while it does not answer."""
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.admin_port, timeout=2)
            try:
                connection.request("GET", "/status.txt?password=" + self.admin_password)
                response = connection.getresponse()
                body = response.read().decode(errors="replace")
            finally:
                connection.close()
        except (OSError, http.client.HTTPException):
            return None
        return body if response.status == 200 else None

    def answered(self):
        """The MOs smsbox has finished with, in order, as (sender, HTTP status) — the status of
        the get-url's last attempt (0 when the server could not be reached). Read from smsbox's
        access log, written after the answer was turned into a reply (or none)."""
        path = os.path.join(self.folder, "smsbox-access.log")
        if not os.path.exists(path):
            return []
        with open(path, errors="replace") as handle:
            return [(match.group(1), int(match.group(2))) for match in
                    re.finditer(r"SMS HTTP-request sender:(\S*) .* reply: (-?\d+) ", handle.read())]

    def wait_answered(self, count, timeout=20):
        """Waits until smsbox has finished with `count` MOs in all; returns answered()."""
        deadline = time.monotonic() + timeout
        while len(self.answered()) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"smsbox finished {len(self.answered())} MOs, not {count}\n" + self.logs())
            time.sleep(0.05)
        return self.answered()

    def sendsms(self, to, text, coding=None, dlr_url=None, dlr_mask=31, sender=None, timeout=10):
        """One sendsms request as the clinic server sends it: (HTTP status, body). Raises
        OSError while the gateway is down."""
        if coding is None:
            coding = 0 if gsm7(text) else 2
        fields = {"username": self.user, "password": self.password, "from": sender or self.sender, "to": to,
                  "text": text, "charset": "UTF-8", "coding": str(coding)}
        if dlr_url:
            fields.update({"dlr-mask": str(dlr_mask), "dlr-url": dlr_url})
        connection = http.client.HTTPConnection("127.0.0.1", self.sendsms_port, timeout=timeout)
        try:
            connection.request("GET", "/cgi-bin/sendsms?" + urllib.parse.urlencode(fields))
            response = connection.getresponse()
            return response.status, response.read().decode(errors="replace")
        finally:
            connection.close()

    def settle(self, timeout=15):
        """Sends a text of its own to BARRIER (a number no test uses) and waits for it: every text
        bearerbox had before it (an MO's reply smsbox has logged in answered(), say) has reached
        the phones by then, one connection to the fake SMSC taking them in order."""
        marker = "settle " + secrets.token_hex(6)
        status, body = self.sendsms(BARRIER, marker, coding=0)
        assert status == 202, body
        self.phone.wait_for(lambda texts: any(t["to"] == BARRIER and t["text"] == marker for t in texts), timeout)

    def logs(self, lines=25):
        """The last lines of each log, for failure messages."""
        parts = []
        for name in ("bearerbox.out", "bearerbox.log", "smsbox.out", "smsbox.log", "smsbox-access.log", "fakesmsc.log"):
            path = os.path.join(self.folder, name)
            if os.path.exists(path):
                with open(path, errors="replace") as handle:
                    tail = handle.readlines()[-lines:]
                parts.append(f"--- {name}\n" + "".join(tail))
        return "\n".join(parts)


@pytest.fixture
def kannel(tmp_path):
    """A started gateway in tmp_path/kannel whose callback is http://127.0.0.1:`server_port`
    (start the clinic server, or a stand-in, there)."""
    gateway = Kannel(os.path.join(str(tmp_path), "kannel"))
    gateway.start()
    try:
        yield gateway
    finally:
        gateway.stop()
