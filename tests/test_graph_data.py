"""The model page's graph data as a file (playground/serve/graph_data.py): a page's run hands the graph an address,
made once per key; the route answers the JSON (gzipped where the browser takes it), to be kept, and nothing for an
address it never made."""

from __future__ import annotations

import json

from starlette.applications import Starlette
from starlette.testclient import TestClient

from playground.serve import graph_data, server


def test_the_data_is_made_once_per_key_and_served_by_its_address():
    made = []

    def make():
        made.append(1)
        return {"nodes": [{"id": "/a/b", "diff": 0.5}], "edges": [], "first": None, "groups": []}

    url = graph_data.address(("d" * 64, "m.onnx", 1.0, False, None), make)
    assert graph_data.address(("d" * 64, "m.onnx", 1.0, False, None), make) == url and made == [1]  # a rerun: kept
    assert graph_data.address(("d" * 64, "other.onnx", 1.0, False, None), make) == url  # the same data, one address
    assert url.startswith(graph_data.ROUTE + "/")
    client = TestClient(Starlette(routes=server.routes()), base_url="http://graph.test")
    r = client.get(url, headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert r.headers["content-encoding"] == "gzip" and "immutable" in r.headers["cache-control"]
    assert r.json() == make()
    plain = client.get(url, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and json.loads(plain.content) == make()
    for other in (graph_data.ROUTE + "/" + "0" * 32, graph_data.ROUTE + "/..%2Fserver.py", graph_data.ROUTE + "/"):
        assert client.get(other).status_code == 404, other
    assert client.post(url).status_code == 405


def test_data_json_cannot_carry_is_refused_not_sent_as_invalid_json():
    import pytest

    with pytest.raises(ValueError):
        graph_data.address(("nan",), lambda: {"nodes": [{"diff": float("nan")}]})


def test_the_latest_of_a_link_is_the_data_its_first_view_drew_last_and_is_not_kept():
    """A link's page names `latest(digest, name)` in its HTML and fetches it early: the data the page's run last made
    for that link's first view, with its ID (the graph uses it only where its run names the same), never kept by the
    browser; nothing for a link no run drew."""
    client = TestClient(Starlette(routes=server.routes()), base_url="http://graph.test")
    digest = "e" * 64
    assert client.get(graph_data.latest(digest, "m.onnx")).status_code == 404
    first = graph_data.address(("e", 1), lambda: {"nodes": [1]}, link=(digest, "m.onnx"))
    graph_data.address(("e", "FP16"), lambda: {"nodes": [2]})  # another colouring: not the link's first view
    r = client.get(graph_data.latest(digest, "m.onnx"))
    assert r.status_code == 200 and r.json() == {"nodes": [1]} and r.headers["cache-control"] == "no-store"
    assert first.endswith("/" + r.headers[graph_data.ID_HEADER])
    second = graph_data.address(("e", 2), lambda: {"nodes": [3]}, link=(digest, "m.onnx"))  # analysed again
    r = client.get(graph_data.latest(digest, "m.onnx"))
    assert r.json() == {"nodes": [3]} and second.endswith("/" + r.headers[graph_data.ID_HEADER])
    assert client.get(graph_data.latest(digest, "other.onnx")).status_code == 404  # another name, another link
