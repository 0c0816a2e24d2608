#!/usr/bin/env bash
# Set up and run the whole test suite (GPU tests skip themselves without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
# Browser tests drive the distribution's Chromium (never a downloaded one).
if ! command -v chromium >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
exec python -m playground.trt.launch python -m pytest "$@"  # builds as fast as in the app
