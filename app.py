"""The app: `streamlit run app.py` (scripts/start.sh runs the same). Streamlit finds the `app` below and serves
main.py's pages (home, then one page per declared layer) with the stage's route beside them
(`POST /api/stage/evaluate`, playground/stage/server.py), which answers a parameter change without a script run."""

import streamlit as st

from playground.stage.server import routes, without_delay

without_delay()  # replies on kept-alive connections not held for the browser's delayed ACK (server.without_delay)
app = st.App("main.py", routes=routes())
