#!/usr/bin/env bash
# The server under load (not part of CI): `clinic serve` (release build) on a throw-away
# database with the default directory and many patients, against a throw-away PostgreSQL 15
# with the same booking schema, measured in one run. Prints a table and a verdict per target
# (docs/BENCHMARKS.md). Load comes from wrk (Debian) with Lua scripts in Benchmarks/http-load/.
#   Benchmarks/http-load.sh [--store sqlite|postgres|both]
#     sqlite (default): one server on a SQLite file; PostgreSQL (its own, after the server
#       stopped) runs pgbench's bare booking as the baseline.
#     postgres: one PostgreSQL 15 for the whole run (scripts/postgres.sh); two `clinic serve`
#       on it (shared key files); every load is two wrk at once, one per server, half the
#       connections each (requests/s summed, p50/p99 of the two runs' latencies pooled);
#       double bookings counted with psql; pgbench's baseline on the same instance, in a
#       database of its own.
#     both: the two runs above, one after the other in one invocation, then their figures side
#       by side with issue 44's targets (PostgreSQL against SQLite and against pgbench).
#   Benchmarks/http-load.sh --cluster [--store both]
#     the Patroni layout a clinic network deploys (scripts/cluster.sh: etcd, two PostgreSQL 15
#       with a synchronous replica, HAProxy, two `clinic serve` behind it); every load is one
#       wrk through HAProxy's http port, pgbench's baseline through its primary port. With
#       --store both, the cluster's run comes third and its figures are a third column.
#   SECONDS per measurement: env LOAD_SECONDS (default 8)
set -euo pipefail
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/.."
seconds="${LOAD_SECONDS:-8}"
store=sqlite
cluster=0
usage() { echo "usage: $0 [--store sqlite|postgres|both] [--cluster]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --store) [ $# -ge 2 ] || usage; store=$2; shift 2 ;;
    --store=*) store=${1#--store=}; shift ;;
    --cluster) cluster=1; shift ;;
    *) usage ;;
  esac
done
case "$store" in sqlite|postgres|both|cluster) ;; *) usage ;; esac
if [ "$cluster" = 1 ] && [ "$store" != both ]; then store=cluster; fi
if [ "$store" = both ]; then
  # Each run keeps its figures (HTTP_LOAD_RESULTS) for the table at the end.
  both=$(mktemp -d)
  trap 'rm -rf "$both"' EXIT
  status=0
  HTTP_LOAD_RESULTS="$both/sqlite.txt" "$self" --store sqlite || status=$?
  HTTP_LOAD_RESULTS="$both/postgres.txt" "$self" --store postgres || status=$?
  if [ "$cluster" = 1 ]; then HTTP_LOAD_RESULTS="$both/cluster.txt" "$self" --store cluster || status=$?; fi
  echo
  python3 - "$both/sqlite.txt" "$both/postgres.txt" "$both/cluster.txt" <<'PY' || status=$?
import os, re, sys
def load(path):
    rows = {}
    if os.path.exists(path):
        for line in open(path):
            name, _, rest = line.partition(" ")
            rows[name] = {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)", rest)}
    return rows
sqlite, postgres, cluster = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[3])
def get(rows, name, key): return rows.get(name, {}).get(key, 0.0)
def cell(rows, name):
    if name not in rows: return f"{'-':>22}"
    if name.startswith("pg-book"): return f"{get(rows, name, 'rps'):>10.0f}{'':>12}"
    return f"{get(rows, name, 'rps'):>10.0f} ({get(rows, name, 'p99'):>7.1f} ms)"
print("one invocation, both stores" + (" and the cluster" if cluster else "") + ": req/s (p99)")
print(f"{'name':<30}{'SQLite, one server':>22}{'PostgreSQL, two':>22}" + (f"{'Patroni + HAProxy':>22}" if cluster else ""))
for name in ["http-healthz", "http-nearest", "http-slots", "http-book", "http-book-under-login-flood", "pg-book-16", "pg-book-64"]:
    print(f"{name:<30}{cell(sqlite, name)}{cell(postgres, name)}" + (cell(cluster, name) if cluster else ""))
