#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (unit and end-to-end).
source "$(dirname "$0")/env.sh"
swift build --build-tests
swift test "$@"
