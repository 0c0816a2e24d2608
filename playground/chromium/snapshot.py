"""`python -m playground snapshot --out DIR [--pages ...] [--presets ...]`: figures for documentation.

Starts the app, opens each page (or an example or lesson of one) on its stage in headless system
Chromium, waits until the stage has drawn its answer, and writes one PNG each plus an `index.md` gallery. A
layer's examples after the first are picked on the open page (its stage's picker, as a person would), not opened
by a page load each: the same state, drawn the same, in about half the time. What a
layer page's picture holds is `--crop`:
    figures  the heatmaps, the shape line and the source badge, cropped to their content with a margin (default)
    stage    the same with the controls beside them, as they are set
    page     the whole page (`--full-page` is its old spelling)
`--width PX` makes every picture of the gallery that wide: a layer's figures (or its stage, `--crop stage`) are laid
out in that width, fitted to it, the figures wrapping onto another row where one cell size (`--cell`) will not
fit them side by side, a figure's planes onto another line where they will not fit its width; a page's content (home,
chain, model) is laid out that wide, without the pages' menu and the sidebar. A page's picture is its content,
cropped to it (a chain page's, where it is a stage, its figures as a layer's). `--no-pick` leaves out the picked
cell's and its windows' outlines and the picked cell's line. `--scale` is the device pixel ratio (2 or 3 for a
documentation column), `--background white|dark` an opaque
background, `--badges` keeps the machine's badges (which engine, from cache; left out by default: a figure for
documentation is of the layer, not of the machine that drew it). The stage's link row, its cell buttons and tooltips are left out of the picture; the badge's "engine
built now / from cache" is written "engine built", so the same state gives byte-identical PNGs. `shots.json` beside them
records each picture's crop, its figures' boxes (a page's: its elements') and what it cuts (`cut`: a box whose
content runs past its width: what the tests check). A file is named by its configuration
(`convolution--stride_nd-2-2--padding_mode-SAME_UPPER.png`), and the gallery gives each picture its layer and
parameters in words, the link that reopens it (absolute under `--base-url`), the `python -m playground run …` line that reproduces it (run in the
gallery's folder: the arrays it names, `NAME.input.npy`, are written there) and the example's own note, as the alt
text too.
"""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..serve import protocol
from . import browser

CROPS = ("figures", "stage", "page")
BACKGROUNDS = {"white": ("#ffffff", "#111827"), "dark": ("#0f172a", "#e5e7eb")}  # (background, text)
STAGE = ".pg-stage"
# What a picture of the stage leaves out, and the background it gets (BACKGROUNDS), as a style sheet.
SNAPSHOT_CSS = """
.pg-stage .pg-link, .pg-stage .pg-cell button, .pg-stage .pg-cell label, .pg-stage .pg-tip, .pg-stage .pg-qr
  { display: none !important; }
html, body, [data-testid="stApp"], [data-testid="stMain"], .pg-stage { background: %(bg)s !important; }
/* as wide as its figures: the head's badges wrap over them (!important: the stage's own sheet is adopted, later) */
.pg-stage .pg-figures { width: min-content !important; min-width: 24em; }
.pg-stage .pg-row { flex-wrap: nowrap !important; }
/* a picture holds the head's whole words: its lines wrap here, where nothing moves after */
.pg-stage .pg-titles, .pg-stage .pg-badges, .pg-stage .pg-precision { height: auto !important; white-space: normal !important;
  flex-wrap: wrap !important; }
.pg-stage .pg-badge { overflow: visible !important; white-space: normal !important; }
.pg-stage, .pg-stage figcaption, .pg-stage .pg-head, .pg-stage .pg-precision, .pg-stage .pg-line,
  .pg-stage .pg-label { color: %(fg)s !important; }
"""
# The crop (page coordinates) of `which` parts of the stage, with a margin, and the figures' own boxes.
CROP_JS = """([parts, margin, fixed]) => {
  const boxes = [];
  for (const sel of parts) for (const e of document.querySelectorAll(sel)) {
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.height > 0 && getComputedStyle(e).display !== 'none') boxes.push(r);
  }
  if (!boxes.length) return null;
  const left = Math.max(0, Math.min(...boxes.map(b => b.left)) - margin), top = Math.max(0, Math.min(...boxes.map(b => b.top)) - margin);
  const right = Math.max(...boxes.map(b => b.right)) + margin, bottom = Math.max(...boxes.map(b => b.bottom)) + margin;
  const clip = {x: left, y: top + window.scrollY, width: right - left, height: bottom - top};
  if (fixed) { const a = document.querySelector(fixed.anchor).getBoundingClientRect();
    Object.assign(clip, {x: Math.max(0, a.left - margin), width: fixed.width}); }
  const figures = [...document.querySelectorAll('.pg-stage [data-figure]')].map(e => { const r = e.getBoundingClientRect();
    return {which: e.dataset.figure, x: r.left, y: r.top + window.scrollY, width: r.width, height: r.height}; });
  const controls = [...document.querySelectorAll('.pg-stage [data-param], .pg-stage [data-control], .pg-stage button')]
    .filter(e => e.getBoundingClientRect().width > 0 && getComputedStyle(e).display !== 'none')
    .map(e => { const r = e.getBoundingClientRect(); return {x: r.left, y: r.top + window.scrollY, width: r.width, height: r.height}; });
  return {clip, figures, controls};
}"""
PARTS = {
    "figures": [".pg-stage .pg-head", ".pg-stage .pg-precision", ".pg-stage .pg-row", ".pg-stage .pg-line"],
    "stage": [
        ".pg-stage .pg-controls",
        ".pg-stage .pg-head",
        ".pg-stage .pg-precision",
        ".pg-stage .pg-row",
        ".pg-stage .pg-line",
    ],
}
MARGIN = 12
# --no-pick: the picked cell's outline, the windows it reads and its line are left out (the marks are an overlay's)
NO_PICK_CSS = ".pg-stage .pg-overlay, .pg-stage .pg-cell { display: none !important; }"
# --width: the part cropped is laid out that wide (its figures fitted to it on the resize that follows)
WIDTH_CSS = """%(part)s { width: %(px)dpx !important; min-width: 0 !important; max-width: none !important; }
.pg-stage .pg-row { flex-wrap: wrap !important; overflow: visible !important; }"""
WIDTH_PART = {"figures": ".pg-stage .pg-figures", "stage": ".pg-stage"}
RESIZED_JS = """() => new Promise((done) => { window.dispatchEvent(new Event('resize'));
  requestAnimationFrame(() => requestAnimationFrame(done)); })"""
