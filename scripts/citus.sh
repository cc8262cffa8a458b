#!/bin/bash
# The Citus suite: start a coordinator and two workers on this machine and
# run geoacc's Citus tests (test/citus, `make installcheck-citus`) against
# them; stop the cluster afterwards.
#
#   scripts/citus.sh              the suite
#   scripts/citus.sh --stage DIR  only build Citus and install it under DIR
#                                 (make install DESTDIR=DIR), for another
#                                 machine (test/device/citus-bundle.sh)
#
# Citus comes from the PostgreSQL installation PG_CONFIG names when it is
# there already (citus.so in its library directory).  Otherwise it is built
# from the source kept beside the repository, ../shared/citus/citus-*.tar.xz
# (or from a source tree named by CITUS_SRC), and installed into that
# PostgreSQL.  Neither: the suite is skipped with a line saying so, and the
# script exits 0.  geoacc and PostGIS must be installed already
# (scripts/setup.sh does that).
#
#   PG_CONFIG               the PostgreSQL 15 to use (default: Debian's)
#   GEOACC_CITUS_PORTS      the three ports (default "9700 9701 9702")
#   GEOACC_CITUS_BASE       data directories $BASE-{coord,w1,w2}, their logs
#                           $BASE-*.log, sockets in $BASE-sock (default /tmp/geoacc-citus)
#   GEOACC_CITUS_BUILD      where Citus is built (default /tmp/geoacc-citus-build;
#                           kept, so that a second run installs without building)
#   GEOACC_CITUS_KEEP=1     leave the cluster running afterwards
#
# Exits non-zero when the build or a test fails.
set -euo pipefail

GEOACC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
read -r PORT_COORD PORT_W1 PORT_W2 <<<"${GEOACC_CITUS_PORTS:-9700 9701 9702}"
BASE=${GEOACC_CITUS_BASE:-/tmp/geoacc-citus}
BUILD=${GEOACC_CITUS_BUILD:-/tmp/geoacc-citus-build}
SOCK=$BASE-sock
DB=geoacc_citus
CITUS_PACKAGES="liblz4-dev libzstd-dev libkrb5-dev"
STAGE=""
if [ "${1:-}" = --stage ]; then
	STAGE=${2:?usage: scripts/citus.sh --stage DIR}
	mkdir -p "$STAGE" && STAGE=$(cd "$STAGE" && pwd)
fi

skip() {	# the suite is skipped; staging for another machine fails instead
	if [ -n "$STAGE" ]; then echo "citus: $*" >&2; exit 1; fi
	echo "citus: SKIPPED: $*"
	exit 0
}
log() { echo "citus: $*"; }

# ------------------------------------------------------------------ Citus
# Unpack (once per tarball and PostgreSQL), patch and build Citus in $src.
build_citus() {
	src=${CITUS_SRC:-}
	tarball=$(ls "$GEOACC_ROOT"/../shared/citus/citus-*.tar.xz 2>/dev/null | sort -V | tail -1 || true)
	if [ -z "$src" ] && [ -z "$tarball" ]; then
		skip "Citus is not installed for $PG_CONFIG and there is no Citus source to build" \
			"($GEOACC_ROOT/../shared/citus/citus-*.tar.xz is absent, CITUS_SRC unset)"
	fi
	missing=""
	for p in $CITUS_PACKAGES; do
		dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		[ "$(id -u)" = 0 ] || skip "building Citus needs$missing (run as root to install them)"
		log "installing$missing"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
	fi
	if [ -z "$src" ]; then
		src=$BUILD/src
		if [ "$(cat "$BUILD/unpacked-from" 2>/dev/null)" != "$tarball $PG_CONFIG" ]; then
			rm -rf "$BUILD"
			mkdir -p "$src"
			tar -xJf "$tarball" -C "$src" --strip-components=1
			echo "$tarball $PG_CONFIG" > "$BUILD/unpacked-from"
		fi
	fi
	# PostgreSQL 15.20 declares have_createdb_privilege() itself, which clashes with the
	# static inline copy in Citus 13.2's pg_version_compat.h: give Citus's copy its own name.
	compat=$src/src/include/pg_version_compat.h
	if grep -q 'extern bool have_createdb_privilege' "$("$PG_CONFIG" --includedir-server)/commands/dbcommands.h" \
		&& ! grep -q citus_compat_have_createdb_privilege "$compat"; then
		sed -i '/^static inline bool$/{N;s/^static inline bool\nhave_createdb_privilege(void)$/#define have_createdb_privilege citus_compat_have_createdb_privilege\n&/}' "$compat"
	fi
	log "building Citus in $src for $PG_CONFIG"
	local start=$SECONDS
	# --without-libcurl: no usage reports; with_llvm=no: no bitcode for JIT inlining (half the build time)
	(cd "$src" && { [ -f Makefile.global ] || ./configure -q --without-libcurl PG_CONFIG="$PG_CONFIG" >/dev/null; } \
		&& make -s -j"$(nproc)" with_llvm=no >/dev/null)
	log "Citus built in $((SECONDS - start)) s"
}

