#!/usr/bin/env bash
# Set up and run the whole test suite (GPU tests skip themselves without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
# Browser tests drive the distribution's Chromium (never a downloaded one); the room's test, its HAProxy.
missing=""
command -v chromium >/dev/null || missing="chromium"
command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || missing="$missing haproxy"
if [ -n "$missing" ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi
exec python -m playground.trt.launch python -m pytest "$@"  # builds as fast as in the app
