#!/usr/bin/env bash
# Set up and run the whole test suite, part by part, each part's wall time printed:
#   lint     ruff check and ruff format --check
#   js       the stage's modules with Node's own test runner (tests/js/)
#   python   pytest without a browser (GPU tests skip themselves without a GPU), two test modules at a time
#            (PYTHON_WORKERS=1: one)
#   browser  pytest's browser tests: the system Chromium against the running app, two test modules at a time
#            (BROWSER_WORKERS=1: one)
# `--fast` runs all but the browser part; other arguments go to pytest. Every part runs; the exit status is the
# first failure's.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
set +e
# Browser tests drive the distribution's Chromium (never a downloaded one); the room's test, its HAProxy.
missing=""
command -v node >/dev/null || missing="nodejs"
command -v chromium >/dev/null || missing="$missing chromium"
command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ] || missing="$missing haproxy"
if [ -n "$missing" ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi
fast=0
args=()
for a in "$@"; do
  if [ "$a" = "--fast" ]; then fast=1; else args+=("$a"); fi
done
status=0
times=()
part() {  # part NAME COMMAND...: run it, time it, keep the first failure's status
  local name=$1 started=$SECONDS rc
  shift
  echo "== $name: $*"
  "$@"
  rc=$?
  times+=("$name $((SECONDS - started)) s (exit $rc)")
  if [ "$rc" -ne 0 ] && [ "$status" -eq 0 ]; then status=$rc; fi
}
part lint sh -c 'ruff check . && ruff format --check .'
part js node --test --test-reporter=dot tests/js/
# builds as fast as in the app: the allocator set up by playground.serve.launch
# Two workers here too, a module on one (its fixtures are shared): 343 s on one worker, 283 s on two. Each part
# prints its slowest tests.
part python python -m playground.serve.launch python -m pytest -m "not browser" -n "${PYTHON_WORKERS:-2}" \
  --dist loadfile --durations=10 "${args[@]}"
if [ "$fast" -eq 0 ]; then
  # Two workers (pytest-xdist), each with its own Chromium and a module's app on a port of its own; a module stays
  # on one worker (its app and pages are shared by its tests). A page load keeps one renderer's thread busy while
  # the other core waits: two modules at once use both.
  part browser python -m playground.serve.launch python -m pytest -m browser -n "${BROWSER_WORKERS:-2}" \
    --dist loadfile --durations=10 "${args[@]}"
fi
echo "== times: ${times[*]}"
exit "$status"
