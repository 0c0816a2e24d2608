"""The pages as the room sees them: a projector's 1280 × 720 with the sidebar open (the head's badges read whole, the
engine's naming its builder and status, the shapes after presenter mode's lesson), a phone's 390 × 844 (cells big
enough to see, the head's words whole, an open sidebar that plainly gives the stage back), the home page's metrics in
presenter type, and a stage that holds still (the badges while an engine builds, the strip Tab opens). One page load
each."""

from __future__ import annotations

import re

import pytest
from test_stage_browser import open_stage

from playground.chromium import browser as B
from playground.stage import protocol

pytestmark = pytest.mark.browser
STAGE = ".pg-stage"
SIDEBAR = '[data-testid="stSidebar"]'
# Each badge and the badges' line: cut (text-overflow or the line's overflow) where its content is wider than its box.
CUT_JS = """() => [...document.querySelectorAll('.pg-stage .pg-badges, .pg-stage .pg-badge')]
  .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.className + ': ' + e.textContent)"""
ENGINE_WORDS = re.compile(
    r"^((TensorRT|TensorRT-RTX) engine ("
    + "|".join(re.escape(w) for w in protocol.ENGINE_STATUS.values())
    + ")|no TensorRT builder: .+)$"
)


def _open(browser, app, path, **context):
    ctx = B.new_context(browser, **context)
    page = open_stage(ctx, app, path)
    page.wait_for_selector(f"{STAGE} [data-onnxruntime]")  # the head's last badge: its words are all there
    return ctx, page


def _sidebar_open(page) -> None:
    page.locator('[data-testid="stExpandSidebarButton"]').click()
    page.wait_for_function(
        f"""() => {{ const s = document.querySelector('{SIDEBAR}'); const r = s.getBoundingClientRect();
        return s.dataset.collapsed === 'false' && r.left >= 0 && r.width > 200; }}"""
    )
    page.wait_for_timeout(500)  # the stage lays out again in the width left (its resize observer)


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
def test_the_heads_badges_read_whole_at_1280_with_the_sidebar_open(browser, app, presenter):
    ctx, page = _open(
        browser,
        app,
        "convolution" + ("?view.presenter=true" if presenter else ""),
        viewport={"width": 1280, "height": 720},
    )
    _sidebar_open(page)
    assert page.evaluate(CUT_JS) == []
    engine = page.locator(f"{STAGE} .pg-badge[data-engine]")
    assert ENGINE_WORDS.match(engine.inner_text()), engine.inner_text()  # the builder and its engine's status
    assert "the output is" in engine.get_attribute("title")  # the plain sentence on hover
    # presenter mode's lesson comes before the title: it is the one cut short, the shapes after it read
    titles, shapes = (page.locator(f"{STAGE} .pg-titles{s}").bounding_box() for s in ("", " > b"))
    assert shapes["x"] + shapes["width"] <= titles["x"] + titles["width"] + 1, (shapes, titles)
    assert not page.errors
    ctx.close()


def test_a_phone_sees_the_cells_reads_the_head_and_gets_the_stage_back_from_the_sidebar(browser, app):
    ctx, page = _open(
        browser,
        app,
        "convolution",
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
    )
    cells = page.evaluate(f"JSON.parse(document.querySelector('{STAGE} .pg-row').dataset.cells)")
    assert min(cells.values()) >= 10, cells  # the captions are wider than a phone: the row scrolls, cells kept
    assert page.evaluate(CUT_JS) == []  # the head's words wrap on a phone, whole
    page.locator('[data-testid="stExpandSidebarButton"]').tap()
    page.wait_for_function(f"document.querySelector('{SIDEBAR}').dataset.collapsed === 'false'")
    # the page beside the open sidebar is dimmed: a tap there closes it (Streamlit's drawer below 768 px)
    shadow = page.evaluate(f"getComputedStyle(document.querySelector('{SIDEBAR}')).boxShadow")
    assert max(map(float, re.findall(r"([\d.]+)px", shadow)), default=0) >= 390, shadow  # its spread: the page
    page.evaluate("document.querySelector('[data-testid=\"stSidebarContent\"]').scrollTop = 1e6")
    close = page.locator('[data-testid="stSidebarCollapseButton"] button').bounding_box()
    assert close is not None and 0 <= close["y"] < 100  # its close button stays in view as its content scrolls
    page.touchscreen.tap(370, 420)
    page.wait_for_function(f"document.querySelector('{SIDEBAR}').dataset.collapsed === 'true'")
    assert not page.errors
    ctx.close()


