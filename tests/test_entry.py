"""A page's HTML at its own address (playground/ui/entry.py): Streamlit's own page, told where the server is (its
frontend would otherwise ask /NAME/_stcore/health first, then / after a back-off) and, on a layer page, naming the
stage's modules to fetch while Streamlit's own load; Streamlit's other addresses are left to it."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient
from streamlit import file_util

from playground.layers import LAYERS
from playground.serve import assets, graph_data
from playground.ui import entry

PRELOAD = re.compile(r'<link rel="modulepreload" href="([^"]+)">')


@pytest.fixture(scope="module")
def client():
    return TestClient(Starlette(routes=entry.routes()), base_url="http://playground.test")


def test_a_layer_page_is_streamlits_page_told_the_server_and_the_stages_modules(client):
    r = client.get("/convolution?convolution.stride_nd.h=2")
    assert r.status_code == 200 and r.headers["cache-control"] == "no-cache"
    own = Path(file_util.get_static_dir(), "index.html").read_text(encoding="utf-8")
    head, body = own.split("</head>")
    assert r.text.startswith(head) and r.text.endswith("</head>" + body)  # Streamlit's page, lines added to its head
    assert "window.__streamlit = { BACKEND_BASE_URL: " in r.text
    assert PRELOAD.findall(r.text) == assets.urls()  # what the stage's component imports


def test_every_page_is_served_the_stage_and_model_pages_name_their_modules_and_only_home_has_a_skeleton(client):
    assert set(entry.page_paths()) == {"model", "chain", *LAYERS}
    for path in ["", *entry.page_paths()]:
        r = client.get(f"/{path}")
        assert r.status_code == 200 and "BACKEND_BASE_URL" in r.text, path
        # a stage page names the stage's modules; no other page any (the model page's, with no model, neither)
        assert PRELOAD.findall(r.text) == (assets.urls() if path in LAYERS or path == entry.CHAIN_PATH else []), path
        assert ('id="pg-home-skeleton"' in r.text) == (path == ""), path
    # the model page of a model names its graph's modules, the entry first, and runs it (its worker starts early)
    graph = client.get(f"/{entry.MODEL_PATH}?onnx={'d' * 64}&model=m.onnx").text
    assert PRELOAD.findall(graph) == assets.urls(assets.GRAPH_ENTRY, assets.GRAPH)
    assert f'<script type="module" src="{assets.url(assets.GRAPH_ENTRY, assets.GRAPH)}"></script>' in graph
    # and the address of the data that link's first view drew last (graph.js fetches it at once)
    meta = re.search(r'<meta name="pg-graph-data" content="([^"]+)">', graph)
    assert meta and html.unescape(meta.group(1)) == graph_data.latest("d" * 64, "m.onnx")
    assert 'name="pg-graph-data"' not in client.get(f"/{entry.MODEL_PATH}").text  # no model, no graph
    home = client.get("/?view.presenter=true").text
    body = home[home.index("<body") :]
    # first in the body, before Streamlit's root (its scripts empty the root), naming the three ways in
    assert body.index("pg-home-skeleton") < body.index('id="root"')
    assert all(w in body for w in entry.WAYS_IN)
    for path in ("/favicon.png", "/oauth2callback", "/_stcore/health", "/convolution/_stcore/health"):
        assert client.get(path).status_code == 404, path  # Streamlit's own routes answer these
