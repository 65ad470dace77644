#!/usr/bin/env bash
# The API contract test: runs `clinic serve` on a fresh database (the default directory) in a
# temporary folder and checks it against openapi.yaml with Schemathesis (generated valid and
# invalid requests; every response's status, headers, content type and body against the
# contract); then the CLI's --json output against the same schemas (scripts/cli-json-check.py).
# Fails on any 5xx, any response the contract does not allow, and any request outside the
# contract that the server accepts.
#
#   CLINIC_BIN         the clinic binary (default .build/debug/clinic; build it first)
#   CONTRACT_VENV      Python venv for Schemathesis (default .build/contract-venv; made if missing)
#   CONTRACT_EXAMPLES  generated requests per operation and phase (default 100)
#   CONTRACT_SEED      a seed to repeat a run (each run prints its seed)
#   CONTRACT_LOG       a file to keep the server's request log in
#   CONTRACT_STORE     sqlite (default) or postgres: the server's database is then a PostgreSQL
#                      15 this script starts in the temporary folder (scripts/postgres.sh) and stops
#
# Takes about a minute on two cores, plus the first install of Schemathesis.
set -euo pipefail

SCHEMATHESIS_VERSION=4.32.5
PASSWORD="correct horse battery staple"

caller=$PWD
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
absolute() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$caller/$1" ;; esac; }
CLINIC_BIN=$(absolute "${CLINIC_BIN:-$root/.build/debug/clinic}")
VENV=$(absolute "${CONTRACT_VENV:-$root/.build/contract-venv}")
EXAMPLES=${CONTRACT_EXAMPLES:-100}
cd "$root"

[ -x "$CLINIC_BIN" ] || { echo "contract-test: no clinic binary at $CLINIC_BIN (run swift build)" >&2; exit 2; }

# Schemathesis for the API; jsonschema and PyYAML for cli-json-check.py (Schemathesis does not
# bring jsonschema with it).
if ! "$VENV/bin/schemathesis" --version 2>/dev/null | grep -qF "$SCHEMATHESIS_VERSION" \
    || ! "$VENV/bin/python" -c "import jsonschema, yaml" 2>/dev/null; then
    echo "contract-test: installing schemathesis $SCHEMATHESIS_VERSION, jsonschema and PyYAML into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" \
        "jsonschema==4.26.0" "PyYAML==6.0.3"
fi

# --install: only the above, so that two runs started side by side (scripts/test.sh) do not both
# make the environment.
[ "${1:-}" = --install ] && exit 0

