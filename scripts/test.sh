#!/usr/bin/env bash
# Set up and run the whole test suite (GPU tests skip themselves without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
# Browser tests drive the distribution's Chromium (never a downloaded one); the room's test, its HAProxy.
missing=""
command -v node >/dev/null || missing="nodejs"
command -v chromium >/dev/null || missing="$missing chromium"
command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || missing="$missing haproxy"
if [ -n "$missing" ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi
# The stage's browser modules, with Node's own test runner (no packages): before the Python suite, timed.
if command -v node >/dev/null; then
  started=$(date +%s%N)
  node --test --test-reporter=dot tests/js/
  echo "node --test tests/js/: $(( ($(date +%s%N) - started) / 1000000 )) ms"
else
  echo "node not found: the stage's module tests (tests/js) need Node.js 20 or later" >&2
  exit 1
fi
exec python -m playground.trt.launch python -m pytest "$@"  # builds as fast as in the app