pg = max(get(postgres, "pg-book-16", "rps"), get(postgres, "pg-book-64", "rps"))
book = get(postgres, "http-book", "rps")
def ratio(a, b): return a / b if b > 0 else 0.0
checks = [
    ("PostgreSQL http-book ≥ 0.5 × pgbench on the same instance", ratio(book, pg) >= 0.5, f"{ratio(book, pg):.2f} ×"),
    ("PostgreSQL http-book ≥ SQLite's", book >= get(sqlite, "http-book", "rps"),
     f"{ratio(book, get(sqlite, 'http-book', 'rps')):.2f} ×"),
    ("PostgreSQL http-slots ≥ 0.8 × SQLite's", ratio(get(postgres, "http-slots", "rps"), get(sqlite, "http-slots", "rps")) >= 0.8,
     f"{ratio(get(postgres, 'http-slots', 'rps'), get(sqlite, 'http-slots', 'rps')):.2f} ×"),
    ("PostgreSQL http-nearest ≥ 0.8 × SQLite's",
     ratio(get(postgres, "http-nearest", "rps"), get(sqlite, "http-nearest", "rps")) >= 0.8,
     f"{ratio(get(postgres, 'http-nearest', 'rps'), get(sqlite, 'http-nearest', 'rps')):.2f} ×"),
    ("http-book p99 ≤ 50 ms on both stores",
     0 < get(sqlite, "http-book", "p99") <= 50 and 0 < get(postgres, "http-book", "p99") <= 50,
     f"{get(sqlite, 'http-book', 'p99'):.1f} and {get(postgres, 'http-book', 'p99'):.1f} ms"),
]
for label, ok, figure in checks:
    print(f"{'met ' if ok else 'MISSED'}  {label}: {figure}")
PY
  exit "$status"
fi
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
servers=()
urls=()
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
stop_servers() {
  local pid
  for pid in ${servers[@]+"${servers[@]}"}; do kill "$pid" 2>/dev/null || true; done
  for pid in ${servers[@]+"${servers[@]}"}; do wait "$pid" 2>/dev/null || true; done
  servers=()
}
cleanup() {
  local status=$?
  stop_servers
  if [ "$status" -ne 0 ]; then
    for log in "$work"/serve*.log "$work"/cluster/server*.log; do
      if [ -s "$log" ]; then echo "--- the end of $log" >&2; tail -20 "$log" >&2; fi
    done
  fi
  as_pg "$pgbin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
  [ -d "$work/pgstore" ] && { scripts/postgres.sh stop "$work/pgstore" >/dev/null 2>&1 || true; }
  [ -d "$work/cluster" ] && { CLUSTER_DIR="$work/cluster" scripts/cluster.sh down >/dev/null 2>&1 || true; }
  rm -rf "$work"
}
trap cleanup EXIT
export CLINIC_SESSION="$work/session" CLINIC_LANG=en
unset CLINIC_GEOCODER_URL CLINIC_BACKUP_DIR
if [ "$store" = postgres ]; then
  echo "Starting PostgreSQL 15 (scripts/postgres.sh, fsync on) for the whole run…" >&2
  CLINIC_DB=$(scripts/postgres.sh start "$work/pgstore")
  PGPASSWORD=$(cat "$work/pgstore/password")
  # Both servers seal personal data and chain the audit trail with the same two keys.
  export CLINIC_DB PGPASSWORD CLINIC_KEY_FILE="$work/keys/clinic.key" CLINIC_AUDIT_KEY_FILE="$work/keys/clinic.audit-key"
  pg_socket="$work/pgstore/socket"
  pg_port=$(cat "$work/pgstore/port")
  # psql as the store's role (scram, PGPASSWORD), unaligned and without headers: one value a line.
  pgsql() { "$pgbin/psql" -X -q -t -A -v ON_ERROR_STOP=1 -h "$pg_socket" -p "$pg_port" -U clinic_test "$@"; }
  database=clinic_test
