#!/usr/bin/env bash
# Set up and start the app on http://localhost:8501 (see .streamlit/config.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
exec python -m playground.serve.launch streamlit run app.py "$@"  # the allocator set up for fast builds
