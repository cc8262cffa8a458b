#!/bin/bash
# Set up (packages, build, install, the demo's own cluster), load the real AIS
# tracks into a database geoacc_demo and show what geoacc can do with them.
# The cluster (GEOACC_PGDATA, default /tmp/geoacc-demo, on GEOACC_PGPORT,
# default 5499; see scripts/setup.sh) keeps running afterwards; a second run
# reuses it and makes geoacc_demo again.  scripts/test.sh has a cluster of its own.
#   scripts/demo.sh          the demo
#   scripts/demo.sh --stop   stop the demo's server (the cluster stays, for the next run)
set -euo pipefail
if [ "${1:-}" = --stop ]; then
	dir=${GEOACC_PGDATA:-/tmp/geoacc-demo}
	grep -qx 'made by scripts/demo.sh' "$dir/geoacc-owned" 2>/dev/null \
		|| { echo "demo: $dir is not the cluster of scripts/demo.sh (no geoacc-owned file naming it): left alone" >&2; exit 1; }
	pg_ctl=$("${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}" --bindir)/pg_ctl
	if [ "$(id -u)" = 0 ]; then (cd / && runuser -u geoacc -- "$pg_ctl" -D "$dir" -m fast stop); else "$pg_ctl" -D "$dir" -m fast stop; fi
	exit
fi
GEOACC_CLUSTER=demo
. "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

dropdb --if-exists --force geoacc_demo
createdb geoacc_demo
psql -X -v ON_ERROR_STOP=1 -d geoacc_demo -f test/demo.sql
echo "demo: the server keeps running (data in $GEOACC_PGDATA): psql -h $PGHOST -p $PGPORT -U $PGUSER geoacc_demo;" \
	"scripts/demo.sh --stop stops it"
