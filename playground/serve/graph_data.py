"""What the model page's graph draws, as a file: `GET /api/graph/data/ID` answers it (JSON, gzipped once as it is
kept). A page's script run hands the graph this address, not the data: a 10,000-node model's is 5 MB, which went
through the websocket on every run of the page (twice before its menu: the first view's run and the menu's), was
encoded as the component's argument and decoded by the browser each time. ID is a hash of the JSON: the same data
has the same address, which a browser may keep for good.

    address(key, make, link) -> the address of make()'s JSON (made once per key while kept)
    latest(digest, name) -> the address of the data last made for a link's first view (the page's HTML names it,
        so that the graph fetches it while Streamlit loads: ui/entry.py)
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable
from urllib.parse import urlencode

from ..base.memo import Memo

ROUTE = "/api/graph/data"
LATEST_ROUTE = "/api/graph/latest"  # ?onnx=DIGEST&model=NAME: the data last made for that link's first view
ID_HEADER = "X-Graph-Data"  # its ID: the graph uses what it fetched early only where the page's run names the same
_bodies = Memo(128 << 20, weight=len)  # ID -> the gzipped JSON: a 10,000-node model's is about 0.13 MB
_ids = Memo(64)  # the page's key (model, name, analysis, colouring) -> ID
_latest = Memo(64)  # a link's (digest, name) -> the ID its first view drew last


def address(key, make: Callable[[], dict], link: tuple[str, str] | None = None) -> str:
    """The address of the JSON of `make()`'s data, made (and gzipped) once per `key` while it is kept; `link`: the
    (digest, name) of the link whose first view it is (`latest` names it)."""
    found = _ids.get(key)
    if found is None or _bodies.get(found) is None:
        body = json.dumps(make(), separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
        found = hashlib.blake2b(body, digest_size=16).hexdigest()
        _bodies.put(found, gzip.compress(body, compresslevel=6))
        _ids.put(key, found)
    if link is not None:
        _latest.put(link, found)
    return f"{ROUTE}/{found}"


def latest(digest: str, name: str) -> str:
    """The address of the data last made for the first view of the link (digest, name)."""
    return f"{LATEST_ROUTE}?{urlencode({'onnx': digest, 'model': name})}"


def _answer(request, found: str | None):
    from starlette.responses import PlainTextResponse, Response

    body = None if found is None else _bodies.get(found)
    if body is None:  # a page drawn before this server started, or long ago: its next run names the data again
        return PlainTextResponse(
            "no such graph data on this server (reload the page)",
            status_code=404,
            headers={"Cache-Control": "no-store"},
        )
    # by its ID, for good; the latest of a link changes with its model's analysis
    keep = "no-store" if request.url.path == LATEST_ROUTE else "private, max-age=86400, immutable"
    headers = {"Cache-Control": keep, "Vary": "Accept-Encoding", ID_HEADER: found}
    if "gzip" in request.headers.get("accept-encoding", ""):
        return Response(body, media_type="application/json", headers=headers | {"Content-Encoding": "gzip"})
    return Response(gzip.decompress(body), media_type="application/json", headers=headers)


async def data_route(request):
    return _answer(request, request.path_params["id"])


async def latest_route(request):
    q = request.query_params
    return _answer(request, _latest.get((q.get("onnx", ""), q.get("model", ""))))


def routes():
    from starlette.routing import Route

    return [
        Route(ROUTE + "/{id:str}", data_route, methods=["GET"]),
        Route(LATEST_ROUTE, latest_route, methods=["GET"]),
    ]
