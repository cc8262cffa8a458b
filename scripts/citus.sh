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
# PostgreSQL.  Neither: the suite is skipped with a line saying how to run it,
# and the script exits 0.  geoacc and PostGIS must be installed already
# (scripts/setup.sh does that).
#
#   PG_CONFIG               the PostgreSQL 15 to use (default: Debian's)
#   CITUS_SRC               a Citus source tree to build (instead of the tarball)
#   GEOACC_CITUS_PORTS      the three ports (default "9700 9701 9702")
#   GEOACC_CITUS_BASE       data directories $BASE-{coord,w1,w2}, their logs
#                           $BASE-*.log, sockets in $BASE-sock (default /tmp/geoacc-citus)
#   GEOACC_CITUS_BUILD      where Citus is built (default /tmp/geoacc-citus-build;
#                           kept, so that a second run installs without building)
#   GEOACC_CITUS_KEEP=1     leave the cluster running afterwards
#
# Like scripts/setup.sh, it deletes only directories it made (the data and
# socket directories hold a file geoacc-owned, the build directory the file
# unpacked-from): a non-empty one without it is refused, and so is a port on
# which a server not of this cluster listens; nothing is changed then.
#
# Exits non-zero when the build or a test fails, or when it refuses.
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
refuse() { echo "citus: REFUSED: $*; nothing was changed" >&2; exit 1; }

# ------------------------------------------------------------------ Citus
# Unpack (once per tarball and PostgreSQL), patch and build Citus in $src.
find_source() {	# src or tarball: the Citus source to build; skipped when there is none
	src=${CITUS_SRC:-}
	tarball=$(ls "$GEOACC_ROOT"/../shared/citus/citus-*.tar.xz 2>/dev/null | sort -V | tail -1 || true)
	if [ -z "$src" ] && [ -z "$tarball" ]; then
		skip "Citus is not installed for $PG_CONFIG and there is no Citus source to build" \
			"($(cd "$GEOACC_ROOT/.." && pwd)/shared/citus/citus-*.tar.xz is absent, CITUS_SRC unset)." \
			"To run this suite, put a Citus 13 source tarball there (or set CITUS_SRC to a Citus source tree)," \
			"or install Citus for this PostgreSQL, and run scripts/citus.sh (as root, or with $CITUS_PACKAGES installed)"
	fi
	if [ -z "$src" ] && [ -e "$BUILD" ] && [ ! -f "$BUILD/unpacked-from" ] && [ -n "$(ls -A "$BUILD" 2>/dev/null || echo unreadable)" ]; then
		refuse "$BUILD is not empty and was not made by scripts/citus.sh (no unpacked-from file):" \
			"set GEOACC_CITUS_BUILD to a new or empty directory"
	fi
}
build_citus() {		# build the source find_source found, in $src
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
	find_source
	build_citus
	make -s -C "$src" install with_llvm=no DESTDIR="$STAGE" >/dev/null
	log "Citus installed under $STAGE"
	exit 0
fi
installed=0
[ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ] && installed=1
[ $installed = 1 ] || find_source

# ------------------------------------------------- whose directories and ports
case $BASE in /*) ;; *) BASE=$PWD/$BASE SOCK=$PWD/$SOCK ;; esac
nodes="coord:$PORT_COORD w1:$PORT_W1 w2:$PORT_W2"
for node in $nodes; do
	case ${node#*:} in '' | *[!0-9]*) refuse "GEOACC_CITUS_PORTS=\"${GEOACC_CITUS_PORTS:-}\" is not three port numbers" ;; esac
done
for D in "$SOCK" "$BASE-coord" "$BASE-w1" "$BASE-w2"; do
	if [ -e "$D" ] && [ ! -f "$D/geoacc-owned" ] && { [ ! -d "$D" ] || [ -n "$(ls -A "$D" 2>/dev/null || echo unreadable)" ]; }; then
		refuse "$D is there and was not made by scripts/citus.sh (no geoacc-owned file in it):" \
			"set GEOACC_CITUS_BASE to another prefix"
	fi
done
if [ "$(id -u)" = 0 ]; then
	id geoacc >/dev/null 2>&1 || useradd --system --create-home geoacc
	# from /, which geoacc can read (the clone may be in root's home)
	as_owner() { (cd / && runuser -u geoacc -- "$@"); }
else
	as_owner() { "$@"; }
fi
stop_cluster() {	# stop the nodes of this cluster that run (only directories it made)
	for node in $nodes; do
		D=$BASE-${node%%:*}
		if [ -f "$D/geoacc-owned" ] && [ -f "$D/postmaster.pid" ]; then
			as_owner "$PGBIN/pg_ctl" -D "$D" -m fast stop >/dev/null 2>&1 || true
		fi
	done
}
stop_cluster
live_lock() {	# live_lock FILE: a socket lock file whose server runs
	local pid
	pid=$(sed -n 1p "$1" 2>/dev/null || true)
	[ -n "$pid" ] && [ -d "/proc/$pid" ]
}
for node in $nodes; do	# with ours stopped, nothing may listen on the ports
	port=${node#*:}
	if live_lock "$SOCK/.s.PGSQL.$port.lock" || live_lock "/tmp/.s.PGSQL.$port.lock" \
		|| (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		refuse "a server not of this cluster listens on port $port: set GEOACC_CITUS_PORTS to three free ports"
	fi
done

if [ $installed = 1 ]; then
	log "using the Citus installed in $("$PG_CONFIG" --pkglibdir)"
else
	build_citus
	make -s -C "$src" install with_llvm=no >/dev/null
fi

# ---------------------------------------------------------------- cluster
marker="made by scripts/citus.sh"
rm -rf "$SOCK" && mkdir -p "$SOCK" && echo "$marker" > "$SOCK/geoacc-owned"
[ "$(id -u)" = 0 ] && chown geoacc "$SOCK"
for node in $nodes; do
	name=${node%%:*} port=${node#*:}
	D=$BASE-$name
	rm -rf "$D" && mkdir -p "$D"
	[ "$(id -u)" = 0 ] && chown geoacc "$D"
	as_owner "$PGBIN/initdb" -D "$D" -A trust -U postgres -E UTF8 --locale=C.UTF-8 >/dev/null
	echo "$marker" | as_owner tee "$D/geoacc-owned" >/dev/null
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