def test_the_home_pages_figures_read_whole_in_presenter_type_at_1280(browser, app):
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{app}/?view.presenter=true")
    B.wait_until_idle(page)
    values = page.locator('[data-testid="stMetricValue"]')
    assert values.count() == 5
    cut = page.evaluate(
        """() => [...document.querySelectorAll('[data-testid="stMetricValue"], [data-testid="stMetricValue"] *')]
        .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)"""
    )
    assert cut == []  # the backend's name ("tensorrt_rtx") was "tensorr…"
    ctx.close()


def test_the_badges_after_the_engines_stay_put_while_it_builds(browser, app):
    """A value changed: the engine's words go "not built yet", then "built now"; ONNX Runtime's badge after it does
    not slide sideways and back (each head drawn is recorded, the transient one too)."""
    ctx, page = _open(browser, app, "convolution", viewport={"width": 1280, "height": 720})
    B.wait_until_idle(page)
    page.evaluate(
        """() => { window.__heads = []; const head = document.querySelector('.pg-stage .pg-head');
        new MutationObserver(() => { const e = head.querySelector('[data-engine]'), o = head.querySelector('.pg-ort');
          if (e && o) window.__heads.push([e.dataset.engine, Math.round(o.getBoundingClientRect().left)]); })
          .observe(head, {childList: true, subtree: true, characterData: true}); }"""
    )
    page.focus('[data-param="convolution.padding_nd.w"]')
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "window.__heads.some(([s]) => s === 'built') && document.querySelector('[data-onnxruntime]')"
    )
    heads = page.evaluate("window.__heads")
    assert "pending" in {s for s, _ in heads}, heads  # the transient words were drawn
    assert len({left for _, left in heads}) == 1, heads
    ctx.close()


def test_presenter_modes_strip_opened_by_the_keyboard_keeps_the_stage_in_the_window(browser, app):
    """Tab reaching a control of the folded strip opens it in the window, over the figures' foot: the stage does not
    scroll the head and figures away from the room."""
    ctx, page = _open(browser, app, "convolution?view.presenter=true", viewport={"width": 1280, "height": 720})
    head = page.locator(f"{STAGE} .pg-head")
    top = head.bounding_box()["y"]
    for param in ("kernel_size_nd.w", "padding_nd.w"):  # a second line of a control, under the fold when opened
        page.focus(f'[data-param="convolution.{param}"]')
        page.wait_for_timeout(200)
        assert head.bounding_box()["y"] == top, param
        box = page.locator(f'[data-param="convolution.{param}"]').bounding_box()
        assert box["y"] + box["height"] <= 720, box  # the focused control is in the window
    ctx.close()


def test_the_titles_line_cut_short_at_1280_reads_whole_on_hover(browser, app):
    """ElementWise's title, shapes and formula run past 1280 px beside the open sidebar, where the line is cut with
    "…": its whole text is on hover, as the badges' are."""
    ctx, page = _open(browser, app, "elementwise", viewport={"width": 1280, "height": 720})
    _sidebar_open(page)
    titles = page.locator(f"{STAGE} .pg-titles")
    words = " ".join(titles.text_content().split())
    assert " ".join((titles.get_attribute("title") or "").split()) == words
    assert not page.errors
    ctx.close()
