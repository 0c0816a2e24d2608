#!/usr/bin/env bash
# Set up and run the whole test suite (GPU tests skip themselves without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
exec python -m pytest "$@"
