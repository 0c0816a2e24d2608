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


def open_tab(at, layer: str, title: str):
    """Select the tab `title` under the stage (Spec example, Engine, Downloads: only the open one is drawn) for the
    next `at.run()`, as a click on it does."""
    at.session_state[f"{layer}.tabs"] = title
    return at


def _heatmap_data(at) -> list[dict]:
    import json

    from playground.ui.heatmap import NAME

    return [json.loads(c.proto.json) for c in at.get("bidi_component") if c.proto.component_name == NAME]


def heatmaps(at) -> dict:
    """The stage's heatmaps by key ("<layer>.figure.<which>"): the spec each canvas draws (plots.tensor_heatmap)."""
    return {d["key"]: d["spec"] for d in _heatmap_data(at)}


def figure_captions(at) -> list[str]:
    """The captions the stage's heatmaps write under them, in the order they are drawn (input first)."""
    return [d["caption"] for d in _heatmap_data(at)]
