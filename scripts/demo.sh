#!/bin/bash
# Set up (packages, build, install, throwaway cluster), load the real AIS
# tracks into a database `geoacc_demo` and show what geoacc can do with them.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

dropdb --if-exists geoacc_demo
createdb geoacc_demo
psql -X -v ON_ERROR_STOP=1 -d geoacc_demo -f test/demo.sql
