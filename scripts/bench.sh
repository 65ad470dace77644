#!/usr/bin/env bash
# Builds in release mode and runs the benchmarks (docs/BENCHMARKS.md). Arguments go to
# clinic-bench: --quick, --json, --only NAME. Run it on an otherwise idle machine.
source "$(dirname "$0")/env.sh"
swift build -c release >&2
exec "$(swift build -c release --show-bin-path)/clinic-bench" "$@"
