"""What the model page's graph draws, as a file: `GET /api/graph/data/ID` answers it (JSON, gzipped once as it is
kept). A page's script run hands the graph this address, not the data: a 10,000-node model's is 5 MB, which went
through the websocket on every run of the page (twice before its menu: the first view's run and the menu's), was
encoded as the component's argument and decoded by the browser each time. ID is a hash of the JSON: the same data
has the same address, which a browser may keep for good.

    address(key, make) -> the address of make()'s JSON (made once per key while kept)
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable

from ..base.memo import Memo

ROUTE = "/api/graph/data"
_bodies = Memo(128 << 20, weight=len)  # ID -> the gzipped JSON: a 10,000-node model's is about 0.4 MB
_ids = Memo(64)  # the page's key (model, name, analysis, colouring) -> ID


def address(key, make: Callable[[], dict]) -> str:
    """The address of the JSON of `make()`'s data, made (and gzipped) once per `key` while it is kept."""
    found = _ids.get(key)
    if found is None or _bodies.get(found) is None:
        body = json.dumps(make(), separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
        found = hashlib.blake2b(body, digest_size=16).hexdigest()
        _bodies.put(found, gzip.compress(body, compresslevel=6))
        _ids.put(key, found)
    return f"{ROUTE}/{found}"


async def data_route(request):
    from starlette.responses import PlainTextResponse, Response

    body = _bodies.get(request.path_params["id"])
    if body is None:  # a page drawn before this server started, or long ago: its next run names the data again
        return PlainTextResponse(
            "no such graph data on this server (reload the page)",
            status_code=404,
            headers={"Cache-Control": "no-store"},
        )
    headers = {"Cache-Control": "private, max-age=86400, immutable", "Vary": "Accept-Encoding"}
    if "gzip" in request.headers.get("accept-encoding", ""):
        return Response(body, media_type="application/json", headers=headers | {"Content-Encoding": "gzip"})
    return Response(gzip.decompress(body), media_type="application/json", headers=headers)


def routes():
    from starlette.routing import Route

    return [Route(ROUTE + "/{id:str}", data_route, methods=["GET"])]
