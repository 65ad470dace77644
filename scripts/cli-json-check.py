#!/usr/bin/env python3
"""Checks that `clinic --json` prints the shapes of the HTTP API's contract.

Every command that has an API counterpart is run on a fresh temporary database, its JSON
(stdout; stderr for an error) is parsed and validated with JSON Schema Draft 2020-12
against the component of openapi.yaml that the API answers with: `clinics nearest` is an
array of NearbyClinic, `appointments show` an AppointmentWithHistory, an error an Error.
openapi.yaml is read when the script runs, so it checks the contract as it is now.

Usage: scripts/cli-json-check.py [CLINIC_BIN]
  CLINIC_BIN        the binary (argument 1, else $CLINIC_BIN, else .build/debug/clinic)
  CLINIC_RESOURCES  where Data/ and Migrations/ are (default: this repository)

Prints one line per check and then `N passed, M failed`; exits 1 if any check failed.
Needs Python 3 with jsonschema (4.18 or later preferred) and PyYAML.
"""

import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import jsonschema
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPENAPI = os.path.join(ROOT, "openapi.yaml")
COMMAND_TIMEOUT = 20  # seconds, for one command

DIRECTORY_CSV = """\
external_id,name,address,city,state,zip,lat,lon,category,is_pediatric,is_hospital
LA1,Adventist Medical Center,115 Mall Drive,Los Angeles,CA,90001,34.05,-118.25,GENERAL ACUTE CARE,0,1
LA2,Children's Hospital,"4650 Sunset Blvd, Suite 1",Los Angeles,CA,90027,34.10,-118.29,CHILDREN,1,1
RN1,Renown Regional,1155 Mill Street,Reno,NV,89502,39.52,-119.80,CRITICAL ACCESS,0,1
"""

PASSWORD = "violet tuesday harbour lamp"
NEW_PASSWORD = "green mountain river stone"

# Shapes the CLI prints where the API answers with another shape (or no body). They are
# not in openapi.yaml; these follow docs/CLI.md, and the check says which API shape differs.
CLI_ONLY = {
    "cli:LogIn": {  # API: POST /v1/sessions answers SessionCreated {token, expiresAt, patient}
        "type": "object",
        "required": ["clientId", "login"],
        "properties": {"clientId": {"type": "integer"}, "login": {"type": "string"}},
        "additionalProperties": False,
    },
    "cli:Removed": {  # API: DELETE /v1/appointments/{id}/attachments/{aid} answers 204 with no body
        "type": "object",
        "required": ["removed"],
        "properties": {"removed": {"type": "integer"}},
        "additionalProperties": False,
    },
    "cli:LogOut": {  # API: DELETE /v1/sessions/current answers 204 with no body
        "type": "object",
        "required": ["loggedOut"],
        "properties": {"loggedOut": {"type": "boolean"}},
        "additionalProperties": False,
    },
}

# An instant as docs/CLI.md pins it: ISO 8601 in UTC with Z, no fractional seconds. The
# date-time format is checked here rather than by an optional package, so the check is the
# same wherever the script runs.
INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def is_instant(value):
    if not isinstance(value, str):
        return True
    if not INSTANT.match(value):
        return False
    try:
        datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return False
    return True


def make_format_checker():
    checker = jsonschema.FormatChecker(formats=())
    checker.checks("date-time")(is_instant)
    return checker