elif [ "$store" = cluster ]; then
  echo "Starting the Patroni layout (scripts/cluster.sh: etcd, two PostgreSQL 15 with a synchronous replica, HAProxy, two clinic serve)…" >&2
  # Every wrk connection comes from 127.0.0.1 (start_server below says why); cluster.sh passes
  # CLINIC_* on to its servers.
  CLUSTER_DIR="$work/cluster" CLINIC_BIN="$clinic" CLINIC_AUTH_RATE=1000000/1000000 CLINIC_MAX_CONNECTIONS_PER_ADDRESS=1000 \
    scripts/cluster.sh up >/dev/null
  # shellcheck disable=SC1091
  source "$work/cluster/ports"
  export CLINIC_DB="postgresql://clinic@127.0.0.1:$primary_port/clinic?sslmode=disable&connect_timeout=5"
  export PGPASSWORD=$clinic_password CLINIC_KEY_FILE="$work/cluster/keys/clinic.key"
  export CLINIC_AUDIT_KEY_FILE="$work/cluster/keys/clinic.audit-key"
  # psql as the cluster's superuser through HAProxy's primary port.
  pgsql() { PGPASSWORD=$superuser_password "$pgbin/psql" -X -q -t -A -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$primary_port" -U postgres "$@"; }
  database=clinic
else
  export CLINIC_DB="$work/clinic.sqlite"
fi

if [ "$store" != cluster ]; then
  echo "Filling the database (default directory)…" >&2
  "$clinic" init >/dev/null
fi
"$clinic" admin settings set booking.max_active 1000 >/dev/null
# start_server N: the N-th `clinic serve`; its URL in urls[N].
start_server() {
  local n=$1
  : > "$work/serve$n.out"
  # Every wrk connection comes from 127.0.0.1: the cap of 64 connections per address (issue 23)
  # refused the flood's 8 beside the booking's 64 (tens of thousands of wrk errors).
  CLINIC_AUTH_RATE=1000000/1000000 CLINIC_MAX_CONNECTIONS_PER_ADDRESS=1000 \
    "$clinic" serve --port 0 >"$work/serve$n.out" 2>"$work/serve$n.log" &
  servers+=($!)
  for _ in $(seq 600); do
    urls[n]=$(sed -n 's#^Listening on \(http://[^ ]*\)$#\1#p' "$work/serve$n.out")
    [ -n "${urls[n]}" ] && return 0
    sleep 0.1
  done
  echo "the server did not start" >&2; cat "$work/serve$n.log" >&2; exit 1
}
if [ "$store" = postgres ]; then start_server 1; start_server 2; url=${urls[1]}
elif [ "$store" = cluster ]; then
  # The two servers cluster.sh started; the loads go through HAProxy.
  urls[1]="http://127.0.0.1:$server1_port"; urls[2]="http://127.0.0.1:$server2_port"
  url="http://127.0.0.1:$http_port"
else start_server 1; url=${urls[1]}; fi
echo "Registering patients and gathering slots…" >&2
python3 "$here/prepare.py" "$url" "$work" 400 "${LOAD_SLOTS:-80000}"

threads=2
results="$work/results.txt"
: > "$results"
# run NAME CONNECTIONS SCRIPT [ENV…]: one wrk measurement, its RESULT line kept under NAME.
# On PostgreSQL: two wrk at once, one per server, each with one thread and half the
# connections, and each with every other line of BOOK_REQUESTS; merge.py sums the counts and
# requests/s and pools the two latency distributions for p50 and p99.
run() {
  local name=$1 connections=$2 script=$3
  shift 3
  local line
  if [ "$store" != postgres ]; then
    env "$@" WRK_THREADS=$threads wrk -t"$threads" -c"$connections" -d"${seconds}s" --timeout 10s -s "$script" "$url" \
      > "$work/$name.wrk" 2>&1 || true
    line=$(grep '^RESULT' "$work/$name.wrk" || true)
    if [ "$store" = cluster ]; then settle; fi
  else
    local n pids=()
    for n in 1 2; do
      local assignment settings=()
      for assignment in "$@"; do
        case "$assignment" in
          BOOK_REQUESTS=*)
            awk -v n="$n" 'NR % 2 == n % 2' "${assignment#BOOK_REQUESTS=}" > "$work/$name.requests$n"
            settings+=("BOOK_REQUESTS=$work/$name.requests$n") ;;
          *) settings+=("$assignment") ;;
        esac
      done
      env "${settings[@]}" WRK_THREADS=1 LATENCY_DUMP="$work/$name.latency$n" \
        wrk -t1 -c$((connections / 2)) -d"${seconds}s" --timeout 10s -s "$script" "${urls[n]}" > "$work/$name.wrk$n" 2>&1 &
      pids+=($!)
    done
    for n in "${pids[@]}"; do wait "$n" || true; done
    line=$(python3 "$here/merge.py" "$work/$name.wrk1" "$work/$name.latency1" "$work/$name.wrk2" "$work/$name.latency2" || true)
    settle
  fi
  echo "$name $line" | tee -a "$results" >&2
  # What the answers that were neither expected success nor 409 were (issue 42): every status,
  # with its count and first body, per wrk process.
  grep -h '^UNEXPECTED' "$work/$name".wrk* 2>/dev/null | sed "s/^/$name /" | tee -a "$work/unexpected.txt" >&2 || true
}
# settle: waits (10 s at most) until the servers answered every request of the last load: wrk
# stops with bookings still in flight (p99 above a second here), which would otherwise still be
# running in the next load's first second.
settle() {
  local before after quiet=2
  # Behind HAProxy, its health checks of each server count too (one a second per server).
  [ "$store" = cluster ] && quiet=6
  for _ in $(seq 20); do
    before=$(served); sleep 0.5; after=$(served)
    # Only the two /metrics requests of each pass in between: nothing else in flight.
    [ $((after - before)) -le $quiet ] && return 0
  done
  # Best effort: a load that never quite settles is measured anyway (and says so).
  echo "(the servers were still answering 10 s after the last load)" >&2
  return 0
}
served() {
  local n total=0 count
  for n in "${!urls[@]}"; do
    count=$(curl -s "${urls[n]}/metrics" | awk '/^http_requests_total/ { sum += $NF } END { printf "%d", sum }')
    total=$((total + ${count:-0}))
  done
  echo "$total"
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
floods=()
if [ "$store" != postgres ]; then
  wrk -t1 -c8 -d"$((seconds + 2))s" -s "$here/login-flood.lua" "$url" > "$work/flood.out" 2>&1 &
  floods+=($!)
else
  for n in 1 2; do
    wrk -t1 -c4 -d"$((seconds + 2))s" -s "$here/login-flood.lua" "${urls[n]}" > "$work/flood$n.out" 2>&1 &
    floods+=($!)
  done
fi
sleep 1
run http-book-under-login-flood 64 "$here/book.lua" BOOK_REQUESTS="$work/book-b.txt"
for flood in "${floods[@]}"; do wait "$flood" || true; done
# Contended: on PostgreSQL each slot's 8 patients are split 4 and 4 over the two servers.
run http-book-contended 64 "$here/book.lua" BOOK_REQUESTS="$work/contended.txt"
if [ "$store" = sqlite ]; then
doubles=$(python3 - "$CLINIC_DB" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("""SELECT count(*) FROM (SELECT doctor_id, starts_at FROM appointments
                    WHERE status IN ('scheduled','confirmed') GROUP BY doctor_id, starts_at HAVING count(*) > 1)""").fetchone()[0])
PY
)
booked=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM appointments').fetchone()[0])" "$CLINIC_DB")
else
doubles=$(pgsql -d "$database" -c "SELECT count(*) FROM (SELECT doctor_id, starts_at FROM appointments
                    WHERE status IN ('scheduled','confirmed') GROUP BY doctor_id, starts_at HAVING count(*) > 1) AS twice")
