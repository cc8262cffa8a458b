#!/bin/bash
# Shared set-up for scripts/demo.sh and scripts/test.sh, sourced by both:
# install the Debian packages geoacc needs (once), build and install the
# extension, and start a throwaway PostgreSQL cluster as an unprivileged user.
# Afterwards PGHOST, PGPORT and PGUSER point at that cluster.
#
# GEOACC_PGDATA (default /tmp/geoacc-pgdata) and GEOACC_PGPORT (default 5499)
# choose where the cluster lives; PG_CONFIG, which PostgreSQL builds and runs it.  Re-running replaces the cluster.
set -euo pipefail

GEOACC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GEOACC_PGDATA=${GEOACC_PGDATA:-/tmp/geoacc-pgdata}
GEOACC_PGPORT=${GEOACC_PGPORT:-5499}
PACKAGES="build-essential postgresql-15 postgresql-server-dev-15 postgresql-15-postgis-3 zlib1g-dev gzip python3 iwyu"

# 1. packages (apt only when something is missing)
missing=""
for p in $PACKAGES; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "setup: missing packages:$missing (run as root to install them)" >&2
		exit 1
	fi
	echo "setup: installing$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# PG_CONFIG may name another (relocated) PostgreSQL 15 installation to build and test against
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
export PATH=$PGBIN:$PATH

# 2. build and install
cd "$GEOACC_ROOT"
echo "setup: building geoacc ($(command -v nvcc >/dev/null && echo "with CUDA" || echo "CPU only"))"
make -s -j"$(nproc)"
make -s install

# 3. a fresh cluster, owned by an unprivileged user
if [ "$(id -u)" = 0 ]; then
	id geoacc >/dev/null 2>&1 || useradd --system --create-home geoacc
	as_owner() { runuser -u geoacc -- "$@"; }
else
	as_owner() { "$@"; }
fi
if [ -f "$GEOACC_PGDATA/postmaster.pid" ]; then
	as_owner "$PGBIN/pg_ctl" -D "$GEOACC_PGDATA" -m immediate stop >/dev/null 2>&1 || true
fi
rm -rf "$GEOACC_PGDATA"
mkdir -p "$GEOACC_PGDATA"
[ "$(id -u)" = 0 ] && chown geoacc "$GEOACC_PGDATA"
as_owner "$PGBIN/initdb" -D "$GEOACC_PGDATA" -A trust -U postgres >/dev/null
as_owner "$PGBIN/pg_ctl" -D "$GEOACC_PGDATA" -l "$GEOACC_PGDATA/server.log" -w start \
	-o "-p $GEOACC_PGPORT -k /tmp -c listen_addresses='' ${GEOACC_PG_OPTS:-}" >/dev/null
export PGHOST=/tmp PGPORT=$GEOACC_PGPORT PGUSER=postgres
echo "setup: $(psql -XAtc 'SELECT version()' postgres | cut -d, -f1) running on port $PGPORT, log in $GEOACC_PGDATA/server.log"
