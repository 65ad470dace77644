#!/usr/bin/env bash
# Compares ClinicKit's nearest search with PostgreSQL 15 + PostGIS on the same 1M points:
# a throw-away server on a Unix socket in a temporary folder, the points loaded as geography
# with a GiST index, the same queries run by pgbench (one client, prepared statements), and a
# sample of PostGIS's answers checked against ours. Not part of CI. Usage:
#   Benchmarks/postgis-compare.sh [POINTS]        (default 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."
size="${1:-1000000}"
duration="${PGBENCH_SECONDS:-20}"

source scripts/env.sh
pgbin=/usr/lib/postgresql/15/bin
if [ ! -x "$pgbin/postgres" ] || [ ! -f /usr/share/postgresql/15/extension/postgis.control ]; then
  echo "Installing PostgreSQL 15 and PostGIS…" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql-15 postgresql-15-postgis-3 >/dev/null
fi
swift build -c release --product clinic-bench >&2
bench="$(swift build -c release --show-bin-path)/clinic-bench"

work=$(mktemp -d)
chmod 755 "$work"
# PostgreSQL refuses to run as root: run it as the postgres user when we are root.
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() { as_pg "$pgbin/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] && chown postgres "$work"

echo "Generating $size points (the same seeds as clinic-bench's nearest)…" >&2
ours=$("$bench" --export "$work/data-export" --export-size "$size")
[ "$(id -u)" -eq 0 ] && chown -R postgres "$work/data-export"

as_pg "$pgbin/initdb" -D "$work/data" -A trust -U postgres >/dev/null
as_pg "$pgbin/pg_ctl" -D "$work/data" -l "$work/server.log" -w \
  -o "-k $work -c listen_addresses='' -c shared_buffers=512MB -c fsync=off" start >/dev/null
psql() { as_pg /usr/lib/postgresql/15/bin/psql -h "$work" -U postgres -X -q -v ON_ERROR_STOP=1 "$@"; }

psql -c "CREATE EXTENSION postgis"
psql -c "CREATE TABLE staging (id bigint, lat double precision, lon double precision)"
psql -c "\\copy staging FROM '$work/data-export/points.csv' WITH (FORMAT csv)"
psql -c "CREATE TABLE points AS SELECT id, ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography AS geog FROM staging"
start=$(date +%s.%N)
psql -c "CREATE INDEX points_geog ON points USING gist (geog)"
end=$(date +%s.%N)
psql -c "VACUUM ANALYZE points"
index_seconds=$(python3 -c "print(f'{$end - $start:.1f}')")

# The same queries as ours, one per pgbench transaction, in order.
cat > "$work/nearest.sql" <<'SQL'
\set n random(0, 1999)
SELECT id FROM points ORDER BY geog <-> (SELECT geog FROM queries WHERE n = :n) LIMIT 1;
SQL
psql -c "CREATE TABLE queries (n int PRIMARY KEY, lat double precision, lon double precision, geog geography)"
python3 - "$work/data-export/queries.csv" > "$work/queries-numbered.csv" <<'PY'
import sys
for n, line in enumerate(open(sys.argv[1])):
    if line.strip(): print(f"{n},{line.strip()}")
PY
[ "$(id -u)" -eq 0 ] && chown postgres "$work/queries-numbered.csv"
psql -c "\\copy queries (n, lat, lon) FROM '$work/queries-numbered.csv' WITH (FORMAT csv)"
psql -c "UPDATE queries SET geog = ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography"

echo "pgbench: ${duration}s, 1 client, prepared statements…" >&2
(cd "$work" && as_pg /usr/lib/postgresql/15/bin/pgbench -h "$work" -U postgres -n -M prepared -c 1 -T "$duration" \
  -f "$work/nearest.sql" --log --log-prefix="$work/pgbench" postgres > "$work/pgbench.out" 2>&1)

# A sample of answers, checked against ours (same ids; distance on a sphere).
psql -A -t -F, -c "SELECT q.n, (SELECT id FROM points ORDER BY geog <-> q.geog LIMIT 1) FROM queries q WHERE q.n < 300 ORDER BY q.n" \
  > "$work/postgis-answers.csv"

python3 - "$work" "$ours" "$size" "$index_seconds" <<'PY'
import glob, sys
work, ours, size, index_seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
latencies = []
for path in glob.glob(f"{work}/pgbench.[0-9]*"):
    for line in open(path):
        fields = line.split()
        if len(fields) >= 3: latencies.append(int(fields[2]))  # microseconds
latencies.sort()
pct = lambda p: latencies[min(len(latencies) - 1, int(p * (len(latencies) - 1) + 0.5))]
mine = dict(item.split("=") for item in ours.split()[1:])
answers = {int(n): int(i) for n, i, _ in (l.split(",") for l in open(f"{work}/data-export/answers.csv") if l.strip())}
theirs = {int(n): int(i) for n, i in (l.split(",") for l in open(f"{work}/postgis-answers.csv") if l.strip())}
same = sum(1 for n, i in theirs.items() if answers.get(n) == i)
print(f"points: {size}   PostGIS GiST index build: {index_seconds} s")
print(f"{'':12} {'p50':>10} {'p99':>10}")
print(f"{'PostGIS':12} {pct(0.5)/1000:>8.3f}ms {pct(0.99)/1000:>8.3f}ms   ({len(latencies)} queries by pgbench, 1 client, prepared)")
print(f"{'ClinicKit':12} {float(mine['p50_us'])/1000:>8.4f}ms {float(mine['p99_us'])/1000:>8.4f}ms   (in-process, same queries)")
print(f"speed-up at p50: {pct(0.5) / float(mine['p50_us']):.0f}x")
print(f"answers checked: {same} of {len(theirs)} identical")
PY