booked=$(pgsql -d "$database" -c "SELECT count(*) FROM appointments")
fi
metrics=()
for n in "${!urls[@]}"; do
  curl -s "${urls[n]}/metrics" > "$work/metrics$n.txt"
  metrics+=("$work/metrics$n.txt")
done
stop_servers
if [ "$store" = cluster ]; then
  for n in 1 2; do kill "$(head -n 1 "$work/cluster/server$n.pid")" 2>/dev/null || true; done
fi

if [ "$store" = sqlite ]; then
  echo "PostgreSQL 15: the same booking (exclusion constraint on doctor × time, a history row), fsync on…" >&2
  mkdir "$work/pg"; [ "$(id -u)" -eq 0 ] && chown postgres "$work/pg" "$work"
  as_pg "$pgbin/initdb" -D "$work/pg" -A trust -U postgres >/dev/null
  as_pg "$pgbin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w \
    -o "-k $work -c listen_addresses='' -c fsync=on -c synchronous_commit=on -c max_connections=100" start >/dev/null
  psql() { as_pg "$pgbin/psql" -h "$work" -U postgres -X -q -v ON_ERROR_STOP=1 "$@"; }
  pgbench() { (cd "$work" && as_pg "$pgbin/pgbench" -h "$work" -U postgres "$@" postgres); }
elif [ "$store" = cluster ]; then
  echo "pgbench through HAProxy's primary port (database pgbench_book, synchronous replica): the bare booking…" >&2
  pgsql -d postgres -c "CREATE DATABASE pgbench_book"
  psql() { pgsql -d pgbench_book "$@"; }
  pgbench() { (cd "$work" && PGPASSWORD=$superuser_password "$pgbin/pgbench" -h 127.0.0.1 -p "$primary_port" -U postgres "$@" pgbench_book); }
else
  echo "pgbench on the same PostgreSQL (database pgbench_book): the bare booking (exclusion constraint on doctor × time, a history row)…" >&2
  pgsql -d clinic_test -c "CREATE DATABASE pgbench_book"
  psql() { pgsql -d pgbench_book "$@"; }
  pgbench() { (cd "$work" && "$pgbin/pgbench" -h "$pg_socket" -p "$pg_port" -U clinic_test "$@" pgbench_book); }