if [ -n "$STAGE" ]; then
	build_citus
	make -s -C "$src" install with_llvm=no DESTDIR="$STAGE" >/dev/null
	log "Citus installed under $STAGE"
	exit 0
fi
if [ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ]; then
	log "using the Citus installed in $("$PG_CONFIG" --pkglibdir)"
else
	build_citus
	make -s -C "$src" install with_llvm=no >/dev/null
fi

# ---------------------------------------------------------------- cluster
if [ "$(id -u)" = 0 ]; then
	id geoacc >/dev/null 2>&1 || useradd --system --create-home geoacc
	as_owner() { runuser -u geoacc -- "$@"; }
else
	as_owner() { "$@"; }
fi
nodes="coord:$PORT_COORD w1:$PORT_W1 w2:$PORT_W2"

stop_cluster() {
	for node in $nodes; do
		if [ -f "$BASE-${node%%:*}/postmaster.pid" ]; then
			as_owner "$PGBIN/pg_ctl" -D "$BASE-${node%%:*}" -m fast stop >/dev/null 2>&1 || true
		fi
	done
}
stop_cluster
rm -rf "$SOCK" && mkdir -p "$SOCK"
[ "$(id -u)" = 0 ] && chown geoacc "$SOCK"
for node in $nodes; do
	name=${node%%:*} port=${node#*:}
	D=$BASE-$name
	rm -rf "$D" && mkdir -p "$D"
	[ "$(id -u)" = 0 ] && chown geoacc "$D"
	as_owner "$PGBIN/initdb" -D "$D" -A trust -U postgres -E UTF8 --locale=C.UTF-8 >/dev/null
	cat >>"$D/postgresql.conf" <<EOF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$SOCK'
shared_preload_libraries = 'citus,geoacc'	# geoacc: per-backend statistics (geoacc_backends())
max_prepared_transactions = 100		# two-phase commit of multi-shard writes
max_connections = 150
shared_buffers = 128MB
EOF
	as_owner "$PGBIN/pg_ctl" -D "$D" -l "$D.log" -w start >/dev/null
done
[ "${GEOACC_CITUS_KEEP:-0}" = 1 ] || trap stop_cluster EXIT
for node in $nodes; do
	port=${node#*:}
	"$PGBIN/createdb" -h "$SOCK" -p "$port" -U postgres "$DB"
	"$PGBIN/psql" -X -q -h "$SOCK" -p "$port" -U postgres -d "$DB" -c "CREATE EXTENSION citus"
done
"$PGBIN/psql" -X -q -At -h "$SOCK" -p "$PORT_COORD" -U postgres -d "$DB" -v ON_ERROR_STOP=1 <<EOF >/dev/null
SELECT citus_set_coordinator_host('127.0.0.1', $PORT_COORD);
SELECT citus_add_node('127.0.0.1', $PORT_W1);
SELECT citus_add_node('127.0.0.1', $PORT_W2);
EOF
log "Citus $("$PGBIN/psql" -X -At -h "$SOCK" -p "$PORT_COORD" -U postgres -d "$DB" -c "SELECT citus_version()" | cut -d' ' -f2 | tr -d ,): coordinator on port $PORT_COORD, workers on $PORT_W1 and $PORT_W2, logs in $BASE-*.log"

# ------------------------------------------------------------------ tests
cd "$GEOACC_ROOT"
if make -s installcheck-citus PGHOST="$SOCK" PGPORT="$PORT_COORD" PGUSER=postgres CITUS_DB="$DB"; then
	log "passed"
else
	head -200 test/citus/regression.diffs 2>/dev/null || true
	log "FAILED"
	exit 1
fi