# A page taller than the window is shot whole by growing the window for the shot: the stage (and the model's graph)
# would fit their figures to that window as it is taken. While `on`, the window's resize events reach nobody.
FREEZE_JS = """(on) => { if (!window.__pgFreeze) { window.__pgFreeze = {on: false};
  window.addEventListener('resize', (e) => { if (window.__pgFreeze.on) e.stopImmediatePropagation(); }, true); }
  window.__pgFreeze.on = on; }"""
PAGES = (
    "home",
    "chain",
    "model",
)  # pictures of the page's content, not of a stage (a chain's: of its stage, if it has one)
# A picture of a given width is cropped from the page, not the window: the app's own scrolling boxes let go, so that
# the page is as tall as its content (a layer's figures at one cell size, a page's content), none of it cut at the foot.
RELEASE_CSS = """html, body, [data-testid="stApp"], [data-testid="stAppViewContainer"], [data-testid="stMain"]
  { height: auto !important; min-height: 0 !important; overflow: visible !important; position: static !important; }"""
# A page's picture is its content, laid out as wide as the picture: no header (the pages' menu), no sidebar, the
# content's column that wide less a margin.
PAGE_CSS = """[data-testid="stHeader"], [data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
  [data-testid="stToolbar"], [data-testid="stDecoration"] { display: none !important; }
[data-testid="stMainBlockContainer"] { box-sizing: border-box !important; width: %(px)dpx !important;
  max-width: none !important; margin: 0 !important; padding: %(margin)dpx !important; }"""
# The crop of a page's content (page coordinates) `width` wide from the content's column, and its elements' boxes.
PAGE_CROP_JS = """([width, margin]) => {
  const column = document.querySelector('[data-testid="stMainBlockContainer"]'), left = column.getBoundingClientRect().left;
  const shown = [...column.querySelectorAll('[data-testid="stElementContainer"]')].filter(e => {
    const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).display !== 'none'; });
  const boxes = shown.map(e => { const r = e.getBoundingClientRect();
    return {which: e.className.split(' ').find(c => c.startsWith('st-key-')) || e.dataset.testid, x: r.left, y: r.top + window.scrollY,
            width: r.width, height: r.height}; });
  const end = document.documentElement.scrollHeight;  // an element laid out under the page's end (a closed tab's) is not shown
  const top = Math.max(0, Math.min(...boxes.map(b => b.y)) - margin), bottom = Math.min(end, Math.max(...boxes.map(b => b.y + b.height)) + margin);
  return {clip: {x: Math.max(0, left), y: top, width, height: bottom - top}, figures: boxes, controls: []};
}"""
# What a picture cuts: a box of the part shot whose content runs past its width (scrolled or hidden), by its class.
CUT_JS = """(root) => [...document.querySelectorAll(root + ' *')].filter(e => {
  const o = getComputedStyle(e).overflowX;
  return e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1 && (o === 'auto' || o === 'scroll' || o === 'hidden')
    && !e.closest('.pg-controls') && e.getBoundingClientRect().height > 2; }).map(e => (e.className && e.className.baseVal === undefined
    ? e.className : e.tagName) + ' ' + e.scrollWidth + '>' + e.clientWidth)"""
