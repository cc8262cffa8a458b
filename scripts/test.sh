#!/bin/bash
# Set up (packages, build, install, throwaway cluster) and run every test:
# pg_regress (make installcheck) and the core tests (make check-core).
# Exits non-zero if anything fails.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

status=0
echo "test: make installcheck"
make -s installcheck || { status=1; cat regression.diffs 2>/dev/null | head -200; }
echo "test: make check-core"
make -s check-core || status=1
[ $status = 0 ] && echo "test: all passed" || echo "test: FAILED"
exit $status
