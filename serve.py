"""The server: Streamlit's app (app.py) with the stage's route beside it (`streamlit run serve.py`, as
scripts/start.sh does). `streamlit run app.py` serves the same pages without the route: the instrument stage
then says its server cannot answer."""
import streamlit as st

from playground.stage.server import routes

app = st.App("app.py", routes=routes())