NO_BADGES_CSS = ".pg-stage .pg-badge { display: none !important; }"
# Whether this run built the engine or found it cached is no part of the figure: the badge says "built" either way.
STEADY_JS = """() => document.querySelectorAll('.pg-stage .pg-badge').forEach(e => {
  e.textContent = e.textContent.replace(/engine (WORDS)/, 'engine built'); })""".replace(
    "WORDS", "|".join(protocol.ENGINE_STATUS[k] for k in ("built", "cached", "pending"))
)
# Query parameters the app reads, as the protocol spells them (no Streamlit imported).
PRESET_PARAM, PRESENTER_PARAM = protocol.PRESET, protocol.VIEW_PRESENTER


@dataclass(frozen=True)
class Shot:
    page: str  # "home", "chain", "model" or a layer name
    preset: str | None = None  # a layer's example or lesson; the model page's model (its digest)
    model_name: str = "model.onnx"

    @property
    def name(self) -> str:
        """The file's name: the page and, for an example, its configuration in words (parameters that differ from
        the defaults, e.g. convolution--stride_nd-2-2--padding_mode-SAME_UPPER)."""
        if not self.preset or self.page in PAGES:
            return self.page
        from ..layers import get_layer
        from ..network.export import config_name
        from ..network.presets import find

        layer, p = get_layer(self.page), find(self.page, self.preset)
        name = config_name(layer, layer.resolve(p.params, p.input_shape), p.input_shape)
        return name if name != layer.name else f"{self.page}--{self.preset}"

    def url(self, base: str, presenter: bool, extra: str = "") -> str:
        """The page's link: `preset=NAME` opens an example (ui.page), presenter mode is the "view.presenter" toggle's
        own URL binding; `extra` is more query text (hide=…, a picked cell)."""
        query = {k: v for k, v in ((PRESET_PARAM, self.preset), (PRESENTER_PARAM, "true" if presenter else None)) if v}
        path = "" if self.page == "home" else self.page
        if self.page == "model" and self.preset:  # a model's page: the model the server keeps, by its digest
            query = {"onnx": self.preset, "model": self.model_name, **query}
            query.pop(PRESET_PARAM, None)
        text = "&".join(t for t in (urllib.parse.urlencode(query), extra.lstrip("?&")) if t)
        return f"{base}/{path}" + (f"?{text}" if text else "")


def shots_from(pages: list[str], presets: list[str], model: tuple[str, str] | None = None) -> list[Shot]:
    """Pages by name; presets as LAYER:PRESET, LAYER:all (every example and lesson of a layer) or all (of every
    layer); `model`: the (digest, file name) the model page shows."""
    from ..layers import LAYERS

    presets = [f"{layer}:all" for layer in LAYERS] if "all" in presets else presets
    shots = []
    for page in pages:
        if page not in PAGES and page not in LAYERS:
            raise ValueError(f"--pages: unknown page {page!r}; choose {', '.join(PAGES)} or one of {', '.join(LAYERS)}")
        if page == "model" and model is None:
            raise ValueError("--pages model: needs --model FILE.onnx (the model its page shows)")
        shots.append(Shot(page, *model) if page == "model" else Shot(page))
    for item in presets:
        layer, sep, name = item.partition(":")
        if not sep or layer not in LAYERS:
            raise ValueError(f"--presets: {item!r} must be LAYER:PRESET with LAYER one of {', '.join(LAYERS)}")
        from ..network.presets import examples

        names = [p.name for p in examples(layer)]
        chosen = names if name == "all" else [name]
        for n in chosen:
            if n not in names:
                raise ValueError(f"--presets: {layer} has no preset {n!r}; it has {', '.join(names)}")
            shots.append(Shot(layer, n))
    return shots


