#!/usr/bin/env bash
# The calendar and e-mail tests (Tests/python): every .ics the project writes read back with
# the `icalendar` package through its own VTIMEZONE, and e-mail through a real SMTP server
# (aiosmtpd on 127.0.0.1) driven by the clinic binary and `clinic serve`, with libfaketime
# moving the clock for reminders and back-offs.
#
#   CLINIC_BIN  the clinic binary (default .build/debug/clinic; build it first)
#   MAIL_VENV   Python venv for the tests (default .build/mail-venv; made if missing)
#
# Takes about half a minute, plus the first install.
set -euo pipefail

caller=$PWD
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
absolute() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$caller/$1" ;; esac; }
export CLINIC_BIN=$(absolute "${CLINIC_BIN:-$root/.build/debug/clinic}")
VENV=$(absolute "${MAIL_VENV:-$root/.build/mail-venv}")
cd "$root"

[ -x "$CLINIC_BIN" ] || { echo "mail-test: no clinic binary at $CLINIC_BIN (run swift build)" >&2; exit 2; }
command -v faketime >/dev/null || { echo "mail-test: faketime is missing (apt-get install faketime)" >&2; exit 2; }

requirements="aiosmtpd==1.4.6 icalendar==7.3.0 pytest==8.4.2"
if ! "$VENV/bin/python" -c "import aiosmtpd, icalendar, pytest" 2>/dev/null \
    || [ "$("$VENV/bin/pip" freeze 2>/dev/null | grep -ciE '^(aiosmtpd==1.4.6|icalendar==7.3.0|pytest==8.4.2)$')" != 3 ]; then
    echo "mail-test: installing $requirements into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check $requirements
fi
cd Tests/python
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider .
