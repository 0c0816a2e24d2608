"""The app: `streamlit run app.py` (scripts/start.sh runs the same). Streamlit finds the `app` below and serves
main.py's pages (home, then one page per declared layer) with the stage's route beside them
(`POST /api/stage/evaluate`, playground/serve/server.py), which answers a parameter change without a script run (its
answers kept out of Streamlit's gzip: server.Uncompressed), and each page's HTML at its own address
(playground/ui/entry.py: its websocket opens without a detour)."""

import streamlit as st

from playground.serve.server import middleware, routes, without_delay
from playground.ui import entry

without_delay()  # replies on kept-alive connections not held for the browser's delayed ACK (server.without_delay)
app = st.App("main.py", routes=routes() + entry.routes(), middleware=middleware())
