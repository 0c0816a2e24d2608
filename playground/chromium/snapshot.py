"""`python -m playground snapshot --out DIR [--pages ...] [--presets ...]`: documentation screenshots.

Starts the app, opens each page (or page with a spec preset) in headless system Chromium, waits
until the app has finished running, and writes one PNG each plus an `index.md` gallery. A layer page's
picture is its stage, cropped: the controls and the figures they define, down to where their content ends
(`--full-page` takes the whole page instead). `--query` adds URL parameters to every page (`hide=…`, a picked
cell `convolution.extra.h=…`). The viewport, scale, fonts and motion are fixed, and figures that change from
run to run (timings) sit in containers keyed `volatile-…` that are masked, as is the address in the link box,
so the same state gives the same picture.
"""
from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from . import browser

VOLATILE = '[class*="st-key-volatile"]'
LINK_BOX = '[class*="st-key-ctl-"][class*="-link"]'  # the share link: this server's throwaway address
# The stage's box: the controls panel and the figure column, the panel cut where its controls end.
STAGE_BOX_JS = """([panelSelector, figuresSelector]) => {
  const panel = document.querySelector(panelSelector), figures = document.querySelector(figuresSelector);
  if (!panel || !figures) return null;
  const p = panel.getBoundingClientRect(), f = figures.getBoundingClientRect();
  let content = p.top;
  for (const e of panel.querySelectorAll('[data-testid="stElementContainer"]')) {
    const r = e.getBoundingClientRect();
    if (r.height > 0 && r.top < p.bottom) content = Math.max(content, Math.min(r.bottom, p.bottom));
  }
  const pad = 8, left = Math.max(0, Math.min(p.left, f.left) - pad), top = Math.max(0, Math.min(p.top, f.top) - pad);
  const right = Math.max(p.right, f.right) + pad, bottom = Math.max(f.bottom, content) + pad;
  return {x: left, y: top + window.scrollY, width: right - left, height: bottom - top};
}"""
# Query parameters the app reads (playground/ui/links.py, ui/state.py VIEW_PRESENTER); spelled out here so
# that this module does not import Streamlit.
PRESET_PARAM, PRESENTER_PARAM = "preset", "view.presenter"


@dataclass(frozen=True)
class Shot:
    page: str  # "home" or a layer name
    preset: str | None = None

    @property
    def name(self) -> str:
        return self.page + (f"--{self.preset}" if self.preset else "")

    def url(self, base: str, presenter: bool, extra: str = "") -> str:
        """The page's link: `preset=NAME` applies a spec example (ui.links); presenter mode is the
        "view.presenter" toggle's own URL binding, which Streamlit spells `view.presenter=true`; `extra` is
        more query text (hide=…, a picked cell)."""
        # the Streamlit stage, whose elements the crops know (view.instrument=false), until they know the instrument's
        query = {k: v for k, v in ((PRESET_PARAM, self.preset), (PRESENTER_PARAM, "true" if presenter else None),
                                   ("view.instrument", "false")) if v}
        path = "" if self.page == "home" else self.page
        text = "&".join(t for t in (urllib.parse.urlencode(query), extra.lstrip("?&")) if t)
        return f"{base}/{path}" + (f"?{text}" if text else "")


def shots_from(pages: list[str], presets: list[str]) -> list[Shot]:
    """Pages by name; presets as LAYER:PRESET (or LAYER:all for every preset of a layer)."""
    from ..layers import LAYERS

    shots = []
    for page in pages:
        if page != "home" and page not in LAYERS:
            raise ValueError(f"--pages: unknown page {page!r}; choose home or one of {', '.join(LAYERS)}")
        shots.append(Shot(page))
    for item in presets:
        layer, sep, name = item.partition(":")
        if not sep or layer not in LAYERS:
            raise ValueError(f"--presets: {item!r} must be LAYER:PRESET with LAYER one of {', '.join(LAYERS)}")
        from ..presets import examples
        names = [p.name for p in examples(layer)]
        chosen = names if name == "all" else [name]
        for n in chosen:
            if n not in names:
                raise ValueError(f"--presets: {layer} has no preset {n!r}; it has {', '.join(names)}")
            shots.append(Shot(layer, n))
    return shots


def take(shots: list[Shot], out: Path, *, width: int = 1920, height: int = 1080, presenter: bool = False,
         full_page: bool = False, query: str = "", progress=print) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with browser.serve_app() as base, browser.chromium() as chrome:
        context = chrome.new_context(viewport={"width": width, "height": height}, device_scale_factor=1,
                                     reduced_motion="reduce", color_scheme="light")
        page = context.new_page()
        for i, shot in enumerate(shots, 1):
            progress(f"[{i}/{len(shots)}] {shot.name}: opening {shot.url(base, presenter, query)}")
            page.goto(shot.url(base, presenter, query))
            browser.wait_until_idle(page)
            exception = page.locator('[data-testid="stException"]')
            if exception.count():
                raise RuntimeError(f"{shot.name}: the page shows an exception: {exception.first.inner_text()[:500]}")
            path = out / f"{shot.name}.png"
            clip = None if full_page or shot.page == "home" else page.evaluate(STAGE_BOX_JS, [
                browser.key_selector(f"ctl.{shot.page}.{part}") for part in ("parameters", "stage")])
            page.screenshot(path=str(path), full_page=clip is None, clip=clip, animations="disabled", caret="hide",
                            mask=[page.locator(VOLATILE), page.locator(LINK_BOX)], mask_color="#EEF1F5")
            written.append(path)
        context.close()
    (out / "index.md").write_text(gallery(shots, written))
    progress(f"wrote {len(written)} PNG(s) and index.md to {out}")
    return written


def gallery(shots: list[Shot], paths: list[Path]) -> str:
    lines = ["# TensorRT Layer Playground — screenshots", ""]
    for shot, path in zip(shots, paths):
        title = shot.page.replace("_", " ").title() + (f" — preset `{shot.preset}`" if shot.preset else "")
        lines += [f"## {title}", "", f"![{shot.name}]({path.name})", ""]
    return "\n".join(lines)
