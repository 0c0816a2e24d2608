"""The Streamlit UI: the only part of `playground` that imports Streamlit.

state.py holds widget keys, view options and shared resources; widgets.py turns Param
declarations into widgets; page.py lays out the home page and every layer page.
"""
