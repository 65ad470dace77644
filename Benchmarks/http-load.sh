#!/usr/bin/env bash
# The server under load (not part of CI): `clinic serve` (release build) on a throw-away
# database with the default directory and many patients, against a throw-away PostgreSQL 15
# with the same booking schema, measured in one run. Prints a table and a verdict per target
# (docs/BENCHMARKS.md). Load comes from wrk (Debian) with Lua scripts in Benchmarks/http-load/.
#   Benchmarks/http-load.sh           SECONDS per measurement: env LOAD_SECONDS (default 8)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${LOAD_SECONDS:-8}"
source scripts/env.sh
pgbin=/usr/lib/postgresql/15/bin
need=""
command -v wrk >/dev/null || need="$need wrk"
[ -x "$pgbin/postgres" ] || need="$need postgresql-15"
if [ -n "$need" ]; then
  echo "Installing:$need" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $need >/dev/null
fi
swift build -c release --product clinic >&2
clinic="$(swift build -c release --show-bin-path)/clinic"
here=Benchmarks/http-load

work=$(mktemp -d)
chmod 755 "$work"
server=""
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  as_pg "$pgbin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
export CLINIC_DB="$work/clinic.sqlite" CLINIC_SESSION="$work/session" CLINIC_LANG=en
unset CLINIC_GEOCODER_URL CLINIC_BACKUP_DIR

echo "Filling the database (default directory)…" >&2
"$clinic" init >/dev/null
"$clinic" admin settings set booking.max_active 1000 >/dev/null
start_server() {
  : > "$work/serve.out"
  CLINIC_AUTH_RATE=1000000/1000000 "$clinic" serve --port 0 >"$work/serve.out" 2>"$work/serve.log" &
  server=$!
  for _ in $(seq 300); do
    url=$(sed -n 's#^Listening on \(http://[^ ]*\)$#\1#p' "$work/serve.out")
    [ -n "$url" ] && return 0
    sleep 0.1
  done
  echo "the server did not start" >&2; cat "$work/serve.log" >&2; exit 1
}
start_server
echo "Registering patients and gathering slots…" >&2
python3 "$here/prepare.py" "$url" "$work" 400 "${LOAD_SLOTS:-80000}"

threads=2
results="$work/results.txt"
: > "$results"
# run NAME CONNECTIONS SCRIPT [ENV…]: one wrk measurement, its RESULT line kept under NAME.
run() {
  local name=$1 connections=$2 script=$3
  shift 3
  local line
  line=$(env "$@" WRK_THREADS=$threads wrk -t"$threads" -c"$connections" -d"${seconds}s" --timeout 10s -s "$script" "$url" | grep '^RESULT' || true)
  echo "$name $line" | tee -a "$results" >&2
}
department=$(head -1 "$work/requests.txt" | awk '{print $2}')

run http-healthz 64 "$here/get.lua" GET_PATH=/healthz
run http-nearest 64 "$here/get.lua" NEAREST=1
run http-slots 64 "$here/get.lua" GET_PATH="/v1/departments/$department/slots?days=7"
# Bookings: the first half of the slots unloaded, the second half under a log-in flood.
total=$(wc -l < "$work/requests.txt")
head -n $((total / 2)) "$work/requests.txt" > "$work/book-a.txt"
tail -n +$((total / 2 + 1)) "$work/requests.txt" > "$work/book-b.txt"
run http-book 64 "$here/book.lua" BOOK_REQUESTS="$work/book-a.txt"
wrk -t1 -c8 -d"$((seconds + 2))s" -s "$here/login-flood.lua" "$url" > "$work/flood.out" 2>&1 &
flood=$!
sleep 1
run http-book-under-login-flood 64 "$here/book.lua" BOOK_REQUESTS="$work/book-b.txt"
wait "$flood" || true
run http-book-contended 64 "$here/book.lua" BOOK_REQUESTS="$work/contended.txt"
doubles=$(python3 - "$CLINIC_DB" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("""SELECT count(*) FROM (SELECT doctor_id, starts_at FROM appointments
                    WHERE status IN ('scheduled','confirmed') GROUP BY doctor_id, starts_at HAVING count(*) > 1)""").fetchone()[0])
PY
)
booked=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM appointments').fetchone()[0])" "$CLINIC_DB")
curl -s "$url/metrics" > "$work/metrics.txt"
kill "$server"; wait "$server" 2>/dev/null || true; server=""

echo "PostgreSQL 15: the same booking (exclusion constraint on doctor × time, a history row), fsync on…" >&2
mkdir "$work/pg"; [ "$(id -u)" -eq 0 ] && chown postgres "$work/pg" "$work"
as_pg "$pgbin/initdb" -D "$work/pg" -A trust -U postgres >/dev/null
as_pg "$pgbin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w \
  -o "-k $work -c listen_addresses='' -c fsync=on -c synchronous_commit=on -c max_connections=100" start >/dev/null
psql() { as_pg "$pgbin/psql" -h "$work" -U postgres -X -q -v ON_ERROR_STOP=1 "$@"; }
psql -c "CREATE EXTENSION btree_gist"
psql -c "CREATE TABLE appointments (id bigserial PRIMARY KEY, client_id int NOT NULL, doctor_id int NOT NULL,
           during tstzrange NOT NULL, status text NOT NULL DEFAULT 'scheduled',
           EXCLUDE USING gist (doctor_id WITH =, during WITH &&) WHERE (status IN ('scheduled', 'confirmed')))"
