#!/usr/bin/env bash
# Writes PNG screenshots of the web app's main pages at 390x844 and 1280x800 into
# docs/screenshots/ (scripts/screenshots.py): builds the clinic binary, makes the Python
# venv the browser tests use (.build/py-venv), runs headless Chromium. About a minute.
source "$(dirname "$0")/env.sh"
swift build --product clinic >&2
export CLINIC_BIN="${CLINIC_BIN:-$PWD/.build/debug/clinic}"
VENV="${PY_VENV:-$PWD/.build/py-venv}"
if ! "$VENV/bin/python" -c "import selenium, axe_selenium_python, pytest, aiosmtpd" 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check aiosmtpd==1.4.6 icalendar==7.3.0 pytest==8.4.2 \
        selenium==4.51.0 axe-selenium-python==2.1.6
fi
exec "$VENV/bin/python" scripts/screenshots.py
