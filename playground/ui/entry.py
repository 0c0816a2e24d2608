"""A page's HTML at its own address (/convolution, /chain, ...): Streamlit's index.html with a few lines at the end of
its head (run or fetched before its scripts, which are modules: they run once the page is read). One tells its frontend where the server is (`window.__streamlit.BACKEND_BASE_URL`: the page's address less
its last part, a proxy's prefix kept): without it the frontend of a page opened at /NAME first asks
/NAME/_stcore/health, is refused, and asks / after a 100 ms back-off, and every layer page's first load waited that
long before its websocket opened. A layer page's also name the stage's modules (modulepreload): the browser fetches
and compiles them while Streamlit's own scripts load, not after the stage's component has mounted. The home page
(/) is asked for at its own address and needs neither."""

from __future__ import annotations

import functools
import html
from pathlib import Path

MODEL_PATH, CHAIN_PATH = "model", "chain"  # main.py's pages besides home (/) and the layers' (/NAME)
BASE_URL_JS = '<script>window.__streamlit = { BACKEND_BASE_URL: new URL(".", location.href).href };</script>'


@functools.cache
def index_html(stage: bool) -> str:
    """Streamlit's own page (read once: it ships with Streamlit) with the lines added at the end of its head (its own
    scripts are fetched first); `stage`: a page that draws the stage."""
    from streamlit import file_util

    from ..stage import assets

    page = Path(file_util.get_static_dir(), "index.html").read_text(encoding="utf-8")
    # the same addresses the stage's component imports (ui/stage.py), resolved from the page's as it resolves them
    preload = "".join(f'<link rel="modulepreload" href="{html.escape(u)}">' for u in assets.urls()) if stage else ""
    end = page.index("</head>")
    return page[:end] + BASE_URL_JS + preload + page[end:]


def page_paths() -> list[str]:
    """Every page's address but home's."""
    from ..layers import LAYERS

    return [MODEL_PATH, CHAIN_PATH, *LAYERS]


def routes() -> list:
    """One route per page's address (Streamlit's own routes, its files and /oauth2callback, keep theirs): Streamlit's
    page as it serves it (not kept: a new release's scripts have new names), with the lines above."""
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    from ..layers import LAYERS

    def page(stage: bool):
        async def route(request):
            return HTMLResponse(index_html(stage), headers={"Cache-Control": "no-cache"})

        return route

    return [Route(f"/{path}", page(path in LAYERS), methods=["GET", "HEAD"]) for path in page_paths()]