psql -c "CREATE TABLE appointment_events (id bigserial PRIMARY KEY, appointment_id bigint NOT NULL REFERENCES appointments,
           event text NOT NULL, at timestamptz NOT NULL)"
psql -c "CREATE SEQUENCE slot_seq"
cat > "$work/book.sql" <<'SQL'
SELECT nextval('slot_seq') AS n \gset
BEGIN;
INSERT INTO appointments (client_id, doctor_id, during) VALUES (:client_id, :n % 20000,
  tstzrange(timestamptz '2027-01-04 09:00+00' + (:n / 20000) * interval '20 minutes',
            timestamptz '2027-01-04 09:20+00' + (:n / 20000) * interval '20 minutes')) RETURNING id AS appointment \gset
INSERT INTO appointment_events (appointment_id, event, at) VALUES (:appointment, 'booked', now());
COMMIT;
SQL
[ "$(id -u)" -eq 0 ] && chown postgres "$work/book.sql"
for clients in 16 64; do
  out=$(cd "$work" && as_pg "$pgbin/pgbench" -h "$work" -U postgres -n -M prepared -c "$clients" -j 2 -T "$seconds" -r \
        -f "$work/book.sql" postgres 2>&1)
  tps=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1)
  latency=$(echo "$out" | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')
  failed=$(echo "$out" | sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p')
  echo "pg-book-$clients RESULT requests=0 rps=$tps p50=$latency p99=0 errors=${failed:-0} bad=0" | tee -a "$results" >&2
done
fsync_floor=$(python3 - "$work" <<'PY'
import os, sys, time
path = os.path.join(sys.argv[1], "fsync-probe")
fd = os.open(path, os.O_WRONLY | os.O_CREAT)
times = []
for _ in range(200):
    os.write(fd, b"x" * 512); start = time.perf_counter(); os.fsync(fd); times.append(time.perf_counter() - start)
times.sort(); print(f"{times[len(times)//2]*1e6:.0f}")
PY
)

python3 - "$results" "$doubles" "$booked" "$fsync_floor" "$work/metrics.txt" <<'PY'
import re, sys
rows = {}
for line in open(sys.argv[1]):
    name, _, rest = line.partition(" ")
    values = dict(re.findall(r"(\w+)=([0-9.]+)", rest))
    rows[name] = {k: float(v) for k, v in values.items()}
doubles, booked, fsync = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
batches = re.findall(r'^clinic_commit_batch_size_(sum|count) ([0-9.e+]+)$', open(sys.argv[5]).read(), re.M)
batch = dict(batches)
mean_batch = float(batch.get("sum", 0)) / max(float(batch.get("count", 1)), 1)
def get(name, key): return rows.get(name, {}).get(key, 0.0)
pg = max(get("pg-book-16", "rps"), get("pg-book-64", "rps"))
print(f"{'name':<30}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}")
def ms(value): return f"{value:>9.2f}" if value > 0 else f"{'-':>9}"
for name, row in rows.items():
    if name == "http-book-contended":
        print(f"{name:<30}{'-':>10}{'-':>9}{'-':>9}{int(row.get('errors', 0) + row.get('bad', 0)):>8}"
              f"   {int(row.get('booked', 0))} booked, {int(row.get('taken', 0))} slot_taken of {int(row.get('requests', 0))}")
        continue
    print(f"{name:<30}{row.get('rps', 0):>10.0f}{ms(row.get('p50', 0))}{ms(row.get('p99', 0))}{int(row.get('errors', 0) + row.get('bad', 0)):>8}")
print("(pg-book: pgbench's transactions/s; its p50 column is the mean latency, it reports no p99)")
print(f"\nfsync median {fsync} µs · {booked} appointments booked · {doubles} slots booked twice · mean commit batch {mean_batch:.1f}")
checks = [
    ("http-nearest ≥ 70 % of http-healthz", get("http-nearest", "rps") >= 0.7 * get("http-healthz", "rps"),
     f"{get('http-nearest', 'rps') / max(get('http-healthz', 'rps'), 1):.0%}"),
    ("http-book ≥ 1.5 × PostgreSQL", get("http-book", "rps") >= 1.5 * pg, f"{get('http-book', 'rps') / max(pg, 1):.2f} ×"),
    ("http-book p99 ≤ 25 ms", 0 < get("http-book", "p99") <= 25, f"{get('http-book', 'p99'):.1f} ms"),
    ("http-book 0 errors", get("http-book", "errors") + get("http-book", "bad") + get("http-book", "taken") == 0,
     f"{int(get('http-book', 'errors') + get('http-book', 'bad') + get('http-book', 'taken'))}"),
    ("contended: 0 double bookings, only 201 or 409", doubles == 0 and get("http-book-contended", "bad") == 0
     and get("http-book-contended", "errors") == 0, f"{doubles} doubles, {int(get('http-book-contended', 'bad'))} other answers"),
    ("under a log-in flood p99 ≤ 2 × unloaded", 0 < get("http-book-under-login-flood", "p99") <= 2 * get("http-book", "p99"),
     f"{get('http-book-under-login-flood', 'p99'):.1f} ms vs {get('http-book', 'p99'):.1f} ms"),
]
for label, ok, figure in checks:
    print(f"{'met ' if ok else 'MISSED'}  {label}: {figure}")
PY
