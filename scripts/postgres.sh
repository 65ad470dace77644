#!/usr/bin/env bash
# A throwaway PostgreSQL 15 (Debian's postgresql-15) for the PostgreSQL store's tests.
#
#   scripts/postgres.sh start DIR   initdb in DIR/data, start it on a Unix socket in DIR/socket
#                                   and, with TLS only, on 127.0.0.1 at a free port; create the
#                                   role and database clinic_test; print the store's URL (the
#                                   socket's). DIR must not exist or be empty.
#   scripts/postgres.sh url DIR     prints the URL again
#   scripts/postgres.sh down DIR [fast|immediate]
#                                   stops the server and keeps DIR (immediate: as a crash, the
#                                   next start recovers from the WAL); for outage tests
#   scripts/postgres.sh up DIR      starts the server of DIR again (same socket and port)
#   scripts/postgres.sh stop DIR    stops the server (fast shutdown) and removes DIR
#
# The role clinic_test logs in with a password (scram-sha-256, so that a wrong password is
# really refused); the password is in DIR/password (mode 600) for the tests to put in
# PGPASSWORD. It is a throwaway server's and never used elsewhere. DIR/tls/ca.pem is the CA of
# the server's certificate (CN and DNS name localhost, no IP address, so that verify-full to
# 127.0.0.1 fails and to localhost passes); DIR/port is the TCP port. Over TCP only TLS
# connections are let in (hostssl).
#
# PostgreSQL refuses to run as root, and CI runs as root: then the server runs as the
# `postgres` system user (made by Debian's package) through runuser, DIR is made its own, and
# root connects through the socket like any user (scram, not peer). As any other user the
# server runs as that user.
set -euo pipefail

bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
command=${1:-}
dir=${2:-}
[ -n "$command" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop|url|down|up DIR" >&2; exit 2; }
role=clinic_test
database=clinic_test

as_server() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

url() { echo "postgresql://$role@/$database?host=$dir/socket&port=$(cat "$dir/port")"; }

case "$command" in
  start)
    [ -x "$bin/initdb" ] || { echo "PostgreSQL 15 is not installed ($bin/initdb missing): apt-get install postgresql-15" >&2; exit 1; }
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    [ -z "$(ls -A "$dir")" ] || { echo "$dir is not empty" >&2; exit 1; }
    # A Unix socket path is at most 107 bytes.
    [ ${#dir} -le 80 ] || { echo "$dir is too long for a Unix socket path" >&2; exit 1; }
    mkdir -p "$dir/data" "$dir/socket"
    # The server's user must reach DIR (mktemp makes it 700) and own data and socket.
    chmod 755 "$dir"
    if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir/data" "$dir/socket"; fi
    chmod 700 "$dir/data"
    chmod 755 "$dir/socket"
    # A free port on loopback below the ephemeral range (scripts/free-ports.py says why; the
    # socket's name carries it too).
    python3 "$(dirname "${BASH_SOURCE[0]}")/free-ports.py" 1 > "$dir/port"
    port=$(cat "$dir/port")
    # A CA and the server's certificate, for the TLS tests.
    mkdir -p "$dir/tls"
    (
      cd "$dir/tls"
      openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=clinic test CA" \
        -keyout ca.key -out ca.pem -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign" >/dev/null 2>&1
      openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout server.key -out server.csr >/dev/null 2>&1
      printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > server.ext
      openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext \
        -out server.pem >/dev/null 2>&1
    ) || { echo "openssl could not make the test certificates" >&2; exit 1; }
    chmod 644 "$dir/tls/ca.pem" "$dir/tls/server.pem"
    chmod 600 "$dir/tls/server.key" "$dir/tls/ca.key"
    if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir/tls/server.key" "$dir/tls/server.pem"; fi
    chmod 755 "$dir/tls"
    password=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
    (umask 077; printf '%s\n' "$password" > "$dir/password")
    as_server "$bin/initdb" -D "$dir/data" -U postgres -E UTF8 --locale=C.UTF-8 \
      --auth-local=peer --auth-host=reject >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    # The superuser only by peer (setup); everyone else by password, scram only.
    cat > "$dir/pg_hba.conf" <<EOF
local all postgres peer
local all all scram-sha-256
hostssl all all 127.0.0.1/32 scram-sha-256
EOF
    as_server cp "$dir/pg_hba.conf" "$dir/data/pg_hba.conf"
    cat > "$dir/settings.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $port
ssl = on
ssl_cert_file = '$dir/tls/server.pem'
ssl_key_file = '$dir/tls/server.key'
unix_socket_directories = '$dir/socket'
unix_socket_permissions = 0777
fsync = on
password_encryption = 'scram-sha-256'
# The parallel test pass opens stores for hundreds of tests at once: at 300 some were refused
# ("too many clients", said as storeConnectionLost) in two passes of four.
max_connections = 1000
shared_buffers = 32MB
log_min_messages = warning
EOF
    as_server sh -c "cat >> '$dir/data/postgresql.conf'" < "$dir/settings.conf"
    as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/data/server.log" -w -t 60 start >/dev/null \
      || { as_server cat "$dir/data/server.log" >&2 || true; exit 1; }
    psql=("$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/socket" -p "$port" -U postgres -d postgres)
    # The password goes to psql on stdin, never on a command line (it is base64: no quote in it).
    as_server "${psql[@]}" <<EOF
\\set pw '$password'
CREATE ROLE $role LOGIN CREATEDB PASSWORD :'pw';
CREATE DATABASE $database OWNER $role;
EOF
    url
    ;;
  url)
    dir=$(cd "$dir" && pwd)
    url
    ;;
  down)
    dir=$(cd "$dir" && pwd)
    mode=${3:-fast}
    case "$mode" in fast|immediate) ;; *) echo "usage: $0 down DIR [fast|immediate]" >&2; exit 2 ;; esac
    [ -d "$dir/data" ] && [ -f "$dir/password" ] || { echo "postgres.sh: $dir is not a folder 'start' made" >&2; exit 1; }
    [ -f "$dir/data/postmaster.pid" ] || exit 0
    as_server "$bin/pg_ctl" -D "$dir/data" -m "$mode" -w -t 60 stop >/dev/null
    ;;
  up)
    dir=$(cd "$dir" && pwd)
    [ -d "$dir/data" ] && [ -f "$dir/password" ] || { echo "postgres.sh: $dir is not a folder 'start' made" >&2; exit 1; }
    as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/data/server.log" -w -t 60 start >/dev/null \
      || { as_server cat "$dir/data/server.log" >&2 || true; exit 1; }
    ;;
  stop)
    [ -d "$dir" ] || exit 0
    dir=$(cd "$dir" && pwd)
    # Only a folder `start` made (its data folder and password file) is removed: a wrong DIR
    # (a home folder) is refused, and a server that will not stop keeps its files.
    if [ ! -d "$dir/data" ] || [ ! -f "$dir/password" ]; then
      echo "postgres.sh: $dir is not a folder 'start' made; nothing removed" >&2; exit 1
    fi
    if [ -f "$dir/data/postmaster.pid" ]; then
      as_server "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null \
        || { echo "postgres.sh: the server in $dir did not stop; its files are kept" >&2; exit 1; }
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start|stop|url|down|up DIR" >&2; exit 2
    ;;
esac
