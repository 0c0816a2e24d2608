"""The stage's browser side as files: `GET /api/stage/js/VERSION/NAME.js` serves the ES modules of
playground/stage/ (stage.js imports the others by relative path, so they share the address). VERSION is a hash of all of them: a
page loads the modules of the server that drew it, and a browser may keep them for good (a new release is a new
address). The files are read once per process; nothing else under that folder is served."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).parents[1] / "stage"  # the stage's browser side, served from here
ROUTE = "/api/stage/js"
ENTRY = "stage.js"  # the module ui/stage.py's component imports
STILL = "still.js"  # the module ui/figures.py's component imports: figures that only show
ENTRIES = (ENTRY, STILL)
_NAME = re.compile(r"[a-z][a-z0-9_]*\.js")


@lru_cache(maxsize=1)
def files() -> tuple[str, dict[str, bytes]]:
    """(version, name -> content) of the stage's modules."""
    found = {p.name: p.read_bytes() for p in sorted(HERE.glob("*.js")) if _NAME.fullmatch(p.name)}
    digest = hashlib.blake2b(digest_size=8)
    for name, data in found.items():
        digest.update(name.encode() + b"\0" + data + b"\0")
    return digest.hexdigest(), found


def url(name: str = ENTRY) -> str:
    """The address of one module, under this process's version."""
    return f"{ROUTE}/{files()[0]}/{name}"


def urls(entry: str = ENTRY) -> list[str]:
    """Every module's address, `entry` first (a component loads them at once and mounts the first: the stage's,
    or still.js, the figures that only show)."""
    return [url(entry)] + [url(name) for name in files()[1] if name != entry]


async def asset_route(request):
    from starlette.responses import PlainTextResponse, Response

    version, found = files()
    name = request.path_params["name"]
    if name not in found:
        return PlainTextResponse("no such stage module", status_code=404, headers={"Cache-Control": "no-store"})
    # Another version's address (a page drawn by another replica or before a restart) gets this one's files, not
    # to be kept: the page's next load asks for its own.
    cache = "public, max-age=31536000, immutable" if request.path_params["version"] == version else "no-cache"
    return Response(found[name], media_type="text/javascript", headers={"Cache-Control": cache})


def routes():
    from starlette.routing import Route

    return [Route(ROUTE + "/{version}/{name}", asset_route, methods=["GET"])]
