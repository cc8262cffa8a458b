#!/bin/bash
# Sourced on the GPU machine before a feature script runs in a call of its own
# (run.sh does the same for its steps): stops a server an earlier call left,
# starts PostgreSQL from .device/, and builds and installs geoacc with CUDA.
# The bundle carries the libraries of the machine that made it, a CPU-only
# geoacc among them, so the install is not optional: without it every GPU
# call would fail with "this build of geoacc has no CUDA support".
#   . test/device/start.sh && test/device/snapshot.sh
pkill -9 -x postgres && sleep 1
rm -f /tmp/.s.PGSQL.5432 /tmp/.s.PGSQL.5432.lock
. .device/pg-start.sh > /dev/null || return 1
export CUDA_ARCHS=${CUDA_ARCHS:-90} MAKEFLAGS="with_llvm=no"
make -s -j16 > /tmp/geoacc-build.log 2>&1 && make -s install >> /tmp/geoacc-build.log 2>&1 \
	|| { tail -30 /tmp/geoacc-build.log; return 1; }
psql -XAtq -c "CREATE EXTENSION IF NOT EXISTS geoacc CASCADE" -c "SELECT geoacc_version()" postgres 2>&1 | grep -v NOTICE \
	| grep -q CUDA || { echo "start: the installed geoacc has no CUDA support"; return 1; }
