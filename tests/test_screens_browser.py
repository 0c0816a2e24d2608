"""The pages as the room sees them: a projector's 1280 × 720 with the sidebar open (the head's badges read whole, the
engine's naming its builder and status, the shapes after presenter mode's lesson), a phone's 390 × 844 (cells big
enough to see, the head's words whole, an open sidebar that plainly gives the stage back), the home page's metrics in
presenter type, and a stage that holds still (the badges while an engine builds, a control Tab reaches). One page load
each."""

from __future__ import annotations

import re

import pytest
from test_stage_browser import open_stage

from playground.chromium import browser as B
from playground.serve import protocol

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


# The first slider of the stage's controls (`used`: of a control the configuration uses): where it is, whether the point at its middle is the slider itself (nothing
# over it), and how opaque it is with everything it lies in (a folded control is transparent, not hidden).
FIRST_SLIDER_JS = """(used) => {
  const s = document.querySelector(`.pg-stage .pg-controls .pg-control${used ? ':not(.pg-unused)' : ''} input[type=range]`);
  if (!s) return null;
  const r = s.getBoundingClientRect(), hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
  let opacity = 1;
  for (let e = s; e; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
  return {x: r.x, y: r.y, width: r.width, height: r.height, hit: hit === s, opacity, key: s.dataset.param};
}"""


def test_presenter_mode_at_1280_shows_every_layers_first_slider_and_a_click_moves_it(browser, app):
    """A presenter with a clicker or a touch screen cannot hover: on every layer page the first slider is in the
    window, whole, drawn (not folded away) and the thing under the pointer, and a click on it, with no hover before,
    moves its value and the stage's configuration; the figures are beside the controls, not under them."""
    from playground.layers import LAYERS

    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720}, has_touch=True)
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    seen = {}
    for name in LAYERS:
        page.goto(f"{app}/{name}?view.presenter=true")
        page.wait_for_selector(f'{STAGE}[data-drawn] [data-figure="output"] canvas')
        page.mouse.move(1279, 719)  # away from the controls: nothing is hovered
        first = page.evaluate(FIRST_SLIDER_JS, False)
        assert first is not None, name
        for s in (first, page.evaluate(FIRST_SLIDER_JS, True) or first):
            inside = s["x"] >= 0 and s["y"] >= 0 and s["x"] + s["width"] <= 1280 and s["y"] + s["height"] <= 720
            assert inside and s["hit"] and s["opacity"] >= 0.6, (name, s)  # drawn and on top (an unused one dimmed)
        controls = page.locator(f"{STAGE} .pg-controls").bounding_box()
        output = page.locator(f'{STAGE} [data-figure="output"]').bounding_box()
        assert output["x"] >= controls["x"] + controls["width"], name  # the figures beside the controls
        # the cells' digits are drawn no smaller than the captions under them (heatmap.js's cellLabel floor)
        least, caption = page.evaluate(
            """() => { const s = document.querySelector('.pg-stage');
            return [s.__stage.figures.figs.output.least, parseFloat(getComputedStyle(s.querySelector('figcaption')).fontSize)]; }"""
        )
        assert least >= caption >= 12, (name, least, caption)
        if s is first and s["opacity"] < 1:
            continue  # no slider the default configuration uses (an activation's ReLU): an unused one snaps back
        slider = page.locator(f'{STAGE} .pg-controls input[type=range][data-param="{s["key"]}"]')
        before, drawn = slider.input_value(), page.get_attribute(STAGE, "data-query")
        at_max = slider.evaluate("e => Number(e.value) >= Number(e.max)")
        page.mouse.click(s["x"] + (3 if at_max else s["width"] - 3), s["y"] + s["height"] / 2)  # the other end
        # the stage draws another configuration (the click reached the stage, not only the thumb)
        page.wait_for_function(
            "(q) => document.querySelector('.pg-stage').dataset.query !== q || document.querySelector('.pg-problem:not(:empty)')",
            arg=drawn,
        )
        answered = page.get_attribute(STAGE, "data-query") != drawn or page.locator(f"{STAGE} .pg-problem").is_visible()
        seen[name] = (before, slider.input_value(), answered)  # a refusal (its banner) is an answer too
    stuck = {n: v for n, v in seen.items() if v[0] == v[1] or not v[2]}
    assert not stuck and len(seen) >= 10, (stuck, sorted(set(LAYERS) - set(seen)))
    ctx.close()


def test_presenter_modes_controls_reached_by_the_keyboard_keep_the_stage_in_the_window(browser, app):
    """Tab reaching a control low in presenter mode's column scrolls the column, not the page: the head and the
    figures stay where the room sees them."""
    ctx, page = _open(browser, app, "convolution?view.presenter=true", viewport={"width": 1280, "height": 720})
    head = page.locator(f"{STAGE} .pg-head")
    top = head.bounding_box()["y"]
    for param in ("kernel_size_nd.w", "padding_nd.w", "dilation_nd.w"):
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


def test_the_home_pages_skeleton_is_on_the_screen_before_any_script_while_the_server_has_not_answered(browser, app):
    """The home page's title and its three ways in come with its HTML: with none of Streamlit's scripts loaded
    (their requests held) they are on the screen, and a server too busy to run the page (its websocket held, never
    answered) still shows them once Streamlit's scripts have run; the page's own title replaces them. (Ordering, not
    a clock: the skeleton needs nothing to load.)"""
    from playground.ui.entry import WAYS_IN

    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.route("**/static/js/**", lambda route: None)  # held: no script of Streamlit's arrives
    page.goto(f"{app}/", wait_until="commit")
    skeleton = page.locator("#pg-home-skeleton")
    skeleton.wait_for(state="visible", timeout=10_000)
    assert all(w in skeleton.inner_text() for w in WAYS_IN)
    assert page.locator('[data-testid="stApp"]').count() == 0  # Streamlit has drawn nothing
    ctx.close()
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.route_web_socket("**/_stcore/stream", lambda ws: None)  # held: no script run answers
    page.goto(f"{app}/")
    page.wait_for_selector(
        '[data-testid="stApp"]'
    )  # Streamlit's scripts have run: the skeleton stays until the page draws
    page.wait_for_timeout(1500)
    skeleton = page.locator("#pg-home-skeleton")
    assert skeleton.is_visible() and all(w in skeleton.inner_text() for w in WAYS_IN)
    ctx.close()
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.goto(f"{app}/")
    page.wait_for_selector('[data-testid="stMain"] h1')
    page.wait_for_selector("#pg-home-skeleton", state="detached")
    B.wait_until_idle(page)
    assert page.locator('[class*="st-key-home-way-"] img').count() == 3  # the ways in, each with its picture
    ctx.close()