class Contract:
    """openapi.yaml's components, as validators for `Name` or `[Name]`."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.document = yaml.safe_load(f)
        self.schemas = self.document.get("components", {}).get("schemas", {})
        self.format_checker = make_format_checker()
        self.uri = "urn:clinic:openapi"
        self.registry = None
        try:  # jsonschema 4.18+: resolve $refs through a referencing Registry
            from referencing import Registry, Resource
            from referencing.jsonschema import DRAFT202012

            resource = Resource.from_contents(self.document, default_specification=DRAFT202012)
            self.registry = Registry().with_resource(self.uri, resource)
        except ImportError:  # older jsonschema: the components ride along in the root schema
            pass

    def has(self, name):
        return name in CLI_ONLY or name in self.schemas

    def validator(self, name, array=False):
        if name in CLI_ONLY:
            schema = CLI_ONLY[name]
        elif self.registry is not None:
            schema = {"$ref": self.uri + "#/components/schemas/" + name}
        else:
            schema = {"$ref": "#/components/schemas/" + name, "components": self.document["components"]}
        if array:
            schema = {"type": "array", "items": schema}
            if "components" in schema["items"]:
                schema["components"] = schema["items"].pop("components")
                schema["items"] = {"$ref": "#/components/schemas/" + name}
        schema = dict(schema, **{"$schema": "https://json-schema.org/draft/2020-12/schema"})
        kwargs = {"format_checker": self.format_checker}
        if self.registry is not None:
            kwargs["registry"] = self.registry
        return jsonschema.Draft202012Validator(schema, **kwargs)

    def errors(self, name, value, array=False):
        """The validation errors, as short strings (empty when the value is valid)."""
        found = sorted(self.validator(name, array).iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
        # An error inside an object also makes unevaluatedProperties list all of its keys: drop that echo.
        paths = [tuple(e.absolute_path) for e in found]
        found = [e for e in found
                 if e.validator != "unevaluatedProperties"
                 or not any(len(p) > len(e.absolute_path) and p[:len(e.absolute_path)] == tuple(e.absolute_path) for p in paths)]
        return ["%s: %s" % (json_path(e.absolute_path), e.message) for e in found]


def json_path(parts):
    path = "$"
    for part in parts:
        path += "[%d]" % part if isinstance(part, int) else "." + str(part)
    return path


def abridged(value, limit=60):
    """VALUE with long strings cut, to show a JSON value in one line."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - 1] + "…"
    if isinstance(value, list):
        return [abridged(v, limit) for v in value]
    if isinstance(value, dict):
        return {k: abridged(v, limit) for k, v in value.items()}
    return value