def take(
    shots: list[Shot],
    out: Path,
    *,
    width: int = 1920,
    height: int = 1080,
    presenter: bool = False,
    crop: str = "figures",
    scale: int = 1,
    background: str = "white",
    query: str = "",
    badges: bool = False,
    picture_width: int | None = None,
    pick: bool = True,
    base_url: str = "",
    progress=print,
) -> list[Path]:
    """`width` × `height`: the window; `picture_width`: every picture that wide (the window then at least as wide as
    the part shot needs); `pick`: the picked cell's outlines drawn; `base_url`: the gallery's links under it."""
    if crop not in CROPS or background not in BACKGROUNDS or scale not in (1, 2, 3):
        raise ValueError(f"crop must be one of {', '.join(CROPS)}, background white or dark, scale 1, 2 or 3")
    if picture_width is not None:  # a page is shot in a window that wide; a stage's part is laid out that wide
        width = picture_width if crop == "page" else max(width, picture_width + 400)
    out.mkdir(parents=True, exist_ok=True)
    bg, fg = BACKGROUNDS[background]
    written, records = [], {}
    with browser.serve_app() as base, browser.chromium() as chrome:
        context = browser.new_context(
            chrome,
            viewport={"width": width, "height": height},
            device_scale_factor=scale,
            reduced_motion="reduce",
            color_scheme="light",
        )
        page = context.new_page()
        showing, style = None, None  # the layer page the tab has open (by a link), where an example can be picked
        for i, shot in enumerate(shots, 1):
            link = shot.url(base, presenter, query)
            if style is not None:  # the stage sizes its figures without the picture's style, as on a page load
                style.evaluate("e => e.remove()")
            # a page is shot in a window as wide as its picture; a chain's in a layer's, where its stage may be
            window = picture_width if picture_width is not None and shot.page in ("home", "model") else width
            if page.viewport_size["width"] != window:  # a page is shot in a window as wide as its picture
                page.set_viewport_size({"width": window, "height": height})
                showing = None
            if shot.preset and shot.page == showing and pick_example(page, shot.page, shot.preset):
                progress(f"[{i}/{len(shots)}] {shot.name}: picked {shot.preset} on the open page")
            else:
                progress(f"[{i}/{len(shots)}] {shot.name}: opening {link}")
                page.goto(link)
                browser.wait_until_idle(page)
                showing = shot.page if shot.page not in PAGES else None
            exception = page.locator('[data-testid="stException"]')
            if exception.count():
                raise RuntimeError(f"{shot.name}: the page shows an exception: {exception.first.inner_text()[:500]}")
            found = None
            # a layer's page is a stage, and a chain's may be one (its tensors the stage's figures)
            layer = shot.page not in PAGES or (shot.page == "chain" and page.locator(STAGE).count() > 0)
            if layer:
                page.wait_for_selector(
                    f"{STAGE}[data-drawn] [data-figure{'' if shot.page in PAGES else '=output'}] canvas"
                )
                page.wait_for_function(f"() => !document.querySelector('{STAGE}').hasAttribute('data-busy')")
            elif shot.page == "model":  # its graph laid out
                page.wait_for_selector(".pg-graph svg g", timeout=120_000)
            sized = layer and picture_width is not None and crop != "page"
            sheet = (
                SNAPSHOT_CSS % {"bg": bg, "fg": fg} + ("" if badges else NO_BADGES_CSS) + ("" if pick else NO_PICK_CSS)
            )
            if sized:
                sheet += WIDTH_CSS % {"part": WIDTH_PART[crop], "px": picture_width - 2 * MARGIN}
            whole = not layer and crop != "page"  # a page's content, as wide as the picture
            if sized or whole:  # (a layer's figures fitted to the window's height are no taller than it)
                sheet += RELEASE_CSS
            if whole:
                sheet += PAGE_CSS % {"px": picture_width or window, "margin": MARGIN}
            style = page.add_style_tag(content=sheet)
            if sized:  # the figures fitted to the width given them
                page.evaluate(RESIZED_JS)
                page.wait_for_function(f"() => !document.querySelector('{STAGE}').hasAttribute('data-busy')")
            page.evaluate(STEADY_JS)
            page.mouse.move(0, 0)
            if layer and crop != "page":
                fixed = {"anchor": WIDTH_PART[crop], "width": picture_width} if sized else None
                found = page.evaluate(CROP_JS, [PARTS[crop], MARGIN, fixed])
                found["cut"] = page.evaluate(CUT_JS, f"{STAGE} .pg-figures" if crop == "figures" else STAGE)
            elif whole:
                page.wait_for_timeout(300)  # the page's own drawings (the model's graph) fitted to the column
                found = page.evaluate(PAGE_CROP_JS, [picture_width or window, MARGIN])
                found["cut"] = page.evaluate(CUT_JS, '[data-testid="stMainBlockContainer"]')
            name = shot.name if shot.name not in {p.stem for p in written} else f"{shot.name}--{shot.preset}"
            path = out / f"{name}.png"  # two examples of one configuration (another input): the second named too
            page.evaluate(FREEZE_JS, True)
            page.screenshot(
                path=str(path),
                full_page=True,
                clip=found["clip"] if found else None,
                animations="disabled",
                caret="hide",
                omit_background=False,
            )
            page.evaluate(FREEZE_JS, False)
            written.append(path)
            records[path.name] = found or {"clip": None, "figures": [], "controls": []}
        context.close()
    (out / "shots.json").write_text(json.dumps(records, indent=1) + "\n")
    files: dict = {}
    (out / "index.md").write_text(gallery(shots, written, query, files, base_url))
    for name, array in files.items():  # what the reproduce lines read
        np.save(out / name, array)
    progress(f"wrote {len(written)} PNG(s), shots.json and index.md to {out}")
    return written


