#!/usr/bin/env bash
# The highly available layout of docs/DEPLOY.md on loopback, in one folder, for a developer to
# try and for the failover tests (Tests/python/test_cluster.py):
#
#   etcd (one member)  ─  Patroni n1, n2 (PostgreSQL 15, synchronous replication)
#   HAProxy: `primary` (Patroni's GET /primary), `replicas` (GET /replica), `http` (GET /readyz)
#   two `clinic serve` behind `http`, on the database through `primary`
#
#   scripts/cluster.sh up                starts it all, fills the default directory, and prints
#                                        one JSON line {"http", "postgres", "dir"} once bookings
#                                        work (CLUSTER_CLINICS=file.csv imports that directory,
#                                        with demo departments, instead of the default one)
#   scripts/cluster.sh status [--json]   {"leader", "members": [{"name", "role", "state",
#                                        "postmasterPid", "patroniPid"}], "servers": [{"url", "pid"}]}
#   scripts/cluster.sh start-member NAME starts Patroni NAME again (after a test killed it)
#   scripts/cluster.sh start-server N    starts clinic server N (1 or 2) again
#   scripts/cluster.sh switchover        a planned switchover to the replica (patronictl)
#   scripts/cluster.sh down              stops everything `up` started (by pid) and removes the folder
#
# CLUSTER_DIR names the folder (default: a new one under /tmp; `up` prints it), so that two
# clusters can coexist; every port is chosen free at `up` and kept in CLUSTER_DIR/ports.
# CLINIC_* variables in `up`'s environment reach the clinic servers. Plain TCP on loopback
# (no TLS between the parts here; docs/DEPLOY.md says where a real deployment has it).
# As root, Patroni and PostgreSQL run as the `postgres` user (PostgreSQL refuses root).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
command=${1:-}
shift || true
pg_bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
clinic_bin=${CLINIC_BIN:-$root/.build/debug/clinic}
members="n1 n2"

die() { echo "cluster.sh: $*" >&2; exit 1; }

# What runs as postgres runs from /, a folder postgres may enter: Patroni starts PostgreSQL
# through Python's multiprocessing, whose child first changes to its parent's working folder,
# and a caller's folder may be one only root can enter (a clone under `mktemp -d`, mode 0700:
# the child failed, and n1's bootstrap waited for it until the test gave up, in CI).
as_postgres() {
  # setpriv execs (no fork), so that $! is the program's own pid.
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && HOME=/var/lib/postgresql exec setpriv --reuid=postgres --regid=postgres --init-groups "$@")
  else
    "$@"
  fi
}

load() {
  [ -n "${CLUSTER_DIR:-}" ] || die "CLUSTER_DIR is not set (up prints it)"
  dir=$(cd "$CLUSTER_DIR" 2>/dev/null && pwd) || die "$CLUSTER_DIR does not exist"
  [ -f "$dir/ports" ] || die "$dir is not a folder 'up' made"
  # shellcheck disable=SC1091
  source "$dir/ports"
}

