"""The server: Streamlit's app (app.py) with the stage's routes beside it (`streamlit run serve.py`, as
scripts/start.sh does): its evaluations, its QR codes and its scripts. `streamlit run app.py` serves the same
pages without them: the stage then says where it is served."""
import streamlit as st

from playground.stage.server import routes

app = st.App("app.py", routes=routes())
