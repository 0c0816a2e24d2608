"""The stage's first touch and the room, in the system Chromium: a permutation picked whole, SAME_* padding's
controls disabled, planes labelled, cells keeping six digits, figures as large in presenter mode as in normal mode
at a projector's and a desktop's size, nothing moving as values change, the room's link without the presenter's
view (and warned about on 127.0.0.1), badges in plain words, the PNG's captions and the gallery's one cell size.
Each step waits on what the stage writes (data-drawn, data-query), never a fixed time."""

from __future__ import annotations

import json
import re

import pytest

from playground.chromium import browser as B
from playground.layers import LAYERS
from playground.network.core import evaluate

pytestmark = pytest.mark.browser
STAGE = ".pg-stage"
SCREENS = ((1280, 720), (1920, 1080))
# Every text a canvas writes, kept for the tests: a cell's digits are drawn, not in the DOM.
TEXTS_JS = """(() => { const fill = CanvasRenderingContext2D.prototype.fillText; window.__texts = [];
  CanvasRenderingContext2D.prototype.fillText = function (t, ...rest) { window.__texts.push(String(t)); return fill.call(this, t, ...rest); };
})();"""


@pytest.fixture(scope="module")
def context(browser):
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    ctx.add_init_script(TEXTS_JS)
    yield ctx
    ctx.close()


def open_stage(context, app, path, page=None):
    page = page or context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{app}/{path}")
    page.wait_for_selector(f'{STAGE}[data-drawn] [data-figure="output"] canvas')
    return page


def query(page) -> dict:
    return json.loads(page.get_attribute(STAGE, "data-query"))


def drawn_after(page, seq: int) -> None:
    page.wait_for_function(
        f"() => Number(document.querySelector('{STAGE}').dataset.drawn) > {seq} && "
        f"!document.querySelector('{STAGE}').hasAttribute('data-busy')"
    )


def drawn(page) -> int:
    return int(page.get_attribute(STAGE, "data-drawn"))


def box(page, which):
    return page.locator(f'{STAGE} [data-figure="{which}"] canvas').first.bounding_box()


def test_a_permutation_is_one_pick_never_a_half_made_one(context, app):
    page = open_stage(context, app, "shuffle")
    first = page.locator(f'{STAGE} [data-param="shuffle.first_transpose.n"]')
    assert first.evaluate("e => e.tagName") == "SELECT"
    assert first.locator("option").count() == 24  # every order of 4 axes, each whole
    assert page.locator(f'{STAGE} [data-param="shuffle.second_transpose"]').evaluate("e => e.tagName") == "SELECT"
    seq = drawn(page)
    first.select_option("0,1,3,2")  # H and W swapped: one move
    drawn_after(page, seq)
    q = query(page)
    assert [q[f"shuffle.first_transpose.{a}"] for a in "nchw"] == ["0", "1", "3", "2"]
    assert not page.locator(f"{STAGE} .pg-problem").is_visible()
    assert "shape (1, 2, 4, 3)" in page.inner_text(f'{STAGE} [data-figure="output"] .pg-stats')
    steps = page.inner_text(f"{STAGE} .pg-explain")
    assert re.search(r"^1\. first_transpose", steps, re.M) and re.search(r"^2\. second_transpose", steps, re.M)
    page.close()


def test_same_padding_modes_disable_the_padding_controls(context, app):
    page = open_stage(context, app, "convolution?convolution.padding_mode=SAME_UPPER&convolution.stride_nd.h=2")
    pad = page.locator(f'{STAGE} [data-param="convolution.padding_nd.h"]')
    assert pad.is_disabled()
    assert "EXPLICIT" in page.inner_text(f'{STAGE} .pg-control[data-name="padding_nd"] .pg-note')
    seq = drawn(page)
    page.select_option(f'{STAGE} [data-param="convolution.padding_mode"]', "EXPLICIT_ROUND_DOWN")
    drawn_after(page, seq)
    assert pad.is_enabled()
    page.close()


