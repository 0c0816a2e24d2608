"""A page's HTML at its own address (/convolution, /chain, ...): Streamlit's index.html with a few lines at the end of
its head (run or fetched before its scripts, which are modules: they run once the page is read). One tells its frontend where the server is (`window.__streamlit.BACKEND_BASE_URL`: the page's address less
its last part, a proxy's prefix kept): without it the frontend of a page opened at /NAME first asks
/NAME/_stcore/health, is refused, and asks / after a 100 ms back-off, and every layer page's first load waited that
long before its websocket opened. A stage page's (a layer's, the chain's) also name the stage's modules
(modulepreload): the browser fetches
and compiles them while Streamlit's own scripts load, not after the stage's component has mounted. The home page's
(/) carries its skeleton in the HTML itself (`HOME_SKELETON`): the title and the three ways in are on the screen as
the page arrives, not after Streamlit's scripts, its websocket and the page's first run (seconds on a loaded
server), and go as the page's own first element is drawn."""

from __future__ import annotations

import functools
import html
from pathlib import Path

from ..serve.protocol import model_name
from .keys import MODEL, ONNX

MODEL_PATH, CHAIN_PATH = "model", "chain"  # main.py's pages besides home (/) and the layers' (/NAME)
BASE_URL_JS = '<script>window.__streamlit = { BACKEND_BASE_URL: new URL(".", location.href).href };</script>'
WAYS_IN = ("One layer", "A chain of layers", "Your ONNX model")  # the home page's three ways in (ui/page.py)
# Over the page (not in Streamlit's root, which its scripts empty), under its top bar; gone once the page's title
# (or a message in its place) is drawn: not on Streamlit's own placeholders, drawn while it waits for the server.
# Plain HTML and CSS: nothing to load first.
HOME_SKELETON = (
    '<div id="pg-home-skeleton" aria-busy="true" style="position: fixed; inset: 60px 0 0 0; z-index: 999990; '
    'background: #fff; padding: 24px 5rem; font-family: sans-serif; color: #31333f">'
    '<div style="font-size: 2.75rem; font-weight: 700; padding: 1rem 0">TensorRT Layer Playground</div>'
    '<div style="display: flex; gap: 1rem">'
    + "".join(
        '<div style="flex: 1; border: 1px solid #e6e7ea; border-radius: 8px; padding: 1rem; min-height: 220px">'
        f'<div style="font-weight: 600; font-size: 1.4rem">{w}</div>'
        '<div style="height: 120px; margin-top: 12px; border-radius: 6px; background: #f0f2f6"></div></div>'
        for w in WAYS_IN
    )
    + "</div></div>"
    "<script>(() => { const gone = () => { const s = document.getElementById('pg-home-skeleton');"
    ' if (s && document.querySelector(\'[data-testid="stMain"] :is(h1, [data-testid="stAlert"], [data-testid="stException"])\')) {'
    " s.remove(); return true; } return !s; };"
    " const o = new MutationObserver(() => { if (gone()) o.disconnect(); });"
    " o.observe(document.documentElement, {childList: true, subtree: true});"
    # a page that never draws (no server): Streamlit's own words about it are not hidden for long
    " setTimeout(() => { o.disconnect(); document.getElementById('pg-home-skeleton')?.remove(); }, 15000); })();"
    "</script>"
)


@functools.cache
def index_html(stage: bool, home: bool = False, graph: bool = False) -> str:
    """Streamlit's own page (read once: it ships with Streamlit) with the lines added at the end of its head (its own
    scripts are fetched first); `stage`: a page that draws the stage; `home`: the home page, its skeleton first in
    its body; `graph`: the model page of a model, its graph's modules fetched (its entry run) early."""
    from streamlit import file_util

    from ..serve import assets

    page = Path(file_util.get_static_dir(), "index.html").read_text(encoding="utf-8")
    # the same addresses the stage's (graph's) component imports (ui/stage.py, ui/model_page.py), resolved from the
    # page's as it resolves them
    modules = assets.urls() if stage else assets.urls(assets.GRAPH_ENTRY, assets.GRAPH) if graph else []
    preload = "".join(f'<link rel="modulepreload" href="{html.escape(u)}">' for u in modules)
    if graph:  # run at once: graph.js starts its layout worker (and the worker compiles dagre) while Streamlit loads
        preload += f'<script type="module" src="{html.escape(modules[0])}"></script>'

    end = page.index("</head>")
    page = page[:end] + BASE_URL_JS + preload + page[end:]
    if home:
        body = page.index(">", page.index("<body")) + 1
        page = page[:body] + HOME_SKELETON + page[body:]
    return page


def _graph_data(query) -> str:
    from ..serve import graph_data

    address = graph_data.latest(query.get(ONNX, ""), model_name(query.get(MODEL)))
    return f'<meta name="pg-graph-data" content="{html.escape(address)}">'


def page_paths() -> list[str]:
    """Every page's address but home's (/)."""
    from ..layers import LAYERS

    return [MODEL_PATH, CHAIN_PATH, *LAYERS]


def routes() -> list:
    """One route per page's address, home's (/) too (Streamlit's own routes, its files and /oauth2callback, keep
    theirs): Streamlit's page as it serves it (not kept: a new release's scripts have new names), with the lines above."""
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    from ..layers import LAYERS

    def page(stage: bool, home: bool = False, graph: bool = False):
        async def route(request):
            # the model page draws a graph where its link names a model
            opens = graph and bool(request.query_params.get(ONNX))
            page = index_html(stage, home, opens)
            if opens:  # the data last drawn for this link: graph.js fetches it at once (used where the run names it)
                page = page.replace("</head>", _graph_data(request.query_params) + "</head>", 1)
            return HTMLResponse(page, headers={"Cache-Control": "no-cache"})

        return route

    return [Route("/", page(False, home=True), methods=["GET", "HEAD"])] + [
        Route(f"/{path}", page(path in LAYERS or path == CHAIN_PATH, graph=path == MODEL_PATH), methods=["GET", "HEAD"])
        for path in page_paths()
    ]
