#!/usr/bin/env bash
# Kannel for a trial, without an operator: Debian's bearerbox and smsbox (package `kannel`) with
# the fake phone network fakesmsc (`kannel-extras`) in place of an operator's SMSC, all on
# 127.0.0.1, in a folder of their own. It prints the CLINIC_SMS_* settings for `clinic serve`;
# the texts the phones get are in FOLDER/phones.log, and a phone replies by a line written to
# FOLDER/phone.in:
#
#   scripts/kannel-trial.sh start [FOLDER] [SERVER_URL]    # default /tmp/clinic-kannel, http://127.0.0.1:8080
#   scripts/kannel-trial.sh stop [FOLDER]
#   echo '+12025550143 +15550100 text C' > /tmp/clinic-kannel/phone.in     # a reply "C" from that phone
#
# deploy/kannel/kannel.conf is the production shape (an operator's SMSC, TLS); Tests/python/kannel.py
# the same trial, for the tests. Ports: 14000 (admin), 14001 (boxes), 14013 (sendsms), 14015 (fake SMSC),
# or KANNEL_TRIAL_PORTS="ADMIN BOXES SENDSMS SMSC".
set -euo pipefail
command=${1:-}
folder=${2:-/tmp/clinic-kannel}
server=${3:-http://127.0.0.1:8080}
BEARERBOX=${KANNEL_BEARERBOX:-/usr/sbin/bearerbox}
SMSBOX=${KANNEL_SMSBOX:-/usr/sbin/smsbox}
FAKESMSC=${KANNEL_FAKESMSC:-/usr/lib/kannel/test/fakesmsc}
read -r admin_port box_port sendsms_port smsc_port <<< "${KANNEL_TRIAL_PORTS:-14000 14001 14013 14015}"

# Stops what a start left running, each waited for (bearerbox takes seconds to let its ports go).
stop() {
  for name in fakesmsc holder smsbox bearerbox; do
    if [ -f "$folder/$name.pid" ]; then
      pid=$(cat "$folder/$name.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$folder/$name.pid"
    fi
  done
}

case "$command" in
  start)
    for program in "$BEARERBOX" "$SMSBOX" "$FAKESMSC"; do
      [ -x "$program" ] || { echo "kannel-trial: $program is missing (apt-get install kannel kannel-extras)" >&2; exit 1; }
    done
    mkdir -p "$folder"
    chmod 700 "$folder"
    stop
    secret=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
    password=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
    cat > "$folder/kannel.conf" <<CONF
# Written by scripts/kannel-trial.sh: a trial on 127.0.0.1 with fakesmsc as the phone network.
group = core
admin-port = $admin_port
admin-interface = 127.0.0.1
admin-password = $password
admin-allow-ip = "127.0.0.1"
smsbox-port = $box_port
box-deny-ip = "*.*.*.*"
box-allow-ip = "127.0.0.1"
log-file = "$folder/bearerbox.log"
access-log = "$folder/bearerbox-access.log"
dlr-storage = internal

group = smsc
smsc = fake
smsc-id = fake
host = 127.0.0.1
port = $smsc_port
connect-allow-ip = "127.0.0.1"

group = smsbox
bearerbox-host = 127.0.0.1
bearerbox-port = $box_port
sendsms-port = $sendsms_port
sendsms-interface = 127.0.0.1
log-file = "$folder/smsbox.log"
access-log = "$folder/smsbox-access.log"
mo-recode = true
reply-couldnotfetch = ""
reply-couldnotrepresent = ""
reply-requestfailed = ""
reply-emptymessage = ""

group = sendsms-user
username = clinic
password = $password
user-deny-ip = "*.*.*.*"
user-allow-ip = "127.0.0.1"
concatenation = true
max-messages = 4

group = sms-service
keyword = default
catch-all = true
get-url = "$server/v1/texts/incoming?key=$secret&from=%p&to=%P&text=%b"
accept-x-kannel-headers = true
max-messages = 3
concatenation = true
omit-empty = true
CONF
    chmod 600 "$folder/kannel.conf"
    # Every background process's descriptors go to files: none holds the caller's terminal or pipe.
    "$BEARERBOX" "$folder/kannel.conf" < /dev/null > "$folder/bearerbox.out" 2>&1 &
    echo $! > "$folder/bearerbox.pid"
    sleep 1
    "$SMSBOX" "$folder/kannel.conf" < /dev/null > "$folder/smsbox.out" 2>&1 &
    echo $! > "$folder/smsbox.pid"
    # fakesmsc reads the phones' replies from its standard input and quits when that is not
    # open: a fifo held open by a process of its own keeps it there.
    rm -f "$folder/phone.in"
    mkfifo "$folder/phone.in"
    sleep infinity < /dev/null > "$folder/phone.in" 2> /dev/null &
    echo $! > "$folder/holder.pid"
    "$FAKESMSC" -H 127.0.0.1 -r "$smsc_port" -i 0.1 < "$folder/phone.in" > "$folder/fakesmsc.out" 2> "$folder/phones.log" &
    echo $! > "$folder/fakesmsc.pid"
    # Ready when sendsms answers (any status: it is listening).
    for _ in $(seq 1 100); do
      if curl -s -m 2 -o /dev/null "http://127.0.0.1:$sendsms_port/cgi-bin/sendsms"; then break; fi
      sleep 0.1
    done
    curl -s -m 2 -o /dev/null "http://127.0.0.1:$sendsms_port/cgi-bin/sendsms" || { echo "kannel-trial: smsbox did not start; see $folder/*.log" >&2; stop; exit 1; }
    cat <<ENV
Kannel runs (bearerbox, smsbox, fakesmsc) in $folder. Start the server with:

  CLINIC_SMS_URL=http://127.0.0.1:$sendsms_port/cgi-bin/sendsms CLINIC_SMS_USER=clinic CLINIC_SMS_PASSWORD=$password \\
  CLINIC_SMS_FROM=+15550100 CLINIC_SMS_SECRET=$secret CLINIC_SMS_CALLBACK_URL=$server \\
  clinic serve --port ${server##*:}

The phones' texts: tail -f $folder/phones.log ("Got message N: <FROM TO text …>").
A reply from a phone: echo '+12025550143 +15550100 text C' > $folder/phone.in
Stop: $0 stop $folder
ENV
    ;;
  stop)
    stop
    ;;
  *)
    echo "usage: $0 start [FOLDER] [SERVER_URL] | stop [FOLDER]" >&2
    exit 2
    ;;
esac
