#!/usr/bin/env bash
# Create .venv (once) and install the requirements into it. Sourced by start.sh and test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
stamp=.venv/.requirements.sha
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  # The venv's own pip installs every requirement (upgrading it first cost ~2 s); --no-compile leaves a module's
  # bytecode to its first import: compiling every module at install, most never imported, cost ~9 of ~41 s of CPU.
  python -m pip install -q --no-compile -r requirements.txt
  echo "$want" > "$stamp"
fi
