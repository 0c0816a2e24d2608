"""The chain drawn, in the system Chromium: an arrow from each tensor a layer reads, each engine layer a box around
the figures of the chain layers it computes (Convolution → ReLU: one box around both; Convolution → PReLU: two), and
a hovered cell of the output outlined back to the input."""

from __future__ import annotations

import pytest

from playground.chromium import browser as B

pytestmark = pytest.mark.browser

STAGE = ".pg-stage"


def open_chain(browser, app, query: str, width: int = 1600, height: int = 1000):
    ctx = B.new_context(browser, viewport={"width": width, "height": height}, reduced_motion="reduce")
    page = ctx.new_page()
    page.goto(f"{app}/chain?{query}")
    page.wait_for_selector(f"{STAGE} .pg-row [data-figure] canvas", timeout=120_000)
    return ctx, page


def boxes_after_verdict(page) -> list[dict]:
    """The engine boxes once the builder's verdict is drawn, each with the figures its rectangle holds."""
    page.wait_for_selector(".pg-engine-line:not([data-status='pending'])", timeout=120_000)
    return page.evaluate(
        """() => {
        const inside = (a, b) => a.left <= b.left && a.top <= b.top && a.right >= b.right && a.bottom >= b.bottom;
        const figs = [...document.querySelectorAll('.pg-row [data-figure]')];
        return [...document.querySelectorAll('[data-engine-layer]')].map((el) => {
          const r = el.getBoundingClientRect();
          return { name: el.dataset.engineLayer, fuses: el.dataset.fuses, kernel: el.innerText,
                   holds: figs.filter((f) => inside(r, f.getBoundingClientRect())).map((f) => f.dataset.figure) };
        });
    }"""
    )


def test_relu_fuses_into_the_convolution_one_box_around_both_figures(browser, app):
    ctx, page = open_chain(browser, app, "starter=conv_relu")
    try:
        boxes = boxes_after_verdict(page)
        assert len(boxes) == 1, boxes
        assert boxes[0]["fuses"] == "convolution activation" and boxes[0]["holds"] == ["convolution", "activation"]
        assert boxes[0]["kernel"], boxes  # labelled with the kernel the builder names
        line = page.inner_text(".pg-engine-line")
        assert "tensorrt_rtx" in line and "not full TensorRT's" in line, line
        arrows = page.eval_on_selector_all("[data-arrow]", "els => els.map((e) => e.dataset.arrow)")
        assert sorted(arrows) == ["convolution>activation", "input>convolution"]
    finally:
        ctx.close()


def test_prelu_keeps_its_own_engine_layer_two_boxes(browser, app):
    ctx, page = open_chain(browser, app, "starter=conv_prelu")
    try:
        boxes = boxes_after_verdict(page)
        assert [(b["fuses"], b["holds"]) for b in boxes] == [
            ("convolution", ["convolution"]),
            ("prelu", ["prelu"]),
        ], boxes
    finally:
        ctx.close()


def test_the_residual_sum_reads_the_input_and_the_convolution(browser, app):
    ctx, page = open_chain(browser, app, "starter=conv_residual_relu")
    try:
        page.wait_for_selector("[data-arrow='input>elementwise']", state="attached", timeout=60_000)
        arrows = page.eval_on_selector_all("[data-arrow]", "els => els.map((e) => e.dataset.arrow)")
        assert sorted(arrows) == [
            "convolution>elementwise",
            "elementwise>activation",
            "input>convolution",
            "input>elementwise",
        ]
    finally:
        ctx.close()


