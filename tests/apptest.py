"""A layer page in Streamlit's AppTest, and its stage's changes through the app's own route.

The layer pages are made from the registry (callables, no files), and `AppTest.switch_page` takes a page file.
A page is known to Streamlit by the hash of its url_path, as `st.Page` computes it: that is what a browser
opening /NAME asks for, and what is set here. The stage itself is a component; what the page hands it (its
describe, its first answer, the seat's token) is read from the component's data, and a change is asked of the
route with that token, as the stage's script asks it.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from starlette.applications import Starlette
from starlette.testclient import TestClient
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from playground.serve import protocol, server

APP = str(Path(__file__).resolve().parent.parent / "main.py")
TIMEOUT = 30  # the first TensorRT build in a process takes about a second; a loaded CI box more


def switch_to_layer(at: AppTest, name: str) -> AppTest:
    """Like `at.switch_page(...)` for the layer page at /NAME: the next `at.run()` draws it. Run `at` once before."""
    at._page_hash = calc_hash(name)
    return at


def open_page(layer: str, painted: bool = True, **query) -> AppTest:
    """A fresh session opening /layer?query (the home page runs first: main.py registers the pages). `painted`: as
    after the stage's first paint in a browser, which asks the page for what it held back (the tabs)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    switch_to_layer(at, layer)
    if painted:
        paint(at, layer)
    at.query_params.update(query)  # set before the page first runs, as opening a link does
    return rerun(at)


def paint(at: AppTest, layer: str) -> AppTest:
    """As the stage's first paint on `layer`'s page tells it: its next run draws what it held back (the sidebar, the
    tabs under the stage)."""
    from playground.layers import get_layer
    from playground.ui import stage

    at.session_state[stage._painted_key(get_layer(layer))] = True
    return at


def rerun(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def open_tab(at: AppTest, layer: str, title: str) -> AppTest:
    """Select the tab `title` under the stage (Details, Engine, Downloads, Spec example: only the open one is drawn)
    for the next `at.run()`, as a click on it does."""
    at.session_state[f"{layer}.tabs"] = title
    return at


def settle(at: AppTest, query: dict) -> AppTest:
    """What the stage does when a configuration settles: the URL takes its keys (None: the key goes) and the page
    runs (its tabs follow)."""
    for k, v in query.items():
        if v is None:
            at.query_params.pop(k, None)
        else:
            at.query_params[k] = v
    return rerun(at)


def text(at: AppTest) -> str:
    parts = [
        e.value for kind in ("markdown", "caption", "error", "warning", "info", "success") for e in getattr(at, kind)
    ]
    return "\n".join(str(p) for p in parts)


def stage_data(at: AppTest) -> dict:
    from playground.ui import stage

    found = [json.loads(c.proto.json) for c in at.get("bidi_component") if c.proto.component_name == stage.NAME]
    assert len(found) == 1, f"{len(found)} stages on the page"
    return found[0]


def still_figures(at: AppTest) -> dict[str, dict]:
    """The read-only figures on the page (ui.figures.tensors) by widget key: the component's data, each figure's
    values whole under "values"."""
    import base64

    from playground.serve import protocol
    from playground.ui import figures

    out = {}
    for c in at.get("bidi_component"):
        if c.proto.component_name == figures.STILL:
            data = json.loads(c.proto.json)
            blob = base64.b64decode(data["blob"])
            for f in data["figures"]:
                f["values"] = protocol.whole(f["tensor"], blob)
            out[c.key] = data
    return out


def stage_answer(at: AppTest) -> dict:
    """The answer the stage draws: the page's own, or where the page made none (a later run of a stage the browser
    holds; a stage mounted afresh on it asks the route) the route's, as the stage asks it."""
    data = stage_data(at)
    if data["answer"] is not None:
        return data["answer"]
    return _post(data["token"], {"params": data["query"], "compare": data.get("compare"), "pick": data.get("pick")})[
        "answer"
    ]


_client = None


def ask(at: AppTest, query: dict, **fields) -> dict:
    """A change as the stage sends it: its whole query (the page's, with `query` over it) to the route, on the
    page's seat (a key given None is left out: its default). Returns the route's reply: {"answer": …} or
    {"problem": …}."""
    data = stage_data(at)
    params = {**data["query"], **query}
    for k in query:  # as the stage does: a choice that decides later defaults lets them take the new ones
        for dependent in data["describe"]["resets"].get(k, []):
            if dependent not in query:
                params.pop(dependent)
    params = {k: v for k, v in params.items() if v is not None}
    return _post(data["token"], {"params": params, **fields})


def _post(token: str, body: dict) -> dict:
    global _client
    if _client is None:
        _client = TestClient(Starlette(routes=server.routes()), base_url="http://stage.test")
    r = _client.post(
        server.ROUTE, content=json.dumps(body), headers={server.TOKEN_HEADER: token, "content-type": "application/json"}
    )
    assert r.status_code == 200, r.text
    return read(r)


def read(r) -> dict:
    """A route's reply: an answer's frame (its planes' bytes kept as `__blob` on the answer) or JSON."""
    if not r.headers.get("content-type", "").startswith(protocol.FRAME_TYPE):
        return json.loads(r.content)
    reply, blob = protocol.read_frame(r.content)
    (reply.get("answer") or reply)["__blob"] = blob
    return reply


def tensor(answer: dict, which: str) -> np.ndarray:
    """A figure's tensor, whole, as the answer carries it: the route's frame or the page's inline base64 (every
    plane of it sent: a small configuration)."""
    f = next(f for f in answer["figures"] if f["which"] == which)
    blob = answer["__blob"] if "__blob" in answer else base64.b64decode(answer["blob"])
    return protocol.whole(f["tensor"], blob)


def control(answer_or_describe: dict, name: str) -> dict:
    return next(c for c in answer_or_describe["controls"] if c["name"] == name)
