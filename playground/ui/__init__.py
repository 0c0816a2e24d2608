"""The Streamlit UI: the only part of `playground` that imports Streamlit.

page.py lays out the home page and every layer page, chain.py the chain page, model_page.py the model page;
widgets.py turns Param declarations into the sidebar's controls; keys.py names every widget, container and tab;
state.py holds a page's private session state, view.py the view options (presenter mode), figures.py tensors (the stage's
heatmap, read-only), charts and tables as every page draws them, messages.py text shown as typed and errors as one line.
"""