fi
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
[ "$store" = sqlite ] && [ "$(id -u)" -eq 0 ] && chown postgres "$work/book.sql"
for clients in 16 64; do
  out=$(pgbench -n -M prepared -c "$clients" -j 2 -T "$seconds" -r -f "$work/book.sql" 2>&1)
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

touch "$work/unexpected.txt"
[ -n "${HTTP_LOAD_RESULTS:-}" ] && cp "$results" "$HTTP_LOAD_RESULTS"
python3 - "$store" "$results" "$doubles" "$booked" "$fsync_floor" "$work/unexpected.txt" "${metrics[@]}" <<'PY'
import re, sys
store = sys.argv[1]
rows = {}
for line in open(sys.argv[2]):
    name, _, rest = line.partition(" ")
    values = dict(re.findall(r"(\w+)=([0-9.]+)", rest))
    rows[name] = {k: float(v) for k, v in values.items()}
doubles, booked, fsync = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
unexpected = [line.rstrip("\n") for line in open(sys.argv[6]) if line.strip()]
batch = {"sum": 0.0, "count": 0.0}
for path in sys.argv[7:]:  # each server's /metrics: the batches of all of them
    for key, value in re.findall(r'^clinic_commit_batch_size_(sum|count) ([0-9.e+]+)$', open(path).read(), re.M):
        batch[key] += float(value)
mean_batch = batch["sum"] / max(batch["count"], 1)
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
if store == "postgres":
    print("(http-*: two clinic serve on one PostgreSQL, two wrk at once with half the connections each;"
          " req/s summed, p50/p99 of the pooled latencies; pg-book on the same PostgreSQL)")
if store == "cluster":
    print("(http-*: through HAProxy to two clinic serve on Patroni's primary, a synchronous replica;"
          " pg-book through HAProxy's primary port)")
print(f"\nstore {store} · fsync median {fsync} µs · {booked} appointments booked · {doubles} slots booked twice · mean commit batch {mean_batch:.1f}")
book_errors = get('http-book', 'errors') + get('http-book', 'bad') + get('http-book', 'taken')
contended = ("contended: 0 double bookings, only 201 or 409", doubles == 0 and get("http-book-contended", "bad") == 0
             and get("http-book-contended", "errors") == 0, f"{doubles} doubles, {int(get('http-book-contended', 'bad'))} other answers")
if store in ("postgres", "cluster"):
    checks = [
        ("http-book ≥ 0.5 × pgbench on the same PostgreSQL", get("http-book", "rps") >= 0.5 * pg,
         f"{get('http-book', 'rps') / max(pg, 1):.2f} ×"),
        ("http-book 0 errors", book_errors == 0, f"{int(book_errors)}"),
        contended,
    ]
else:
    checks = [
        ("http-nearest ≥ 70 % of http-healthz", get("http-nearest", "rps") >= 0.7 * get("http-healthz", "rps"),
         f"{get('http-nearest', 'rps') / max(get('http-healthz', 'rps'), 1):.0%}"),
        ("http-book ≥ 1.5 × PostgreSQL", get("http-book", "rps") >= 1.5 * pg, f"{get('http-book', 'rps') / max(pg, 1):.2f} ×"),
        ("http-book p99 ≤ 25 ms", 0 < get("http-book", "p99") <= 25, f"{get('http-book', 'p99'):.1f} ms"),
        ("http-book 0 errors", book_errors == 0, f"{int(book_errors)}"),
        contended,
        ("under a log-in flood p99 ≤ 2 × unloaded", 0 < get("http-book-under-login-flood", "p99") <= 2 * get("http-book", "p99"),
         f"{get('http-book-under-login-flood', 'p99'):.1f} ms vs {get('http-book', 'p99'):.1f} ms"),
    ]
# Any answer that was neither what the load expects (200; 201 or 409 for bookings) nor a
# connection error fails the run, whichever load it came in, and is listed with its body.
bad = sum(int(row.get("bad", 0)) for name, row in rows.items() if name.startswith("http-"))
checks.append(("no unexpected answers (only 200, or 201/409 for bookings)", bad == 0, f"{bad}"))
if unexpected:
    print("\nunexpected answers (load, status, count, first body):")
    for line in unexpected:
        print("  " + line)
for label, ok, figure in checks:
    print(f"{'met ' if ok else 'MISSED'}  {label}: {figure}")
PY