def test_planes_carry_their_labels_and_cells_their_digits(context, app):
    page = open_stage(context, app, "convolution")  # the spec's powers-of-ten kernel: 12345.6789, …
    texts = page.evaluate("() => window.__texts")
    assert any(re.fullmatch(r"\d{5}\.\d", t) for t in texts), [t for t in texts if len(t) > 3][:12]
    page.close()
    page = open_stage(context, app, "convolution?convolution.input.C=3")
    texts = page.evaluate("() => window.__texts")
    for c in range(3):
        assert f"n 0 · c {c}" in texts
    page.close()
    for maps in (2, 4):  # more planes, smaller cells: a smaller font first, and never fewer digits than the whole part
        page = open_stage(context, app, f"convolution?convolution.num_output_maps={maps}")
        texts = set(page.evaluate("() => window.__texts"))
        y = evaluate("convolution", {"num_output_maps": maps}, build=False).output
        big = {float(v) for v in y.ravel() if abs(v) >= 10000}
        rounded = {str(int(float(f"{v:.{n}g}"))) for v in big for n in (3, 4)} - {str(round(v)) for v in big}
        assert not texts & rounded, sorted(texts & rounded)  # no "12300", "97800"
        assert texts & {str(round(v)) for v in big} | {f"{v:.6g}" for v in big}
        page.close()


def test_nothing_on_the_stage_moves_as_values_change(context, app):
    page = open_stage(context, app, "convolution")
    # measured before ONNX Runtime's badge, which follows the first paint, is in the head: its place is held
    out, head = box(page, "output"), page.locator(f"{STAGE} .pg-head").bounding_box()
    page.wait_for_selector(f"{STAGE} [data-onnxruntime]")
    assert page.locator(f"{STAGE} .pg-head").bounding_box() == head and box(page, "output") == out
    cells = page.get_attribute(f"{STAGE} .pg-row", "data-cells")
    seq = drawn(page)
    page.fill(f'{STAGE} [data-param="convolution.padding_nd.h"] + .pg-exact', "1")
    page.press(f'{STAGE} [data-param="convolution.padding_nd.h"] + .pg-exact', "Enter")
    drawn_after(page, seq)
    assert page.get_attribute(f"{STAGE} .pg-row", "data-cells") == cells  # the cells keep their size
    assert box(page, "output")["y"] == out["y"]  # the head's words changed (the shapes, the engine's badge)
    exact = f'{STAGE} [data-param="convolution.kernel_size_nd.h"] + .pg-exact'
    page.fill(exact, "40")  # larger than the padded input: refused
    page.press(exact, "Enter")
    page.wait_for_selector(f"{STAGE} .pg-problem:not([hidden])")
    assert box(page, "output")["y"] == out["y"]  # the banner takes no room
    page.wait_for_selector(f"{STAGE} [data-onnxruntime]")  # the padded configuration's badges, in their places
    assert box(page, "output")["y"] == out["y"]
    seq = drawn(page)
    page.fill(exact, "3")
    page.press(exact, "Enter")
    drawn_after(page, seq)
    seq = drawn(page)
    page.select_option(f'{STAGE} [data-param="convolution.compare"]', "FP16")
    drawn_after(page, seq)
    tops = page.eval_on_selector_all(f"{STAGE} [data-figure]", "els => els.map(e => e.getBoundingClientRect().top)")
    assert len(tops) >= 5 and len(set(tops)) == 1, tops  # compare mode's figures on one row
    rights = page.eval_on_selector_all(f"{STAGE} [data-figure]", "els => els.map(e => e.getBoundingClientRect().right)")
    assert (
        max(rights)
        <= page.locator(f"{STAGE} .pg-row").bounding_box()["x"]
        + page.locator(f"{STAGE} .pg-row").bounding_box()["width"]
        + 1
    )  # and within the screen's width
    page.close()


def test_the_room_link_is_the_configuration_without_the_presenters_view(context, app):
    page = open_stage(context, app, "convolution?view.presenter=true&hide=kernel&convolution.stride_nd.h=2")
    link = page.inner_text(f"{STAGE} .pg-url")
    assert "convolution.stride_nd.h=2" in link and "view.presenter" not in link and "hide=" not in link
    assert page.locator(f"{STAGE} .pg-loopback").is_visible()  # served on 127.0.0.1: phones cannot open it
    assert "only this computer" in page.inner_text(f"{STAGE} .pg-loopback")
    page.close()