# Running, and not a zombie (a killed process waits for its reaper, which here may be a PID 1
# that never reaps).
alive() {
  [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null && [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" != Z ]
}
pid_of() { [ -f "$1" ] && head -n 1 "$1" || true; }
# A process's start time (clock ticks since boot, /proc/PID/stat's 22nd field).
started_at() { sed -n 's/.*) //p' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20; }
# A pid file of ours: the pid, then its start time. With pid_max at 32768 a pid comes round
# again within minutes of a test's processes; the start time tells the one we started from a
# stranger that has its number since (which must be neither called "running" nor killed).
record_pid() { printf '%s\n%s\n' "$1" "$(started_at "$1")" > "$2"; }
# The pid of the file if that very process still runs (a zombie does not), else nothing.
running_pid() {
  local pid since; pid=$(pid_of "$1"); since=$([ -f "$1" ] && sed -n 2p "$1" || true)
  alive "$pid" && { [ -z "$since" ] || [ "$(started_at "$pid")" = "$since" ]; } && echo "$pid" || true
}

# Polls `$@` until it succeeds; fails after $1 seconds with what $2 says.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || die "timed out after ${seconds}s waiting for $what"
    sleep 0.5
  done
}

start_etcd() {
  setsid etcd --name e1 --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_client" --advertise-client-urls "http://127.0.0.1:$etcd_client" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-cluster "e1=http://127.0.0.1:$etcd_peer" --initial-cluster-state new \
    --initial-cluster-token "clinic-$etcd_peer" >"$dir/etcd.log" 2>&1 < /dev/null &
  record_pid $! "$dir/etcd.pid"
}

start_member() {
  local name=$1
  if [ "$(id -u)" -eq 0 ]; then
    # From / (as_postgres says why); the subshell execs, so that $! is still Patroni's pid.
    (cd / && HOME=/var/lib/postgresql exec setsid setpriv --reuid=postgres --regid=postgres --init-groups \
      patroni "$dir/$name/patroni.yml") >>"$dir/$name/patroni.log" 2>&1 < /dev/null &
  else
    setsid patroni "$dir/$name/patroni.yml" >>"$dir/$name/patroni.log" 2>&1 < /dev/null &
  fi
  record_pid $! "$dir/$name/patroni.pid"
}

start_haproxy() {
  setsid haproxy -db -f "$dir/haproxy.cfg" >"$dir/haproxy.log" 2>&1 < /dev/null &
  record_pid $! "$dir/haproxy.pid"
}

start_server() {
  local index=$1 port_var="server${1}_port"
  local port=${!port_var}
  (
    # CLINIC_* from up's environment (kept in server.env, so that start-server gets them too),
    # then the cluster's own.
    # shellcheck disable=SC1091
    source "$dir/server.env"
    export CLINIC_DB="postgresql://clinic@127.0.0.1:$primary_port/clinic?sslmode=disable&connect_timeout=2"
    export PGPASSWORD=$clinic_password
    export CLINIC_KEY_FILE="$dir/keys/clinic.key" CLINIC_AUDIT_KEY_FILE="$dir/keys/clinic.audit-key"
    export CLINIC_SESSION="$dir/session" CLINIC_STAFF_SESSION="$dir/staff-session"
    export HOME=$dir
    setsid "$clinic_bin" serve --host 127.0.0.1 --port "$port" >"$dir/server$index.out" 2>>"$dir/server$index.log" < /dev/null &
    record_pid $! "$dir/server$index.pid"
  )
}

leader_rest() {
  # The REST port of the member Patroni says is the primary (200 on GET /primary).
  for name in $members; do
    local var="${name}_rest"
    if curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:${!var}/primary"; then echo "${!var}"; return 0; fi
  done
  return 1
}

clinic_run() {
  CLINIC_DB="postgresql://clinic@127.0.0.1:$primary_port/clinic?sslmode=disable&connect_timeout=5" \
    PGPASSWORD=$clinic_password CLINIC_KEY_FILE="$dir/keys/clinic.key" CLINIC_AUDIT_KEY_FILE="$dir/keys/clinic.audit-key" \
    CLINIC_SESSION="$dir/session" CLINIC_STAFF_SESSION="$dir/staff-session" HOME=$dir "$clinic_bin" "$@"
}

psql_primary() {
  PGPASSWORD=$superuser_password "$pg_bin/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$primary_port" \
    -U postgres -d postgres "$@"
}

up() {
  for tool in etcd patroni haproxy curl python3 setpriv; do
    command -v "$tool" >/dev/null || die "$tool is missing (scripts/env.sh installs patroni, etcd-server, haproxy)"
  done
  [ -x "$pg_bin/initdb" ] || die "PostgreSQL 15 is missing ($pg_bin)"
  [ -x "$clinic_bin" ] || die "no clinic binary at $clinic_bin (swift build first, or set CLINIC_BIN)"
  if [ -n "${CLUSTER_DIR:-}" ]; then
    mkdir -p "$CLUSTER_DIR"
    dir=$(cd "$CLUSTER_DIR" && pwd)
    [ -z "$(ls -A "$dir")" ] || die "$dir is not empty"
  else
    dir=$(mktemp -d /tmp/clinic-cluster.XXXXXX)
  fi
  # A Unix socket path (the folder + /n1/.s.PGSQL.PORT) is at most 107 bytes.
  [ ${#dir} -le 80 ] || die "$dir is too long for PostgreSQL's socket path"
  chmod 755 "$dir"
  # A failure half-way leaves what was started running: say how to stop it (the logs stay).
  # The ends of the logs go with the message, so that a CI run that fails says why.
  # Patroni's log begins with initdb's and PostgreSQL's own lines: its head says how far a
  # bootstrap got, its tail what Patroni did last; the processes and listening sockets say
  # what was still running, and on what it waited.
  trap 'code=$?; [ $code -eq 0 ] || { echo "cluster.sh: up failed; the logs are in $dir; CLUSTER_DIR=$dir $0 down stops what was started" >&2
        [ -f "$dir/etcd.log" ] && { echo "--- $dir/etcd.log" >&2; tail -n 15 "$dir/etcd.log" >&2; }
        for log in "$dir"/n*/patroni.log; do
          [ -f "$log" ] && { echo "--- $log (head)" >&2; head -n 60 "$log" >&2; echo "--- $log (tail)" >&2; tail -n 40 "$log" >&2; }; done
        echo "--- processes" >&2; ps -eo pid,ppid,etimes,stat,wchan:24,args | grep -E "postgres|patroni|etcd|initdb|pg_isready" | grep -v grep >&2
        echo "--- listening" >&2; ss -ltnp 2>/dev/null | grep -E ":(${n1_pg:-x}|${n1_rest:-x}|${n2_pg:-x}|${n2_rest:-x}|${etcd_client:-x}) " >&2; }' EXIT
  # Ports and the cluster's passwords: the operator's only (status and the tests read it as them).
  # Made 0600 before a byte is written: the folder is 0755, and a chmod after the writing left
  # the passwords readable by every local user meanwhile.
  install -m 600 /dev/null "$dir/ports"
  # Free ports on loopback, all at once, below the ephemeral range (scripts/free-ports.py says why).
  python3 "$root/scripts/free-ports.py" 12 etcd_client etcd_peer n1_pg n1_rest n2_pg n2_rest primary_port replicas_port \
    http_port stats_port server1_port server2_port > "$dir/ports"
  secret() { head -c 24 /dev/urandom | base64 | tr -d '/+='; }
  { echo "superuser_password=$(secret)"; echo "replication_password=$(secret)"
    echo "rewind_password=$(secret)"; echo "clinic_password=$(secret)"; } >> "$dir/ports"
  # shellcheck disable=SC1091
  source "$dir/ports"
  mkdir -p "$dir/keys" && chmod 700 "$dir/keys"
  (umask 077; export -p | grep '^declare -x CLINIC_' > "$dir/server.env" || true)

  start_etcd
  wait_for 30 "etcd" curl -fsS --max-time 2 "http://127.0.0.1:$etcd_client/health"

  for name in $members; do
    local pg_var="${name}_pg" rest_var="${name}_rest"
    mkdir -p "$dir/$name"
    # The members' passwords: private before they are written, as the ports file.
    install -m 600 /dev/null "$dir/$name/patroni.yml"
    sed -e "s|@NAME@|$name|g" -e "s|@DIR@|$dir|g" -e "s|@PG_BIN@|$pg_bin|g" \
        -e "s|@PG_PORT@|${!pg_var}|g" -e "s|@REST_PORT@|${!rest_var}|g" -e "s|@ETCD@|127.0.0.1:$etcd_client|g" \
        -e "s|@SUPERUSER_PASSWORD@|$superuser_password|g" -e "s|@REPLICATION_PASSWORD@|$replication_password|g" \
        -e "s|@REWIND_PASSWORD@|$rewind_password|g" \
        "$root/deploy/loopback/patroni.yml.in" > "$dir/$name/patroni.yml"
    if [ "$(id -u)" -eq 0 ]; then chown -R postgres: "$dir/$name"; fi
    chmod 700 "$dir/$name"
  done
  start_member n1
  # The first member bootstraps the cluster alone, so that it is the leader; then the replica.
  # The wait is Patroni's own: initdb, then up to pg_ctl_timeout (60 s) for the port and 60 s
  # for connections, after which a failed bootstrap ends Patroni (and this wait, at once).
  local deadline=$((SECONDS + 300))
  until curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$n1_rest/primary" 2>/dev/null; do
    [ -n "$(running_pid "$dir/n1/patroni.pid")" ] || die "n1's Patroni stopped before it led (its bootstrap failed)"
    [ $SECONDS -lt $deadline ] || die "timed out after 300s waiting for n1 to lead"
    sleep 0.5
  done
  start_member n2

  sed -e "s|@PRIMARY_PORT@|$primary_port|g" -e "s|@REPLICAS_PORT@|$replicas_port|g" -e "s|@HTTP_PORT@|$http_port|g" \
      -e "s|@STATS_PORT@|$stats_port|g" \
      -e "s|@N1_PG@|$n1_pg|g" -e "s|@N1_REST@|$n1_rest|g" -e "s|@N2_PG@|$n2_pg|g" -e "s|@N2_REST@|$n2_rest|g" \
      -e "s|@SERVER1@|$server1_port|g" -e "s|@SERVER2@|$server2_port|g" \
      "$root/deploy/loopback/haproxy.cfg.in" > "$dir/haproxy.cfg"
  start_haproxy
  wait_for 60 "the primary listener" psql_primary -c "SELECT 1"

  # The application's role and database (the superuser is the operator's, never the servers').
  psql_primary <<EOF
\\set pw '$clinic_password'
CREATE ROLE clinic LOGIN PASSWORD :'pw';
CREATE DATABASE clinic OWNER clinic;
EOF
  if [ -n "${CLUSTER_CLINICS:-}" ]; then
    clinic_run admin migrate >"$dir/init.log" 2>&1 || { cat "$dir/init.log" >&2; die "clinic admin migrate failed"; }
    clinic_run admin import-clinics "$CLUSTER_CLINICS" --demo >>"$dir/init.log" 2>&1 \
      || { cat "$dir/init.log" >&2; die "clinic admin import-clinics failed"; }
  else
    clinic_run init >"$dir/init.log" 2>&1 || { cat "$dir/init.log" >&2; die "clinic init failed"; }
  fi

  start_server 1
  start_server 2
  # The replica streams synchronously before the servers take traffic.
  wait_for 120 "n2 as a synchronous replica" \
    bash -c "curl -fsS --max-time 2 http://127.0.0.1:$n1_rest/cluster | grep -q sync_standby"
  wait_for 60 "the clinic servers behind the balancer" curl -fsS --max-time 2 "http://127.0.0.1:$http_port/readyz"
  wait_for 60 "both clinic servers" bash -c \
    "curl -fsS --max-time 2 http://127.0.0.1:$server1_port/readyz && curl -fsS --max-time 2 http://127.0.0.1:$server2_port/readyz"
  printf '{"http": "http://127.0.0.1:%s", "postgres": "postgresql://clinic@127.0.0.1:%s/clinic?sslmode=disable", "dir": "%s"}\n' \
    "$http_port" "$primary_port" "$dir"
}

status() {
  load
  DIR=$dir MEMBERS="$members" python3 - "$@" <<'EOF'
import json, os, sys, urllib.request
folder = os.environ["DIR"]
ports = dict(line.strip().split("=", 1) for line in open(os.path.join(folder, "ports")) if "=" in line)

def pid(path):
    """The pid in the file if that process runs (a zombie does not) and, when the file has its
    start time (record_pid), is the very process started, not another with its number since."""
    try:
        lines = open(path).read().splitlines()
        value = int(lines[0])
        # Ours are two lines (record_pid); PostgreSQL's postmaster.pid has its own layout.
        since = lines[1].strip() if len(lines) == 2 and lines[1].strip().isdigit() else None
        with open(f"/proc/{value}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        if fields[0] == "Z" or (since is not None and fields[19] != since):
            return None
        return value
    except (OSError, ValueError, IndexError):
        return None

def get(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return json.load(response)
    except Exception:
        return None

cluster = None
for name in os.environ["MEMBERS"].split():
    cluster = get(f"http://127.0.0.1:{ports[name + '_rest']}/cluster")
    if cluster:
        break
listed = {member["name"]: member for member in (cluster or {}).get("members", [])}
leader = next((name for name, member in listed.items() if member.get("role") == "leader"), None)
members = []
for name in os.environ["MEMBERS"].split():
    member = listed.get(name, {})
    members.append({"name": name, "role": member.get("role", "unknown"), "state": member.get("state", "stopped"),
                    "postmasterPid": pid(os.path.join(folder, name, "data", "postmaster.pid")),
                    "patroniPid": pid(os.path.join(folder, name, "patroni.pid"))})
servers = [{"url": f"http://127.0.0.1:{ports[f'server{i}_port']}", "pid": pid(os.path.join(folder, f"server{i}.pid"))}
           for i in (1, 2)]
result = {"leader": leader, "members": members, "servers": servers}
if "--json" in sys.argv[1:]:
    print(json.dumps(result))
else:
    print(f"leader: {leader}")
    for member in members:
        print(f"  {member['name']}: {member['role']}, {member['state']} (postmaster {member['postmasterPid']}, patroni {member['patroniPid']})")
    for server in servers:
        print(f"  server {server['url']} (pid {server['pid']})")
EOF
}

down() {
  load
  # The servers, the balancer, Patroni (which stops its PostgreSQL), etcd: by the pids recorded
  # (running_pid: the very processes started, not others that have their numbers since).
  for file in "$dir"/server*.pid "$dir/haproxy.pid"; do
    local pid; pid=$(running_pid "$file")
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  for name in $members; do
    local pid; pid=$(running_pid "$dir/$name/patroni.pid")
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  for name in $members; do
    local deadline=$((SECONDS + 30))
    while [ -n "$(running_pid "$dir/$name/patroni.pid")" ] && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    local pid; pid=$(running_pid "$dir/$name/patroni.pid")
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
    # A PostgreSQL whose Patroni was killed keeps running: stop it by its own pid.
    local postmaster; postmaster=$(pid_of "$dir/$name/data/postmaster.pid")
    if alive "$postmaster"; then
      kill -INT "$postmaster" 2>/dev/null || true
      deadline=$((SECONDS + 30))
      while alive "$postmaster" && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
      alive "$postmaster" && kill -9 "$postmaster" 2>/dev/null || true
    fi
  done
  local pid; pid=$(running_pid "$dir/etcd.pid")
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  for file in "$dir"/server*.pid "$dir/haproxy.pid" "$dir/etcd.pid"; do
    local deadline=$((SECONDS + 15))
    while [ -n "$(running_pid "$file")" ] && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    pid=$(running_pid "$file")
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$dir"
}

case "$command" in
  up) up ;;
  status) status "$@" ;;
  down) down ;;
  start-member)
    load
    name=${1:-}
    case " $members " in *" $name "*) ;; *) die "no member '$name' (members: $members)" ;; esac
    [ -n "$(running_pid "$dir/$name/patroni.pid")" ] && die "Patroni $name is running"
    start_member "$name"
    ;;
  start-server)
    load
    index=${1:-}
    case "$index" in 1|2) ;; *) die "no server '$index' (1 or 2)" ;; esac
    [ -n "$(running_pid "$dir/server$index.pid")" ] && die "server $index is running"
    start_server "$index"
    port_var="server${index}_port"
    wait_for 60 "server $index" curl -fsS --max-time 2 "http://127.0.0.1:${!port_var}/readyz"
    ;;
  switchover)
    load
    leader=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["leader"] or "")' < <(status --json))
    [ -n "$leader" ] || die "no leader to switch over from"
    candidate=""
    for name in $members; do [ "$name" = "$leader" ] || candidate=$name; done
    as_postgres patronictl -c "$dir/$leader/patroni.yml" switchover --leader "$leader" --candidate "$candidate" --force
    ;;
  *) echo "usage: $0 up|status [--json]|down|start-member NAME|start-server N|switchover" >&2; exit 2 ;;
esac