work=$(mktemp -d "${TMPDIR:-/tmp}/clinic-contract.XXXXXX")
server=""
STORE=${CONTRACT_STORE:-sqlite}
case $STORE in sqlite|postgres) ;; *) echo "contract-test: CONTRACT_STORE is sqlite or postgres" >&2; exit 2 ;; esac
cleanup() {
    if [ "$STORE" = postgres ]; then "$root/scripts/postgres.sh" stop "$work/pg" >/dev/null 2>&1 || true; fi
    if [ -n "${CONTRACT_LOG:-}" ] && [ -f "$work/serve.log" ]; then cp "$work/serve.log" "$(absolute "$CONTRACT_LOG")"; fi
    if [ -n "$server" ]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Everything the server keeps lives in $work; nothing leaves this machine (no HTTP geocoder).
export CLINIC_DB="$work/clinic.sqlite" CLINIC_SESSION="$work/session" CLINIC_LANG=en
unset CLINIC_GEOCODER_URL CLINIC_BACKUP_DIR

if [ "$STORE" = postgres ]; then
    chmod 711 "$work" && mkdir -p "$work/pg"
    "$root/scripts/postgres.sh" start "$work/pg" >/dev/null
    CLINIC_DB=$("$root/scripts/postgres.sh" url "$work/pg")
    PGPASSWORD=$(cat "$work/pg/password")
    export CLINIC_DB PGPASSWORD CLINIC_KEY_FILE="$work/clinic.key" CLINIC_AUDIT_KEY_FILE="$work/clinic.audit-key"
fi
echo "contract-test: store $STORE"

started=$SECONDS
"$CLINIC_BIN" init >"$work/init.log" 2>&1 || { cat "$work/init.log" >&2; exit 1; }

# Password checks (log-ins, registrations, password changes, deletions) are rate-limited per
# address; Schemathesis sends thousands.
: >"$work/serve.out"
CLINIC_AUTH_RATE=100000/100000 "$CLINIC_BIN" serve --port 0 >"$work/serve.out" 2>"$work/serve.log" &
server=$!
url=""
for _ in $(seq 300); do
    # "Listening on http://127.0.0.1:PORT" (in any language, the URL is the last word).
    url=$(sed -n 's#^.* \(https\{0,1\}://[^ ]*\)$#\1#p' "$work/serve.out" | head -1)
    [ -n "$url" ] && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$url" ]; then
    echo "contract-test: the server did not start" >&2
    cat "$work/serve.out" "$work/serve.log" >&2
    exit 1
fi
echo "contract-test: clinic serve at $url"

# post PATH JSON: the body of a 201 answer, else the answer on stderr and a failure.
post() {
    local status
    status=$(curl -sS -o "$work/answer.json" -w '%{http_code}' -X POST "$url$1" \
        -H 'Content-Type: application/json' --data "$2")
    if [ "$status" != 201 ]; then
        echo "contract-test: POST $1 answered $status: $(cat "$work/answer.json")" >&2
        return 1
    fi
    cat "$work/answer.json"
}
token() { "$VENV/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["token"])'; }

post /v1/patients '{"login": "anna.smith", "password": "'"$PASSWORD"'", "name": "Anna", "surname": "Smith",
    "street": "Main St", "house": "5", "city": "Boston", "acceptPrivacy": true}' >/dev/null
logIn() { post /v1/sessions '{"login": "anna.smith", "password": "'"$PASSWORD"'"}' | token; }
# Sessions for the three runs below, opened first: Schemathesis learns the login from GET /v1/me
# and tries passwords on it, which soon locks it (`account_locked`).
main_token=$(logIn)
end_session_token=$(logIn)
log_out_token=$(logIn)

# Checks: all, but `positive_data_acceptance`, which expects every request the schema allows to
# be accepted. This API refuses many such requests by design, with statuses the contract lists:
# rules JSON Schema cannot say (an unknown city, exactly one of lat/lon, address or me, a cursor
# this server did not give out, a slot that is not free, a common password: 400 and 422), and
# lengths counted in characters (grapheme clusters), which `maxLength` does not count.
options=(--url "$url" --checks all --exclude-checks positive_data_acceptance --max-examples "$EXAMPLES"
         --generation-database none --request-timeout 30 --no-color)
[ -n "${CONTRACT_SEED:-}" ] && options+=(--seed "$CONTRACT_SEED")

status=0
# check TOKEN OPTION...: one Schemathesis run as the patient of TOKEN; a failure is remembered.
check() {
    local bearer=$1
    shift
    "$VENV/bin/schemathesis" run openapi.yaml "${options[@]}" -H "Authorization: Bearer $bearer" "$@" || status=$?
}
# Every operation but the two that end sessions (they would end the session of the token and
# leave the rest of the run with 401s); then each of those on a session of its own, without the
# stateful phase (it needs links between the operations selected).
check "$main_token" --exclude-operation-id logOut --exclude-operation-id endSession
check "$end_session_token" --include-operation-id endSession --phases examples,coverage,fuzzing
check "$log_out_token" --include-operation-id logOut --phases examples,coverage,fuzzing

if ! kill -0 "$server" 2>/dev/null; then
    echo "contract-test: the server died during the run" >&2
    status=1
fi
# What the server logged besides its request lines (500s are logged there, without details).
if grep -v ' info ' "$work/serve.log" >"$work/problems.log"; then
    echo "contract-test: the server logged:" >&2
    head -50 "$work/problems.log" >&2
fi

# The CLI's --json output of every command with an API counterpart, against the same schemas.
CLINIC_RESOURCES="${CLINIC_RESOURCES:-$root}" "$VENV/bin/python" scripts/cli-json-check.py "$CLINIC_BIN" || status=1

elapsed=$((SECONDS - started))
if [ "$status" = 0 ]; then
    echo "contract-test: passed on $STORE (schemathesis $SCHEMATHESIS_VERSION, $EXAMPLES examples per operation, ${elapsed}s)"
else
    echo "contract-test: FAILED (schemathesis $SCHEMATHESIS_VERSION, ${elapsed}s; see the failures above)" >&2
fi
exit "$status"
