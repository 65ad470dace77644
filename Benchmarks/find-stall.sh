#!/usr/bin/env bash
# A crowd of searches against a cheap read (issue 23, not part of CI): `clinic serve`
# (release build, or CLINIC_BIN) on the default directory. The p50/p99 of GET
# /v1/clinics/{id} from one connection, first with nothing else running (the baseline), then
# while 8 connections ask /v1/find for a slot that no clinic has (every search spends its
# whole budget), and the searches' own answers. Prints one table (docs/BENCHMARKS.md).
#   Benchmarks/find-stall.sh          SECONDS per measurement: env LOAD_SECONDS (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${LOAD_SECONDS:-10}"
source scripts/env.sh
if ! command -v wrk >/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq wrk >/dev/null
fi
if [ -z "${CLINIC_BIN:-}" ]; then
  swift build -c release --product clinic >&2
  CLINIC_BIN="$(swift build -c release --show-bin-path)/clinic"
fi
work=$(mktemp -d)
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
export CLINIC_DB="$work/clinic.sqlite" CLINIC_SESSION="$work/session" CLINIC_LANG=en
unset CLINIC_GEOCODER_URL CLINIC_BACKUP_DIR
"$CLINIC_BIN" init >/dev/null
"$CLINIC_BIN" serve --port 0 >"$work/serve.out" 2>"$work/serve.log" &
server=$!
url=""
for _ in $(seq 300); do
  url=$(sed -n 's#^Listening on \(http://[^ ]*\)$#\1#p' "$work/serve.out")
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "the server did not start" >&2; cat "$work/serve.log" >&2; exit 1; }

# A slot that starts in the minute after the lead time (30 min) is one no clinic has: each
# search walks clinics until its budget ends.
before=$(date -u -d '+31 minutes' +%Y-%m-%dT%H:%M:%SZ)
find="/v1/find?specialization=therapy&lat=36.3&lon=-119.6&limit=100&before=$before"
cheap="/v1/clinics/136"
curl -sf "$url$cheap" >/dev/null
curl -s -D "$work/find.headers" -o /dev/null "$url$find"

measure() { # NAME: p50 and p99 (ms) of the cheap read from one connection
  wrk -t1 -c1 -d"${seconds}s" --latency "$url$cheap" > "$work/$1.txt"
}
ms() { # FILE PERCENT: wrk's latency at that percentile, in ms
  awk -v p="$2" '$1 == p {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; printf "%.2f", v}' "$1"
}
measure idle
wrk -t2 -c8 -d"$((seconds + 4))s" --timeout 30s --latency "$url$find" > "$work/finds.txt" &
crowd=$!
sleep 2
measure loaded
wait "$crowd" || true

printf '\n%-44s %10s %10s\n' "GET $cheap, one connection" "p50 ms" "p99 ms"
printf '%-44s %10s %10s\n' "alone (baseline, same run)" "$(ms "$work/idle.txt" 50%)" "$(ms "$work/idle.txt" 99%)"
printf '%-44s %10s %10s\n' "beside 8 connections of budget-long finds" "$(ms "$work/loaded.txt" 50%)" "$(ms "$work/loaded.txt" 99%)"
printf '\n%-44s %10s %10s %10s\n' "the finds themselves" "p50 ms" "p99 ms" "req/s"
printf '%-44s %10s %10s %10s\n' "8 connections" "$(ms "$work/finds.txt" 50%)" "$(ms "$work/finds.txt" 99%)" \
  "$(awk '/Requests\/sec/ {print $2}' "$work/finds.txt")"
grep -i '^search-complete' "$work/find.headers" | tr -d '\r' | sed 's/^/one find answered with /' || true
grep -E 'Non-2xx|Socket errors' "$work/finds.txt" || true
