#!/bin/bash
# Shared set-up for scripts/demo.sh and scripts/test.sh, sourced by both:
# install the Debian packages geoacc needs (once), build and install the
# extension, and start a PostgreSQL cluster of the calling script's own, as an
# unprivileged user (the system user geoacc when run as root).  Afterwards
# PGHOST, PGPORT and PGUSER point at that cluster.
#
# The caller sets GEOACC_CLUSTER (demo or test) and may list more packages in
# GEOACC_EXTRA_PACKAGES (needed: a failed install stops the script) and in
# GEOACC_OPTIONAL_PACKAGES (wanted: a failed install is reported and the
# script goes on; what needs them says it is skipped).  Each script has its own
# cluster:
#
#   script          GEOACC_PGDATA (default)   GEOACC_PGPORT (default)
#   scripts/demo.sh /tmp/geoacc-demo          5499   kept, reused by the next demo.sh
#   scripts/test.sh /tmp/geoacc-test          5498   made afresh, stopped at the end
#
# A cluster these scripts made holds the file geoacc-owned (written after
# initdb, naming the script).  They never delete or start a directory without
# it: a non-empty GEOACC_PGDATA without that file, or one that the other
# script made, is refused and left as it is, and so is a GEOACC_PGPORT on which
# a server of another directory listens (its socket in /tmp, or on 127.0.0.1).
#
#   PG_CONFIG        the PostgreSQL 15 to build and run (default: Debian's)
#   GEOACC_PG_OPTS   more server options (postgres -c ... form)
#   GEOACC_FRESH=1   delete the script's own cluster and make it again (test.sh always does)
set -euo pipefail

GEOACC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case ${GEOACC_CLUSTER:-} in
demo) GEOACC_PGDATA=${GEOACC_PGDATA:-/tmp/geoacc-demo} GEOACC_PGPORT=${GEOACC_PGPORT:-5499} ;;
test) GEOACC_PGDATA=${GEOACC_PGDATA:-/tmp/geoacc-test} GEOACC_PGPORT=${GEOACC_PGPORT:-5498} ;;
*) echo "setup: GEOACC_CLUSTER must be demo or test (scripts/demo.sh and scripts/test.sh set it)" >&2; exit 2 ;;
esac
GEOACC_SCRIPT=scripts/$GEOACC_CLUSTER.sh
PACKAGES="build-essential postgresql-15 postgresql-server-dev-15 postgresql-15-postgis-3 zlib1g-dev gzip python3 ${GEOACC_EXTRA_PACKAGES:-}"

