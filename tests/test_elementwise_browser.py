"""ElementWise's stage in the system Chromium: both inputs drawn as figures of their own shapes, and the output cell
under the pointer outlined in each input (B's one cell along its broadcast axis)."""

from __future__ import annotations

import pytest

from playground.chromium import browser as B

pytestmark = pytest.mark.browser
STAGE = ".pg-stage"


@pytest.fixture(scope="module")
def page(app, browser):
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    p = ctx.new_page()
    p.set_default_timeout(30_000)
    p.errors = []
    p.on("pageerror", lambda exc: p.errors.append(str(exc)))
    p.goto(f"{app}/elementwise?elementwise.input.b.H=1&elementwise.operation=PROD")
    p.wait_for_selector(f'{STAGE}[data-drawn] [data-figure="output"] canvas')
    yield p
    ctx.close()


def overlay(page, which: str) -> str:
    return page.evaluate(f"() => document.querySelector('{STAGE} [data-figure=\"{which}\"] .pg-overlay').innerHTML")


def test_both_inputs_are_figures_of_their_own_shapes(page):
    figures = page.eval_on_selector_all(f"{STAGE} [data-figure]", "els => els.map(e => e.dataset.figure)")
    assert figures[:3] == ["input", "input.b", "output"]
    assert "shape (1, 1, 1, 3)" in page.inner_text(f'{STAGE} [data-figure="input.b"] .pg-stats')
    assert "shape (1, 1, 3, 3)" in page.inner_text(f'{STAGE} [data-figure="output"] .pg-stats')
    assert not page.errors


def test_hovering_an_output_cell_outlines_the_cell_each_input_gives_it(page):
    box = page.locator(f'{STAGE} [data-figure="output"] canvas').first.bounding_box()
    page.mouse.move(box["x"] + 2, box["y"] + 2)  # the first row: B's own row too
    first = overlay(page, "input.b")
    page.mouse.move(box["x"] + 2, box["y"] + box["height"] - 2)  # the last row of the output: B's one row again
    last = overlay(page, "input.b")
    page.mouse.move(box["x"] + box["width"] - 2, box["y"] + box["height"] - 2)  # another column: B's last cell
    other = overlay(page, "input.b")
    assert first == last != other  # the row broadcasts; the column does not
    assert overlay(page, "input") != first and not page.errors


def test_the_inputs_keep_their_colours_as_the_operation_changes_and_max_shares_them(page):
    """On the page's own example (A −4 … 4, B 1 … 9) the operands are drawn on one scale of theirs: SUM and MAX
    leave their pictures alone; MAX's output, whose values are theirs, is drawn on it too."""
    page.goto(page.url.split("?")[0])
    page.wait_for_selector(f'{STAGE}[data-drawn] [data-figure="output"] canvas')

    def pixels(which):
        return page.evaluate(f"() => document.querySelector('{STAGE} [data-figure=\"{which}\"] canvas').toDataURL()")

    def scale(which):  # the scale the figure was painted on, as the stage holds it
        return page.evaluate(
            f"() => {{ const s = document.querySelector('{STAGE}').__stage.figures.figs['{which}'].scale;"
            " return [s.lo, s.hi]; }"
        )

    before = {w: (pixels(w), scale(w)) for w in ("input", "input.b")}
    for op in ("PROD", "MAX"):
        seq = int(page.get_attribute(STAGE, "data-drawn"))
        page.select_option('[data-param="elementwise.operation"]', op)
        page.wait_for_function(f"() => Number(document.querySelector('{STAGE}').dataset.drawn) > {seq}")
        assert {w: (pixels(w), scale(w)) for w in ("input", "input.b")} == before, op
    assert scale("output") == scale("input") and not page.errors
