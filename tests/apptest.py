"""Opening a layer page in Streamlit's AppTest.

The layer pages are made from the registry (callables, no files), and `AppTest.switch_page` takes a page file.
A page is known to Streamlit by the hash of its url_path, as `st.Page` computes it: that is what a browser
opening /NAME asks for, and what is set here.
"""
from streamlit.util import calc_hash


def switch_to_layer(at, name: str):
    """Like `at.switch_page(...)` for the layer page at /NAME: the next `at.run()` draws it. Run `at` once before."""
    at._page_hash = calc_hash(name)
    return at
