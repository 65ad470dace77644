#!/usr/bin/env bash
# The end-to-end tests written in Python (Tests/python), against the clinic binary and
# `clinic serve` on 127.0.0.1:
#   test_calendar.py  every .ics the project writes, read back with the `icalendar` package
#                     through its own VTIMEZONE;
#   test_mail.py      e-mail through a real SMTP server (aiosmtpd), libfaketime moving the clock;
#   test_web.py       the web app in headless Chromium (chromedriver, selenium), axe-core on
#                     every page;
#   test_fhir.py      the FHIR R4 front (docs/FHIR.md) with a FHIR client (fhirpy), every answer
#                     parsed with fhir.resources' R4B models; Location?near against the API;
#   test_multi_server.py
#                     three `clinic serve` on one throwaway PostgreSQL 15 (scripts/postgres.sh):
#                     double booking, the active-appointment limit, log-in throttling, the
#                     outbox, a directory import, a server killed and PostgreSQL stopped under load,
#                     claim codes and holds at once through three servers, sessions ended on one
#                     refused by the others within a second;
#   test_upload_load.py
#                     uploads from 300 connections and 100 HTTP/2 streams against one TLS server:
#                     its peak resident memory (/proc) stays under 400 MB;
#   test_texts.py     text messages through a real Kannel (bearerbox, smsbox, fakesmsc as the
#                     phone network, Tests/python/kannel.py): a number confirmed by its code, a
#                     freed time texted with a link that books once, STOP and START, delivery
#                     reports, a gateway down and back sending a text once;
#   test_cluster_secrets.py
#                     scripts/cluster.sh never writes a password into a file others can read.
#
#   CLINIC_BIN  the clinic binary (default .build/debug/clinic; build it first)
#   PY_VENV     Python venv for the tests (default .build/py-venv; made if missing)
#   Arguments: pytest arguments (default: the whole folder), e.g. test_web.py; or --install
#               alone: make the venv and stop
#   CLINIC_TEST_PORTS=LOW-HIGH  the ports the tests' servers may take (scripts/free-ports.py)
#   CLINIC_TEST_STORE=postgres  test_web.py on a PostgreSQL of its own
#   PG_BIN      PostgreSQL 15's programs (default /usr/lib/postgresql/15/bin, Debian's postgresql-15)
#
# Takes about three minutes, plus the first install.
set -euo pipefail

caller=$PWD
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
absolute() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$caller/$1" ;; esac; }
export CLINIC_BIN=$(absolute "${CLINIC_BIN:-$root/.build/debug/clinic}")
VENV=$(absolute "${PY_VENV:-$root/.build/py-venv}")
cd "$root"

[ -x "$CLINIC_BIN" ] || { echo "python-tests: no clinic binary at $CLINIC_BIN (run swift build)" >&2; exit 2; }
for tool in faketime chromium chromedriver; do
    command -v "$tool" >/dev/null || { echo "python-tests: $tool is missing (scripts/env.sh installs it)" >&2; exit 2; }
done
export PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
for tool in initdb pg_ctl psql; do
    [ -x "$PG_BIN/$tool" ] || { echo "python-tests: $PG_BIN/$tool is missing (postgresql-15; scripts/env.sh installs it)" >&2; exit 2; }
done

requirements="aiosmtpd==1.4.6 icalendar==7.3.0 pytest==8.4.2 selenium==4.51.0 axe-selenium-python==2.1.6 fhir.resources==8.3.0 fhirpy==2.3.1"
if ! "$VENV/bin/python" -c "import aiosmtpd, icalendar, pytest, selenium, axe_selenium_python, fhir.resources, fhirpy" 2>/dev/null \
    || [ "$("$VENV/bin/pip" freeze 2>/dev/null | grep -ciE '^(aiosmtpd==1.4.6|icalendar==7.3.0|pytest==8.4.2|selenium==4.51.0|axe-selenium-python==2.1.6|fhir.resources==8.3.0|fhirpy==2.3.1)$')" != 7 ]; then
    echo "python-tests: installing $requirements into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check $requirements
fi
# `--install`: the venv only (scripts/test.sh makes it before two runs share it).
[ "${1:-}" = --install ] && exit 0
cd Tests/python
# The slowest tests with their times at the end: where a run's minutes went.
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider --durations=12 "${@:-.}"