def pick_example(page, layer: str, name: str, timeout_ms: float = 60_000) -> bool:
    """Pick the example or lesson `name` in the open stage's picker, as a person would: the page's script sets its
    input and the stage its parameters, without a page load (a layer's examples, one load for them all). True once
    its answer is drawn: the picker names the example the stage names for that configuration (the first of those
    it is: `presets.matching`; none for a lesson whose scale is from the data, which the stage does not
    recognise) and the stage is idle; False where it does not within 5 s (the caller opens the example's link)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: PLC0415 - only a snapshot needs it

    from ..base.precision import with_data_scale
    from ..layers import get_layer
    from ..network.presets import find, input_for, matching

    p = find(layer, name)
    x = input_for(p)
    shape = {n: a.shape for n, a in x.items()} if isinstance(x, dict) else x.shape  # several inputs: by name
    params = with_data_scale(get_layer(layer).resolve(p.params, shape), x)  # as the stage's evaluation has them
    named = matching(layer, params, x)
    picker = f'{STAGE} [data-control="example"]'
    if page.input_value(picker) == name:  # the stage shows that example already: a pick would change nothing
        return True
    before = browser.mark(page)
    page.select_option(picker, name)
    browser.wait_until_idle(page, timeout_ms, after=before)
    try:
        page.wait_for_function(
            f"""(name) => {{
            const stage = document.querySelector('{STAGE}');
            const picker = stage && stage.querySelector('[data-control="example"]');
            return picker && picker.value === name && !stage.hasAttribute('data-busy'); }}""",
            arg=named[0].name if named else "",
            timeout=5_000,
        )  # "": none named
    except PlaywrightTimeout:
        return False
    return True


def gallery(
    shots: list[Shot], paths: list[Path], query: str = "", files: dict | None = None, base_url: str = ""
) -> str:
    """index.md: per picture, its title, the link that reopens it (relative to the app's address, or absolute under
    `base_url`), the command that reproduces its output and what to see, as the alt text too. The arrays the commands
    read go into `files` (file name → array), named by the picture."""
    from ..layers import get_layer
    from ..network.export import playground_command
    from ..network.presets import find, input_for

    titles = {"home": "The home page", "chain": "A chain of layers", "model": "A whole ONNX model"}
    lines = ["# TensorRT Layer Playground — figures", ""]
    for shot, path in zip(shots, paths):
        address = shot.url(base_url.rstrip("/"), False, query)
        link = f"[{address}]({address})" if base_url else f"`/{address.lstrip('/')}`"
        if shot.page in PAGES:
            lines += [f"## {titles[shot.page]}", "", f"![{titles[shot.page]}]({path.name})", "", f"Link: {link}", ""]
            continue
        layer = get_layer(shot.page)
        if shot.preset:
            p = find(shot.page, shot.preset)
            params, x = layer.resolve(p.params, p.input_shape), input_for(p)
            title, note = f"{layer.title} — {p.kind}: {p.title}", p.note or p.title
        else:
            x = layer.example_input(layer.example_shape)
            params, title, note = layer.defaults(), f"{layer.title} — the defaults", layer.summary
        alt = " ".join(note.split()).replace("]", ")")
        lines += [
            f"## {title}",
            "",
            f"![{alt}]({path.name})",
            "",
            note,
            "",
            f"- Link: {link}",
            f"- Reproduce: `{playground_command(layer, params, x, files, path.stem)}`",
            "",
        ]
    return "\n".join(lines)