def shorten(text, limit=300):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Checker:
    def __init__(self, binary, contract, env):
        self.binary = binary
        self.contract = contract
        self.env = env
        self.passed = 0
        self.failed = 0

    def report(self, ok, label, reason=""):
        if ok:
            self.passed += 1
            print("ok  " + label, flush=True)
        else:
            self.failed += 1
            print("FAIL " + label + (": " + reason if reason else ""), flush=True)

    def run(self, args, stdin=None):
        return subprocess.run([self.binary] + args, input=stdin, capture_output=True, text=True,
                              env=self.env, timeout=COMMAND_TIMEOUT)

    def run_json(self, args):
        """The JSON that a successful `clinic ARGS` prints, or None."""
        try:
            result = self.run(args)
            return json.loads(result.stdout) if result.returncode == 0 else None
        except (subprocess.TimeoutExpired, ValueError):
            return None

    def check(self, title, args, schema, array=False, stdin=None, error=None, exit_code=None,
              nonempty=False, expect=None, note=""):
        """Runs `clinic ARGS` and validates its JSON against SCHEMA (`[SCHEMA]` with ARRAY).

        error: the expected error code; the command must then fail, with nothing on stdout and
        the Error JSON on stderr. expect: a function of the parsed JSON that returns a problem
        (a string) or None. Returns the parsed JSON, or None when the check failed."""
        shape = "[%s]" % schema if array else schema
        label = "%s → %s%s" % (title, shape, " (" + note + ")" if note else "")
        if not self.contract.has(schema):
            self.report(False, label, "openapi.yaml has no components/schemas/" + schema)
            return None
        try:
            result = self.run(args, stdin)
        except subprocess.TimeoutExpired:
            self.report(False, label, "no answer within %d s" % COMMAND_TIMEOUT)
            return None
        if error is None:
            if result.returncode != 0:
                self.report(False, label, "exit %d, stderr: %s" % (result.returncode, shorten(result.stderr)))
                return None
            text, stream = result.stdout, "stdout"
        else:
            if result.returncode == 0:
                self.report(False, label, "exit 0 where an error was expected; stdout: %s" % shorten(result.stdout))
                return None
            if exit_code is not None and result.returncode != exit_code:
                self.report(False, label, "exit %d, expected %d; stderr: %s"
                            % (result.returncode, exit_code, shorten(result.stderr)))
                return None
            if result.stdout.strip():
                self.report(False, label, "an error printed on stdout: " + shorten(result.stdout))
                return None
            text, stream = result.stderr, "stderr"
        try:
            value = json.loads(text)
        except ValueError as e:
            self.report(False, label, "%s is not one JSON value (%s): %s" % (stream, e, shorten(text)))
            return None
        try:
            problems = self.contract.errors(schema, value, array)
        except Exception as e:  # an unresolvable $ref, a broken schema
            self.report(False, label, "cannot validate: %s: %s" % (type(e).__name__, shorten(e)))
            return None
        if problems:
            more = " (+%d more)" % (len(problems) - 3) if len(problems) > 3 else ""
            self.report(False, label, "; ".join(problems[:3]) + more + " — JSON: " + shorten(json.dumps(abridged(value), ensure_ascii=False, sort_keys=True), 500))
            return None
        codes = (error,) if isinstance(error, str) else error
        if error is not None and value["error"]["code"] not in codes:
            self.report(False, label, "code %s, expected %s" % (value["error"]["code"], " or ".join(codes)))
            return None
        if nonempty and not value:
            self.report(False, label, "an empty array proves nothing: expected at least one element")
            return None
        if expect is not None:
            problem = expect(value)
            if problem:
                self.report(False, label, problem)
                return None
        self.report(True, label)
        return value

    def sanity(self):
        """The validator itself rejects what it should, so a pass means something."""
        label = "validator rejects bad shapes (extra key, missing key, wrong type, bad instant)"
        cases = [
            ("Patient", False, {"id": 1, "login": "a", "name": "A", "surname": "B", "street": "S",
                                "house": "1", "city": "C", "language": "en", "bogus": 1}),
            ("NearbyClinic", True, [{"id": 1}]),
            ("Appointment", False, {"id": "1", "clinicId": 1, "departmentId": 1, "doctorId": 1,
                                    "doctorName": "D", "start": "2030-01-07T16:00:00Z",
                                    "end": "2030-01-07T16:20:00Z", "status": "scheduled", "notes": ""}),
            ("Slot", False, {"doctorId": 1, "doctorName": "D", "start": "2030-01-07 16:00",
                             "end": "2030-01-07T16:20:00Z", "isAvailable": True}),
        ]
        try:
            accepted = [name for name, array, value in cases
                        if self.contract.has(name) and not self.contract.errors(name, value, array)]
        except Exception as e:
            self.report(False, label, "cannot validate: %s: %s" % (type(e).__name__, shorten(e)))
            return
        self.report(not accepted, label, "accepted a bad " + ", ".join(accepted))


def monday_ahead(days=8):
    """The first Monday at least DAYS days from today (UTC): its slots are all in the
    future, past the lead time and the cutoff, whatever the time of day."""
    day = datetime.datetime.now(datetime.timezone.utc).date() + datetime.timedelta(days=days)
    return day + datetime.timedelta(days=(7 - day.weekday()) % 7)


