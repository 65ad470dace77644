#!/usr/bin/env bash
# Installs what is missing, builds `clinic` in release mode, and runs it on the embedded default
# directory (7,146 U.S. hospitals). With arguments: runs `clinic ARGS` on your own database.
# Without: a short patient journey on a throw-away database and session.
source "$(dirname "$0")/env.sh"
swift build -c release --product clinic >&2
clinic="$(swift build -c release --show-bin-path)/clinic"

if [ "$#" -gt 0 ]; then
  exec "$clinic" "$@"
fi

demo=$(mktemp -d)
trap 'rm -rf "$demo"' EXIT
export CLINIC_DB="$demo/clinic.sqlite" CLINIC_SESSION="$demo/session"
step() { printf '\n$ clinic %s\n' "$*"; "$clinic" "$@"; }

step init
step clinics nearest --address "1025 North Douty Street, Hanford, CA" --limit 3
step clinics nearest --lat 51.88 --lon -176.65
step clinics nearest --at "15.2N 145.7E" --limit 2 --lang ru
step clinics nearest --address "Boston, MA 02115" --limit 2
step geocode Vincennes
step find --specialization cardiology --address "Hanford, CA" --limit 3
clinic_id=$("$clinic" clinics nearest --address "Hanford, CA" --json | sed -n 's/.*"id" : \([0-9]*\).*/\1/p' | head -1)
step clinics show "$clinic_id"
printf '\n$ clinic register --login demo … --accept-privacy --password-stdin\n'
echo "Hanford-visit-2026" | "$clinic" register --login demo --name Dana --surname Demo --street "Mall Drive" \
  --house 115 --city Hanford --accept-privacy --password-stdin
echo "Hanford-visit-2026" | "$clinic" login --login demo --password-stdin
department_id=$("$clinic" departments "$clinic_id" --json | sed -n 's/.*"id" : \([0-9]*\).*/\1/p' | head -1)
monday=$(date -u -d 'next monday + 7 days' +%F)
step slots --department "$department_id" --from "$monday" --days 1 | head -8
step book --department "$department_id" --at "$monday 09:20" --notes "check-up"
step appointments
step reschedule 1 --to "$monday 10:40"
step appointments --lang ru
step cancel 1
step appointments show 1
step logout
