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


def _pixels(page, which):
    return page.evaluate(f"() => document.querySelector('{STAGE} [data-figure=\"{which}\"] canvas').toDataURL()")


def _scale(page, which):  # the scale the figure was painted on, as the stage holds it
    return page.evaluate(
        f"() => {{ const s = document.querySelector('{STAGE}').__stage.figures.figs['{which}'].scale;"
        " return [s.lo, s.hi]; }"
    )


def _operation(page, op):
    seq = int(page.get_attribute(STAGE, "data-drawn"))
    page.select_option('[data-param="elementwise.operation"]', op)
    page.wait_for_function(f"() => Number(document.querySelector('{STAGE}').dataset.drawn) > {seq}")


def _note(page) -> str:  # why the output's colours are not its operands', under it
    return page.evaluate(
        f"() => document.querySelector('{STAGE} [data-figure=\"output\"] .pg-scale')?.textContent || ''"
    )


def test_a_sums_operands_and_output_carry_one_range_on_the_stage(page):
    """On the page's own example (A −4 … 4, B 1 … 9) a SUM reaches 13: its operands are drawn on the sum's range,
    so a cell is matched across the three figures by eye; a PROD's output keeps its own and says why."""
    page.goto(page.url.split("?")[0])  # SUM, the page's default
    page.wait_for_selector(f'{STAGE}[data-drawn] [data-figure="output"] canvas')
    assert _scale(page, "input") == _scale(page, "input.b") == _scale(page, "output") == [-13, 13]
    assert _note(page) == ""
    _operation(page, "PROD")
    assert _scale(page, "input") == _scale(page, "input.b") == [-9, 9] != _scale(page, "output")
    assert _note(page) == "own scale: a product is of another magnitude" and not page.errors


def test_the_operands_keep_their_colours_among_operations_of_their_own_range_and_max_shares_them(page):
    """PROD, DIV and EQUAL keep their own outputs' scales: the operands' pictures stay as they are; MAX's output,
    whose values are theirs, is drawn on it too."""
    page.goto(page.url.split("?")[0] + "?elementwise.operation=PROD")
    page.wait_for_selector(f'{STAGE}[data-drawn] [data-figure="output"] canvas')
    before = {w: (_pixels(page, w), _scale(page, w)) for w in ("input", "input.b")}
    for op in ("DIV", "EQUAL", "MAX"):
        _operation(page, op)
        assert {w: (_pixels(page, w), _scale(page, w)) for w in ("input", "input.b")} == before, op
    assert _scale(page, "output") == _scale(page, "input") and _note(page) == "" and not page.errors


def test_the_spec_tab_draws_the_documented_output_beside_the_computed_one_with_the_stages_heatmap(page):
    """No Plotly under the stage: the spec's table and the output are the stage's figures (read-only), on one
    range, painted with the stage's colours."""
    page.goto(page.url.split("?")[0] + "?preset=sum_row")
    page.wait_for_selector(f'{STAGE}[data-drawn] [data-figure="output"] canvas')
    page.get_by_role("tab", name="Spec example").click()
    page.wait_for_selector('.pg-still [data-figure="output"] canvas')
    drawn = page.evaluate(
        "() => { const s = document.querySelector('.pg-still').__still;"
        " return Object.values(s.figs).map(f => [f.which, f.scale.lo, f.scale.hi, f.g.cell]); }"
    )
    assert [d[0] for d in drawn] == ["spec", "output"] and drawn[0][1:3] == drawn[1][1:3]
    assert drawn[0][3] >= 22  # cells large enough to carry their numbers, as the stage's
    assert "Spec's output" in page.inner_text('.pg-still [data-figure="spec"] figcaption')
    assert not page.locator(".js-plotly-plot").count() and not page.errors
