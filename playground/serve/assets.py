"""The browser sides as files: `GET /api/stage/js/VERSION/NAME.js` serves the ES modules of playground/stage/ and
`GET /api/graph/js/VERSION/NAME.js` those of playground/graph/ (the model page's graph, its layout worker and the
vendored dagre). A folder's modules import each other by relative path, so they share the address. VERSION is a
hash of all of a folder's modules: a page loads the modules of the server that drew it, and a browser may keep them
for good (a new release is a new address). The files are read once per process; only a folder's own `.js` files
are served (its folder is the one list of them)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True)
class Folder:
    here: Path  # the modules, served from here
    route: str
    what: str  # as a 404 names it


STAGE = Folder(Path(__file__).parents[1] / "stage", "/api/stage/js", "stage")
GRAPH = Folder(Path(__file__).parents[1] / "graph", "/api/graph/js", "graph")
FOLDERS = (STAGE, GRAPH)
ENTRY = "stage.js"  # the module ui/stage.py's component imports
STILL = "still.js"  # the module ui/figures.py's component imports: figures that only show
ENTRIES = (ENTRY, STILL)
GRAPH_ENTRY = "graph.js"  # the module ui/model_page.py's component imports (it starts layout.js as its worker)
_NAME = re.compile(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)*\.js")


@lru_cache(maxsize=8)
def files(folder: Folder = STAGE) -> tuple[str, dict[str, bytes]]:
    """(version, name -> content) of a folder's modules."""
    found = {p.name: p.read_bytes() for p in sorted(folder.here.glob("*.js")) if _NAME.fullmatch(p.name)}
    digest = hashlib.blake2b(digest_size=8)
    for name, data in found.items():
        digest.update(name.encode() + b"\0" + data + b"\0")
    return digest.hexdigest(), found


def url(name: str = ENTRY, folder: Folder = STAGE) -> str:
    """The address of one module, under this process's version."""
    return f"{folder.route}/{files(folder)[0]}/{name}"


def urls(entry: str = ENTRY, folder: Folder = STAGE) -> list[str]:
    """Every module's address, `entry` first (a component loads them at once and mounts the first: the stage's,
    or still.js, the figures that only show)."""
    return [url(entry, folder)] + [url(name, folder) for name in files(folder)[1] if name != entry]


def _route(folder: Folder):
    async def asset_route(request):
        from starlette.responses import PlainTextResponse, Response

        version, found = files(folder)
        name = request.path_params["name"]
        if name not in found:
            return PlainTextResponse(
                f"no such {folder.what} module", status_code=404, headers={"Cache-Control": "no-store"}
            )
        # Another version's address (a page drawn by another replica or before a restart) gets this one's files,
        # not to be kept: the page's next load asks for its own.
        cache = "public, max-age=31536000, immutable" if request.path_params["version"] == version else "no-cache"
        return Response(found[name], media_type="text/javascript", headers={"Cache-Control": cache})

    return asset_route


def routes():
    from starlette.routing import Route

    return [Route(f.route + "/{version}/{name}", _route(f), methods=["GET"]) for f in FOLDERS]