refuse() { echo "setup: REFUSED: $*" >&2; exit 1; }
# the directory as an absolute path without a trailing slash (it may not exist yet)
case $GEOACC_PGDATA in /*) ;; *) GEOACC_PGDATA=$PWD/$GEOACC_PGDATA ;; esac
while [ "${GEOACC_PGDATA%/}" != "$GEOACC_PGDATA" ]; do GEOACC_PGDATA=${GEOACC_PGDATA%/}; done
[ -n "$GEOACC_PGDATA" ] || refuse "GEOACC_PGDATA may not be /"
case $GEOACC_PGPORT in '' | *[!0-9]*) refuse "GEOACC_PGPORT=$GEOACC_PGPORT is not a port number" ;; esac
GEOACC_MARKER=$GEOACC_PGDATA/geoacc-owned

# 0. whose are GEOACC_PGDATA and GEOACC_PGPORT?  Refused before anything is installed, built or changed.
if [ -e "$GEOACC_PGDATA" ] && [ ! -d "$GEOACC_PGDATA" ]; then
	refuse "GEOACC_PGDATA=$GEOACC_PGDATA is not a directory; set GEOACC_PGDATA to a new or empty directory"
elif [ -f "$GEOACC_MARKER" ]; then
	made_by=$(sed -n 's/^made by //p' "$GEOACC_MARKER" | head -1)
	[ "$made_by" = "$GEOACC_SCRIPT" ] || refuse "$GEOACC_PGDATA is the cluster of ${made_by:-another script}," \
		"not of $GEOACC_SCRIPT: nothing was changed; set GEOACC_PGDATA (and GEOACC_PGPORT) to another directory (and port)"
elif [ -d "$GEOACC_PGDATA" ] && [ -n "$(ls -A "$GEOACC_PGDATA" 2>/dev/null || echo unreadable)" ]; then
	refuse "$GEOACC_PGDATA is not empty and was not made by these scripts (it has no geoacc-owned file):" \
		"nothing was changed; set GEOACC_PGDATA to a new or empty directory"
fi

# port_user PORT: the data directory of the server that listens on PORT here, with its socket in /tmp
# or on 127.0.0.1 ("" when none; "a server of unknown directory" when only the TCP port answers)
port_user() {
	local lock=/tmp/.s.PGSQL.$1.lock pid
	if [ -f "$lock" ]; then
		pid=$(sed -n 1p "$lock" 2>/dev/null || true)
		if [ -n "$pid" ] && [ -d "/proc/$pid" ]; then
			sed -n 2p "$lock"
			return
		fi
	fi
	if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
		echo "a server of unknown directory (127.0.0.1:$1)"
	fi
}
# the port: free, or the one our cluster listens on
user=$(port_user "$GEOACC_PGPORT")
if [ -n "$user" ] && [ "$user" != "$GEOACC_PGDATA" ]; then
	hint=""
	[ "$user" = /tmp/geoacc-pgdata ] && hint=" (the cluster of an earlier version of these scripts: stop it with pg_ctl -D $user stop, as its owner)"
	refuse "port $GEOACC_PGPORT is taken by $user$hint: nothing was changed; set GEOACC_PGPORT to a free port"
fi

# 1. packages (apt only when something is missing)
missing_of() {		# missing_of PACKAGE...: those dpkg does not know as installed
	local p
	for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || echo -n " $p"; done
}
missing=$(missing_of $PACKAGES)
optional=$(missing_of ${GEOACC_OPTIONAL_PACKAGES:-})
if [ -n "$missing$optional" ] && [ "$(id -u)" != 0 ]; then
	[ -z "$missing" ] || { echo "setup: missing packages:$missing (run as root to install them)" >&2; exit 1; }
	echo "setup: optional packages not installed:$optional (run as root to install them)"
elif [ -n "$missing$optional" ]; then
	apt-get update -qq
	if [ -n "$missing" ]; then
		echo "setup: installing$missing"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
	fi
	# one at a time: one that cannot be installed here (a conflict with a package from another
	# source, say) leaves the others
	for p in $optional; do
		echo "setup: installing $p (optional)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 \
			|| echo "setup: could not install $p (apt-get install $p fails here): going on without it"
	done
fi
# PG_CONFIG may name another (relocated) PostgreSQL 15 installation to build and test against
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
export PATH=$PGBIN:$PATH

if [ "$(id -u)" = 0 ]; then
	id geoacc >/dev/null 2>&1 || useradd --system --create-home geoacc
	# from /, which geoacc can read (the clone may be in root's home)
	as_owner() { (cd / && runuser -u geoacc -- "$@"); }
else
	as_owner() { "$@"; }
fi

# 2. build and install
cd "$GEOACC_ROOT"
echo "setup: building geoacc ($(command -v nvcc >/dev/null && echo "with CUDA" || echo "CPU only"))"
make -s -j"$(nproc)"
make -s install

# 3. the cluster: scripts/test.sh makes it afresh (GEOACC_FRESH=1), scripts/demo.sh reuses its own
start_cluster() {	# start_cluster [SERVER OPTIONS...]: (re)start the cluster, with these options too
	local how=start
	as_owner "$PGBIN/pg_ctl" -D "$GEOACC_PGDATA" status >/dev/null 2>&1 && how=restart
	as_owner "$PGBIN/pg_ctl" -D "$GEOACC_PGDATA" -l "$GEOACC_PGDATA/server.log" -w $how \
		-o "-p $GEOACC_PGPORT -k /tmp -c listen_addresses='' ${GEOACC_PG_OPTS:-} $*" >/dev/null
}
stop_cluster() {	# stop_cluster: stop the cluster, if it is ours and runs
	if [ -f "$GEOACC_MARKER" ] && [ -f "$GEOACC_PGDATA/postmaster.pid" ]; then
		as_owner "$PGBIN/pg_ctl" -D "$GEOACC_PGDATA" -m fast stop >/dev/null 2>&1 || true
	fi
}
pg_major=$("$PG_CONFIG" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')
if [ -f "$GEOACC_MARKER" ]; then
	if [ "${GEOACC_FRESH:-0}" = 1 ] || [ "$(cat "$GEOACC_PGDATA/PG_VERSION" 2>/dev/null)" != "$pg_major" ]; then
		stop_cluster
		rm -rf "$GEOACC_PGDATA"
	else
		echo "setup: reusing the cluster in $GEOACC_PGDATA (made by $GEOACC_SCRIPT)"
	fi
fi
if [ ! -f "$GEOACC_MARKER" ]; then
	mkdir -p "$GEOACC_PGDATA"
	[ "$(id -u)" = 0 ] && chown geoacc "$GEOACC_PGDATA"
	as_owner test -w "$GEOACC_PGDATA" \
		|| refuse "the user $(as_owner id -un) cannot write to $GEOACC_PGDATA (a directory above it is closed to it);" \
			"set GEOACC_PGDATA to a directory under /tmp, for instance"
	as_owner "$PGBIN/initdb" -D "$GEOACC_PGDATA" -A trust -U postgres >/dev/null
	printf 'made by %s\nPostgreSQL data directory of geoacc'\''s %s; the scripts may delete it\n' \
		"$GEOACC_SCRIPT" "$GEOACC_SCRIPT" | as_owner tee "$GEOACC_MARKER" >/dev/null
fi
start_cluster
export PGHOST=/tmp PGPORT=$GEOACC_PGPORT PGUSER=postgres
echo "setup: $(psql -XAtc 'SELECT version()' postgres | cut -d, -f1) running on port $PGPORT," \
	"data and log (server.log) in $GEOACC_PGDATA"