def _outlined(page) -> dict:
    """Paths drawn on each figure's overlay, by figure."""
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('.pg-row [data-figure]')].map(
            (f) => [f.dataset.figure, f.querySelectorAll('.pg-overlay path').length]))"""
    )


def test_hovering_the_output_outlines_the_cells_it_reads_back_to_the_input(browser, app):
    ctx, page = open_chain(browser, app, "starter=conv_relu")
    try:
        canvas = page.locator("[data-figure='activation'] canvas")
        box = canvas.bounding_box()
        # the output is 4 × 7: its cell (1, 2), whose convolution window is the input's rows 1-3 and columns 2-4
        page.mouse.move(box["x"] + 1 + 2.5 * (box["width"] - 2) / 7, box["y"] + 1 + 1.5 * (box["height"] - 2) / 4)
        page.wait_for_function("document.querySelector('.pg-row').dataset.traced !== '{}'", timeout=10_000)
        traced = page.evaluate("JSON.parse(document.querySelector('.pg-row').dataset.traced)")
        assert traced == {"convolution": -1, "input": -9}, traced  # its own cell, then the 3 × 3 window
        drawn = _outlined(page)
        assert drawn["input"] > 0 and drawn["convolution"] > 0 and drawn["activation"] > 0, drawn
        # hovering the input: the cells downstream that read it
        inp = page.locator("[data-figure='input'] canvas").bounding_box()
        page.mouse.move(inp["x"] + 1 + 0.5 * (inp["width"] - 2) / 9, inp["y"] + 1 + 0.5 * (inp["height"] - 2) / 6)
        page.wait_for_function("JSON.parse(document.querySelector('.pg-row').dataset.traced).activation > 0")
        assert page.evaluate("JSON.parse(document.querySelector('.pg-row').dataset.traced)") == {
            "convolution": 1,
            "activation": 1,
        }  # the corner cell is read by the first window alone
        # a click picks: its trace stays once the pointer has left the figures
        page.mouse.click(box["x"] + 1 + 2.5 * (box["width"] - 2) / 7, box["y"] + 1 + 1.5 * (box["height"] - 2) / 4)
        page.mouse.move(5, 5)
        page.wait_for_function("document.querySelector('.pg-row').dataset.tracePick === 'activation:0,0,1,2'")
        page.wait_for_function("JSON.parse(document.querySelector('.pg-row').dataset.traced).input === -9")
    finally:
        ctx.close()


def test_two_chains_side_by_side_on_the_same_input_show_what_fused_in_each(browser, app):
    ctx, page = open_chain(browser, app, "starter=conv_relu&compare=conv_prelu")
    try:
        page.wait_for_function("document.querySelectorAll('.pg-stage').length === 2", timeout=120_000)
        page.wait_for_function(
            "[...document.querySelectorAll('.pg-engine-line')].every((l) => l.dataset.status"
            " && l.dataset.status !== 'pending')",
            timeout=120_000,
        )
        stages = page.evaluate(
            """() => [...document.querySelectorAll('.pg-stage')].map((s) => ({
                left: s.getBoundingClientRect().left,
                boxes: [...new Set([...s.querySelectorAll('[data-engine-layer]')].map((b) => b.dataset.fuses))],
                input: s.querySelector("[data-figure='input'] .pg-stats").innerText,
                figures: [...s.querySelectorAll('.pg-row [data-figure]')].map((f) => f.dataset.figure)}))"""
        )
        stages.sort(key=lambda s: s["left"])
        assert stages[0]["boxes"] == ["convolution activation"] and stages[1]["boxes"] == ["convolution", "prelu"]
        assert stages[0]["figures"] == ["input", "convolution", "activation"]
        assert stages[1]["figures"] == ["input", "convolution", "prelu"]
        assert stages[0]["input"] == stages[1]["input"]  # one input for both
        assert stages[1]["left"] > stages[0]["left"] + 300  # two columns
        assert "compare=conv_prelu" in page.url
    finally:
        ctx.close()


def test_a_compared_chain_that_cannot_be_is_named_with_its_rule(browser, app):
    ctx, page = open_chain(browser, app, "starter=conv_relu&compare=nonsense")
    try:
        page.wait_for_selector("text=compare:", timeout=60_000)
        assert "must name a starter chain" in page.inner_text("body")
        assert page.locator(".pg-stage").count() == 1
    finally:
        ctx.close()


def test_a_picked_cell_travels_in_the_link_and_opens_traced(browser, app):
    ctx, page = open_chain(browser, app, "starter=conv_relu&pick=activation:0,0,2,4")
    try:
        page.wait_for_function("JSON.parse(document.querySelector('.pg-row').dataset.traced || '{}').input === -9")
        assert page.evaluate("document.querySelector('.pg-row').dataset.tracePick") == "activation:0,0,2,4"
        canvas = page.locator("[data-figure='convolution'] canvas").bounding_box()
        page.mouse.click(
            canvas["x"] + 1 + 0.5 * (canvas["width"] - 2) / 7, canvas["y"] + 1 + 0.5 * (canvas["height"] - 2) / 4
        )
        page.wait_for_function("location.search.includes('pick=convolution:0,0,0,0')")
        assert "starter=conv_relu" in page.url
    finally:
        ctx.close()


@pytest.mark.parametrize("pick", ["__proto__:1", "activation:99,99,99,99", "input:0,0,0", "nothing:1"])
def test_a_picked_cell_the_chain_has_not_is_dropped(browser, app, pick):
    ctx = B.new_context(browser, viewport={"width": 1600, "height": 1000}, reduced_motion="reduce")
    page, errors = ctx.new_page(), []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{app}/chain?starter=conv_relu&pick={pick}")
        page.wait_for_selector(".pg-engine-line:not([data-status='pending'])", timeout=120_000)
        page.wait_for_timeout(300)
        assert page.evaluate("document.querySelector('.pg-row').dataset.tracePick") == ""
        assert errors == []
    finally:
        ctx.close()
