#!/bin/bash
# Here, not on the GPU machine (it reaches no package registry): build Citus from ../shared/citus for
# the PostgreSQL 15 that ../shared/device/pg-bundle.sh carries there, and pack its installed files
# into DIR/citus.tar.xz (about 4 MB): the shared libraries for usr/lib/postgresql/15/lib and the
# extension files for usr/share/postgresql/15/extension, Debian's paths, which test/device/multi_gpu.sh
# lays over the PostgreSQL bundle.
#
#   test/device/citus-bundle.sh .device          (from the repository root; PG_CONFIG as for scripts/citus.sh)
set -euo pipefail
out=${1:?usage: test/device/citus-bundle.sh DIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
stage=$(mktemp -d)
bundle=$(mktemp -d)
trap 'rm -rf "$stage" "$bundle"' EXIT

"$(dirname "$0")/../../scripts/citus.sh" --stage "$stage"
# the staged tree mirrors PG_CONFIG's paths, which may be a relocated copy: map them to Debian's
mkdir -p "$bundle/usr/lib/postgresql/15/lib" "$bundle/usr/share/postgresql/15/extension"
cp -a "$stage$("$PG_CONFIG" --pkglibdir)"/. "$bundle/usr/lib/postgresql/15/lib/"
cp -a "$stage$("$PG_CONFIG" --sharedir)/extension"/. "$bundle/usr/share/postgresql/15/extension/"
tar -C "$bundle" -cJf "$out/citus.tar.xz" usr
echo "citus-bundle: $out/citus.tar.xz ($(du -h "$out/citus.tar.xz" | cut -f1)):" \
	"$(tar -tJf "$out/citus.tar.xz" | grep -c -v '/$') files"