def test_badges_say_in_plain_words_what_they_judge(context, app):
    page = open_stage(context, app, "convolution")
    badge = page.locator(f"{STAGE} .pg-agrees")
    assert badge.inner_text() == "matches the cookbook's table"
    assert "within" in badge.get_attribute("title")  # the tolerance, on hover
    page.close()


def test_the_png_gives_every_caption_its_room_and_a_gallery_one_cell_size(context, app):
    page = open_stage(context, app, "convolution")
    fit = page.evaluate("""() => { const f = document.querySelector('.pg-stage').__stage.figures, pic = f.picture(2);
      const ctx = document.createElement('canvas').getContext('2d'), figs = Object.values(f.figs);
      ctx.font = '11px system-ui, sans-serif';
      const need = figs.reduce((w, g) => w + Math.max(g.g.width, ctx.measureText(g.el.querySelector('.pg-stats').textContent).width), 0);
      return [pic.width / 2, need]; }""")
    assert fit[0] >= fit[1], fit
    page.close()
    page = open_stage(context, app, "convolution?view.cell=40")
    assert set(json.loads(page.get_attribute(f"{STAGE} .pg-row", "data-cells")).values()) == {40}
    page.close()


@pytest.mark.parametrize("size", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_presenter_figures_are_at_least_as_large_as_normal_ones(browser, app, size, record_property):
    """Every layer page, normal and presenter: the output figure's area in presenter mode is no smaller."""
    ctx = B.new_context(browser, viewport={"width": size[0], "height": size[1]})
    page = ctx.new_page()
    sizes, smaller = {}, []
    try:
        for name in LAYERS:
            got = []
            for url in (name, f"{name}?view.presenter=true"):
                open_stage(ctx, app, url, page)
                b = box(page, "output")
                got.append((round(b["width"]), round(b["height"])))
            sizes[name] = got
            if got[1][0] * got[1][1] < got[0][0] * got[0][1]:
                smaller.append(f"{name}: normal {got[0]}, presenter {got[1]}")
    finally:
        ctx.close()
    record_property("sizes", sizes)
    print(f"\noutput figure px at {size[0]}×{size[1]} (normal, presenter):", json.dumps(sizes))
    assert not smaller, "\n".join(smaller)


@pytest.mark.parametrize("presenter", (False, True), ids=("normal", "presenter"))
def test_the_skeleton_stands_where_the_stage_will_be(browser, app, presenter):
    """Before the stage is here (its scripts held back), the page shows its skeleton: the layer's title, a row per
    control with the link's value, and a box per figure where the figure will be and about its size; nothing that
    looks for the stage finds it."""
    view = "&view.presenter=true" if presenter else ""
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    try:
        page = open_stage(ctx, app, f"convolution?convolution.stride_nd.h=2{view}")
        final = page.eval_on_selector_all(
            f"{STAGE} [data-figure] canvas:not(.pg-overlay)",
            "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width]; })",
        )
        page.close()
        page = ctx.new_page()
        page.route("**/stage.js", lambda route: route.abort())  # the stage never comes: its skeleton stays
        page.goto(f"{app}/convolution?convolution.stride_nd.h=2{view}")
        page.wait_for_selector(".pg-skeleton .pg-frame")
        assert page.locator(STAGE).count() == 0
        assert page.inner_text(".pg-skeleton .pg-title") == "Convolution"
        assert "2,1" in page.inner_text(".pg-skeleton .pg-controls")  # the link's stride, h then w
        assert "shape (1, 1, 2, 7)" in page.inner_text(".pg-skeleton .pg-row")  # the output's, from the link
        boxes = page.eval_on_selector_all(
            ".pg-skeleton .pg-bone-fig",
            "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width]; })",
        )
        assert len(boxes) == len(final) == 3
        for (x, y, w), (fx, fy, fw) in zip(boxes, final):
            assert abs(y - fy) <= 2 and abs(x - fx) <= 0.15 * fx + 2 and abs(w - fw) <= 0.15 * fw, (boxes, final)
    finally:
        ctx.close()
