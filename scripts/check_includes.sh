#!/bin/bash
# Include check for the PostgreSQL glue: each src/*.c (and src/geoacc.h, src/density_raster.h) must #include
# every PostgreSQL or project header whose functions, macros or types it uses, itself or through an umbrella
# named in scripts/iwyu.imp (postgres.h, src/geoacc.h, funcapi.h, and headers that cannot drop what they bring).
# Why: a use that compiles only because some other header happens to include the declaring one breaks
# when a minor release changes that (make_trajectories.c's pg_add_s64_overflow built against 15.20's
# headers, where access/tupmacs.h brings common/int.h, and not against 15.18's).
# Runs Debian's include-what-you-use (package iwyu; installs nothing) on each file and fails, listing
# file and missing header, on any quoted #include it says to add.  System headers (<...>), forward
# declarations and iwyu's "should remove" advice are ignored.
# Usage: scripts/check_includes.sh [FILE.c|FILE.h ...]
#   (default: src/*.c src/geoacc.h src/density_raster.h; PG_CONFIG honoured)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
command -v include-what-you-use >/dev/null || { echo "check_includes: include-what-you-use missing (apt-get install iwyu)" >&2; exit 2; }
server=$("${PG_CONFIG:-pg_config}" --includedir-server)
# the compiler flags of PGXS that matter for headers; clang does not know gcc_printf, and a call to an
# undeclared function must be an error here as in the Makefile
read -ra cppflags <<<"$("${PG_CONFIG:-pg_config}" --cppflags)"
flags=(-x c -I"$root/src" -I"$root/cuda" -I"$root" -I"$server" "${cppflags[@]}"
	-DGEOACC_VERSION='"0"' -Wno-ignored-attributes -Werror=implicit-function-declaration
	-Xiwyu --mapping_file="$root/scripts/iwyu.imp" -Xiwyu --no_fwd_decls -Xiwyu --max_line_length=120)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ $# -gt 0 ] || set -- "$root"/src/*.c "$root"/src/geoacc.h "$root"/src/density_raster.h
failed=0
for f in "$@"; do
	# a .c file is analysed as a copy under another name, so that iwyu does not take src/foo.h for the
	# file's own header (which would make it ignore geoacc.h as the umbrella of geoacc.c)
	main=$f
	case $f in *.c) main=$tmp/iwyu_check_$(basename "$f"); cp "$f" "$main" ;; esac
	rc=0
	out=$(include-what-you-use "${flags[@]}" "$main" 2>&1) || rc=$?
	# iwyu 0.18 exits 0 after compile errors that are promoted warnings: look for them too
	if [ $rc != 0 ] || grep -qE ': (fatal )?error: |Assertion failed' <<<"$out"; then
		echo "${f#"$root"/}: iwyu failed (exit $rc) or the file does not compile:"
		grep -E ': (fatal )?error: |Assertion failed' <<<"$out" | sed "s|$tmp/iwyu_check_||" || tail -5 <<<"$out"
		failed=1
		continue
	fi
	missing=$(sed -n '/ should add these lines:$/,/^$/p' <<<"$out" | grep '^#include "' || true)
	if [ -n "$missing" ]; then
		while IFS= read -r line; do echo "${f#"$root"/}: missing $line"; done <<<"$missing"
		failed=1
	fi
done
exit $failed
