"""The script each page view runs (app.py serves it): home, then one page per declared layer.

The home page's file lives in app_pages/, not pages/: with a pages/ folder beside this script,
Streamlit runs its legacy folder navigation (no wide layout, an "app" page) for the first
script run of a fresh server, until st.navigation has been called once.
"""

import streamlit as st

from playground.serve.shared import freeze_startup_objects
from playground.ui.chain import chain_page
from playground.ui.entry import CHAIN_PATH, MODEL_PATH
from playground.ui.page import HOME_ICON, layer_pages, page_path
from playground.ui.stage import menu_position

# The layer pages put their parameters beside the figures; the sidebar (input and view) starts closed so the
# stage has the whole width of a projector.
st.set_page_config(
    page_title="TensorRT Layer Playground", page_icon="🧪", layout="wide", initial_sidebar_state="collapsed"
)
pages = [st.Page(page_path("home"), title="Home", icon=HOME_ICON, default=True)]
pages.append(st.Page(page_path("model"), title="Model", icon=":material/account_tree:", url_path=MODEL_PATH))
pages.append(st.Page(chain_page, title="Chain", icon=":material/linear_scale:", url_path=CHAIN_PATH))
pages += list(layer_pages().values())
st.navigation(pages, position=menu_position()).run()
freeze_startup_objects()  # after the page: by then TensorRT and every figure module are loaded
