#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite: unit and end-to-end tests
# (swift test), the Python end-to-end tests (calendars with icalendar, e-mail through a real
# SMTP server, the web app in headless Chromium with axe-core), then the API
# contract test (schemathesis against openapi.yaml, and the CLI's --json output against the
# same schemas). With arguments, only `swift test ARGS`.
source "$(dirname "$0")/env.sh"
swift build --build-tests
swift test "$@"
if [ $# -eq 0 ]; then
  ./scripts/python-tests.sh
  ./scripts/contract-test.sh
fi
