# Sourced by the other scripts: finds the Swift toolchain and installs the C libraries the
# package links (SQLite, GEOS, Argon2), and the tools the tests use, when they are missing.
# Debian/Ubuntu only.
set -euo pipefail

if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
  export PATH="/opt/swift/usr/bin:$PATH"
fi
command -v swift >/dev/null 2>&1 || { echo "The Swift toolchain is not on PATH (see swift.org/install)." >&2; exit 1; }

# openssl makes the TLS tests' certificates; curl and python3-venv serve the contract test;
# faketime runs the reminder test's deliveries a day ahead, chromium and chromium-driver the
# web app's browser tests (scripts/python-tests.sh); postgresql-15 (with btree_gist, in the
# package) the PostgreSQL store's tests, which start a throwaway server (scripts/postgres.sh);
# patroni, etcd-server, etcd-client and haproxy the highly available layout (scripts/cluster.sh)
# and its failover tests; libvips-dev photos (ClinicImages); zlib1g-dev the web's gzip (CZlib);
# libqpdf-dev reads uploaded PDFs to refuse active content (CQPDF); libedit-dev edits the
# interactive session's lines (CEdit), tmux drives it in its test; poppler-utils reads back
# the printed day list (pdfinfo, pdftotext, pdftoppm).
packages="libsqlite3-dev libgeos-dev libargon2-dev libvips-dev zlib1g-dev libqpdf-dev libcurl4-openssl-dev libedit-dev tmux poppler-utils pkg-config openssl curl python3-venv faketime chromium chromium-driver postgresql-15 patroni etcd-server etcd-client haproxy kannel kannel-extras"
missing=""
for package in $packages; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing="$missing $package"
done
if [ -n "$missing" ]; then
  echo "Installing:$missing" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
fi

cd "$(dirname "${BASH_SOURCE[0]}")/.."