def main():
    started = time.monotonic()
    binary = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CLINIC_BIN") or os.path.join(ROOT, ".build/debug/clinic")
    binary = os.path.abspath(binary)
    if not os.access(binary, os.X_OK):
        print("cli-json-check: no executable clinic at %s (pass it as argument 1 or CLINIC_BIN)" % binary, file=sys.stderr)
        return 2
    try:
        contract = Contract(OPENAPI)
    except Exception as e:  # someone is halfway through an edit, say
        print("FAIL openapi.yaml cannot be read: %s: %s" % (type(e).__name__, shorten(e)))
        print("0 passed, 1 failed")
        return 1

    with tempfile.TemporaryDirectory(prefix="cli-json-check.") as tmp:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CLINIC_", "LC_", "XDG_")) and k not in ("LANG", "LANGUAGE", "TZ")}
        env.update({
            "CLINIC_DB": os.path.join(tmp, "data", "clinic.sqlite"),
            "CLINIC_SESSION": os.path.join(tmp, "state", "session"),
            "CLINIC_RESOURCES": os.environ.get("CLINIC_RESOURCES") or ROOT,
            "LANG": "C.UTF-8",
            "TZ": "UTC",
            "HOME": tmp,
        })
        c = Checker(binary, contract, env)
        c.sanity()

        csv_path = os.path.join(tmp, "clinics.csv")
        with open(csv_path, "w", encoding="utf-8") as f:
            f.write(DIRECTORY_CSV)
        imported = c.run_json(["admin", "import-clinics", csv_path, "--demo", "--json"])
        if not isinstance(imported, dict) or imported.get("inserted") != 3:
            c.report(False, "setup: admin import-clinics --demo", "expected 3 new clinics, got %s" % shorten(imported))
            print("%d passed, %d failed" % (c.passed, c.failed))
            return 1

        # The directory, without a login.
        c.check("privacy", ["privacy", "--json"], "PrivacyPolicy")
        c.check("clinics list", ["clinics", "list", "--json"], "Clinic", array=True, nonempty=True,
                expect=lambda v: None if len(v) == 3 else "expected the 3 imported clinics, got %d" % len(v))
        c.check("clinics list --city --pediatric", ["clinics", "list", "--city", "los angeles", "--pediatric", "--json"],
                "Clinic", array=True, nonempty=True)
        listed = c.run_json(["clinics", "list", "--json"]) or []
        la1 = next((x for x in listed if isinstance(x, dict) and x.get("name") == "Adventist Medical Center"), None)
        clinic_id = str(la1.get("id", 1)) if la1 else "1"
        detail = c.check("clinics show " + clinic_id, ["clinics", "show", clinic_id, "--json"], "ClinicDetail",
                         expect=lambda v: None if v.get("departments") else "the clinic has no departments (--demo)")
        c.check("clinics nearest --lat --lon", ["clinics", "nearest", "--lat", "34.06", "--lon", "-118.26", "--limit", "3", "--json"],
                "NearbyClinic", array=True, nonempty=True)
        c.check("clinics nearest --at", ["clinics", "nearest", "--at", "39.5,-119.8", "--json"],
                "NearbyClinic", array=True, nonempty=True)
        c.check("clinics nearest --address", ["clinics", "nearest", "--address", "Reno, NV", "--limit", "2", "--json"],
                "NearbyClinic", array=True, nonempty=True)
        c.check("clinics nearest --specialization --within-km",
                ["clinics", "nearest", "--lat", "34.06", "--lon", "-118.26", "--specialization", "cardiology",
                 "--within-km", "100", "--limit", "5", "--json"], "NearbyClinic", array=True, nonempty=True)
        c.check("departments " + clinic_id, ["departments", clinic_id, "--json"], "Department", array=True, nonempty=True)
        departments = (detail or {}).get("departments") or []
        therapy = next((d for d in departments if d.get("specialization") == "therapy"), departments[0] if departments else None)
        department_id = str(therapy["id"]) if therapy else "1"
        c.check("doctors " + department_id, ["doctors", department_id, "--json"], "Doctor", array=True, nonempty=True)
        day = monday_ahead().isoformat()
        slots = c.check("slots --department --from --days", ["slots", "--department", department_id, "--from", day, "--days", "2", "--json"],
                        "Slot", array=True, nonempty=True) or []
        c.check("find --lat --lon", ["find", "--specialization", "cardiology", "--lat", "34.06", "--lon", "-118.26", "--limit", "3", "--json"],
                "FreeSlot", array=True, nonempty=True)
        c.check("find --address", ["find", "--specialization", "Therapy", "--address", "Reno, NV", "--json"],
                "FreeSlot", array=True, nonempty=True)
        c.check("geocode (gazetteer)", ["geocode", "Reno, NV", "--json"], "Geocode")
        c.check("geocode (alternatives)", ["geocode", "Vincennes", "--json"], "Geocode",
                expect=lambda v: None if v.get("alternatives") else "expected alternatives for Vincennes")
        c.check("geocode (coordinates)", ["geocode", "34.05,-118.25", "--json"], "Geocode")

        # A patient.
        c.check("register", ["register", "--login", "maria", "--name", "Maria", "--surname", "Lopez", "--street", "Main St",
                             "--house", "12A", "--city", "Los Angeles", "--accept-privacy", "--password-stdin", "--json"],
                "Patient", stdin=PASSWORD + "\n", note="API: PatientEnvelope {patient}")
        c.check("login", ["login", "--login", "maria", "--password-stdin", "--json"], "cli:LogIn", stdin=PASSWORD + "\n",
                note="CLI-only shape; API: SessionCreated")
        c.check("whoami", ["whoami", "--json"], "Patient")
        c.check("profile", ["profile", "--json"], "Patient")
        c.check("profile show", ["profile", "show", "--json"], "Patient")
        c.check("profile edit", ["profile", "edit", "--street", "Elm St", "--house", "7", "--json"], "Patient",
                expect=lambda v: None if v.get("street") == "Elm St" and v.get("house") == "7" else "the change is not in the answer")
        c.check("clinics nearest --me", ["clinics", "nearest", "--me", "--json"], "NearbyClinic", array=True, nonempty=True)
        c.check("find --me", ["find", "--specialization", "therapy", "--me", "--json"], "FreeSlot", array=True, nonempty=True)

        # Appointments.
        free = [s for s in slots if s.get("isAvailable")]
        appointment = None
        if not free:
            c.report(False, "book → Appointment", "no free slot on %s to book" % day)
        else:
            first = free[0]
            appointment = c.check("book", ["book", "--department", department_id, "--at", first["start"], "--notes", "Cough", "--json"],
                                  "Appointment", expect=lambda v: None if v.get("start") == first["start"] and v.get("status") == "scheduled"
                                  else "expected a scheduled appointment at " + first["start"])
        if appointment:
            aid = str(appointment["id"])
            c.check("appointments", ["appointments", "--json"], "Appointment", array=True, nonempty=True)
            c.check("appointments list --all", ["appointments", "list", "--all", "--json"], "Appointment", array=True, nonempty=True)
            c.check("appointments list --past", ["appointments", "list", "--past", "--json"], "Appointment", array=True)
            later = [s for s in free if s["start"] != appointment["start"] and s["start"] >= appointment["end"]]
            if later:
                target = later[-1]["start"]
                c.check("reschedule", ["reschedule", aid, "--to", target, "--json"], "Appointment",
                        expect=lambda v: None if v.get("start") == target else "expected the start " + target)
            else:
                c.report(False, "reschedule → Appointment", "no other free slot on %s" % day)
            current = c.run_json(["appointments", "show", aid, "--json"]) or {}
            start = current.get("start", appointment["start"])
            c.check("error: book over one's own appointment", ["book", "--department", department_id, "--at", start, "--json"],
                    "Error", error=("overlapping_appointment", "slot_taken"), exit_code=5)
            c.check("appointments show " + aid, ["appointments", "show", aid, "--json"], "AppointmentWithHistory",
                    expect=lambda v: None if v.get("history") else "the history is empty")
            pdf = os.path.join(ROOT, "Tests", "ClinicImagesTests", "Fixtures", "tiny.pdf")
            attached = c.check("appointments attach", ["appointments", "attach", aid, pdf, "--json"], "Attachment",
                               expect=lambda v: None if v.get("contentType") == "application/pdf" else "not a PDF")
            c.check("appointments attachments", ["appointments", "attachments", aid, "--json"], "AttachmentList",
                    expect=lambda v: None if len(v.get("items", [])) == 1 else "not the one file")
            c.check("error: attach a file that is not there", ["appointments", "attach", aid, pdf + ".missing", "--json"],
                    "Error", error="invalid_input", exit_code=2)
            c.check("messages write", ["messages", "write", "--appointment", aid, "Is there parking?", "--json"], "ThreadMessage")
            c.check("messages thread", ["messages", "thread", "--appointment", aid, "--json"], "Conversation",
                    expect=lambda v: None if [m.get("text") for m in v.get("items", [])] == ["Is there parking?"] else "not the message")
            if attached:
                c.check("appointments attachment remove", ["appointments", "attachment", "remove", aid, str(attached["id"]), "--json"],
                        "cli:Removed")
            c.check("cancel", ["cancel", aid, "--json"], "Appointment",
                    expect=lambda v: None if v.get("status") == "cancelled" else "the status is not cancelled")
            c.check("appointments show (cancelled)", ["appointments", "show", aid, "--json"], "AppointmentWithHistory")
        else:
            for title in ("appointments", "appointments show", "reschedule", "cancel"):
                c.report(False, title + " → …", "skipped: nothing was booked")

        inbox = c.check("messages", ["messages", "--json"], "Message", array=True, nonempty=True)
        c.check("messages --unread", ["messages", "--unread", "--json"], "Message", array=True)
        message_id = str(inbox[0]["id"]) if isinstance(inbox, list) and inbox else "1"
        c.check("messages read", ["messages", "read", message_id, "--json"], "Message",
                expect=lambda v: None if v.get("readAt") else "the message is not marked read")
        c.check("profile email set", ["profile", "email", "set", "maria@example.org", "--json"], "Email")
        c.check("profile email", ["profile", "email", "--json"], "Email")
        c.check("profile calendar-url", ["profile", "calendar-url", "--json"], "CalendarToken")
        c.check("profile calendar-url --rotate", ["profile", "calendar-url", "--rotate", "--json"], "CalendarToken")
        c.check("profile export --json", ["profile", "export", "--json"], "Export",
                expect=lambda v: None if v.get("appointments") else "the export has no appointments")
        c.check("profile export", ["profile", "export"], "Export", note="JSON without --json")
        c.check("profile password --password-stdin", ["profile", "password", "--password-stdin", "--json"], "Changed",
                stdin=PASSWORD + "\n" + NEW_PASSWORD + "\n")
        c.check("whoami (after the password change)", ["whoami", "--json"], "Patient")
        c.check("profile delete --password-stdin", ["profile", "delete", "--password-stdin", "--json"], "Deleted",
                stdin=NEW_PASSWORD + "\n", expect=lambda v: None if v.get("deleted") == "maria" else "expected deleted: maria")
        c.check("logout (no session)", ["logout", "--json"], "cli:LogOut", note="CLI-only shape; API: 204 no body")

        # Errors: stderr, nothing on stdout, the exit status of the code.
        c.check("error: clinics show 999999", ["clinics", "show", "999999", "--json"], "Error", error="not_found", exit_code=4)
        c.check("error: whoami without a session", ["whoami", "--json"], "Error", error="not_logged_in", exit_code=3)
        c.check("error: clinics nearest without a location", ["clinics", "nearest", "--json"], "Error",
                error="invalid_input", exit_code=2)
        c.check("error: geocode an unknown place", ["geocode", "Qwertyuiopville", "--json"], "Error", error="geocode_failed", exit_code=4)
        c.check("error: login with a wrong password", ["login", "--login", "nobody", "--password-stdin", "--json"], "Error",
                stdin="wrong password 123\n", error="invalid_credentials", exit_code=3)
        c.check("error: register with a weak password", ["register", "--login", "cleo", "--name", "Cleo", "--surname", "Park",
                                                         "--street", "Main St", "--house", "1", "--city", "Reno, NV",
                                                         "--accept-privacy", "--password-stdin", "--json"],
                "Error", stdin="Password123\n", error="weak_password", exit_code=2)
        c.check("error: book without a session", ["book", "--department", department_id, "--at", (free[0]["start"] if free else day + "T16:00:00Z"), "--json"],
                "Error", error="not_logged_in", exit_code=3)

    print("time: %.1f s" % (time.monotonic() - started))
    print("%d passed, %d failed" % (c.passed, c.failed))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
