"""The chain page in the system Chromium: the chain on the stage. Every starter opens with a figure per tensor in
chain order and a control per layer parameter (`KEY.PARAM[.AXIS]`); a convolution's stride dragged redraws every
tensor after it with no script run; a refused edit marks its control and keeps the last good chain; an older link
still opens; the tensors are on the first screen of a 1280 × 720 projector; the layer list changes the chain from
the stage's latest values. Nothing sleeps for a fixed time: each step waits on what the stage writes."""

from __future__ import annotations

import json
import re

import pytest

from playground.chromium import browser as B
from playground.network import chain as C
from playground.network import chains
from playground.serve import chain_address as A
from playground.serve import chainview

pytestmark = pytest.mark.browser
STAGE = ".pg-stage"
STATS = r"shape \(\d+(, \d+)*\) · min \S+ · max \S+"


@pytest.fixture(scope="module")
def context(browser):
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    yield ctx
    ctx.close()


def open_chain(context, app, query: str):
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.goto(f"{app}/chain?{query}")
    page.wait_for_selector(f"{STAGE}[data-drawn] [data-figure] canvas")
    return page


def figures(page) -> list[tuple[str, str]]:
    """(data-figure, its stats line) of every figure, in the page's order."""
    return page.eval_on_selector_all(
        f"{STAGE} [data-figure]", "els => els.map(e => [e.dataset.figure, e.querySelector('.pg-stats').innerText])"
    )


def drawn(page) -> int:
    return int(page.get_attribute(STAGE, "data-drawn"))


def runs(page) -> int:
    return page.evaluate("() => window.__playgroundRuns.started")


def answer(page) -> dict:
    return page.evaluate(
        "() => { const a = document.querySelector('.pg-stage').__stage.answer; return {chain: a.chain, engine: a.engine, finish: a.finish}; }"
    )


@pytest.mark.parametrize("starter", chains.STARTERS, ids=lambda s: s.name)
def test_each_starter_opens_on_the_stage_a_figure_per_tensor_in_order_and_a_control_per_parameter(
    context, app, starter
):
    page = open_chain(context, app, f"starter={starter.name}")
    try:
        address = A.from_query({A.STARTER_KEY: starter.name})
        chain = C.resolve(address.names, address.raw(), chainview.input_of(address).shape)
        shown = figures(page)
        assert [w for w, _ in shown] == [C.INPUT, *chain.keys]  # the output last
        shapes = {C.INPUT: chain.input_shape} | {link.key: link.output_shape for link in chain.links}
        for which, line in shown:
            assert re.match(STATS, line) and f"shape {shapes[which]}" in line, (which, line)
        params = set(page.eval_on_selector_all(f"{STAGE} [data-param]", "els => els.map(e => e.dataset.param)"))
        for c in chainview.controls(chain):  # each layer parameter's control, by its key (an axis's, a value's)
            assert any(p == c["key"] or p.startswith(c["key"] + ".") for p in params), c["key"]
        assert all(p.partition(".")[0] in chain.keys for p in params)
        # the chain drawn around the figures: each layer's sources, as the chain reads them
        said = answer(page)["chain"]["layers"]
        assert said == [
            {"key": link.key, "layer": link.layer.name, "sources": [link.sources[i.name] for i in link.layer.inputs]}
            for link in chain.links
        ]
        assert starter.note[:40] in page.inner_text("body")
        assert not page.errors
    finally:
        page.close()


def test_dragging_a_convolutions_stride_redraws_every_downstream_tensor_with_no_script_run(context, app):
    page = open_chain(context, app, "starter=conv_bn_relu")
    try:
        B.wait_until_idle(page)
        before, started = dict(figures(page)), runs(page)
        slider = page.locator(f'{STAGE} input[type="range"][data-param="convolution.stride_nd.w"]')
        box = slider.bounding_box()
        low, high = (float(slider.get_attribute(a)) for a in ("min", "max"))
        x0, y = box["x"] + 8, box["y"] + box["height"] / 2  # the thumb, at stride 1
        page.mouse.move(x0, y)
        page.mouse.down()
        for i in range(1, 11):  # the hand moves to about stride 3, in steps
            page.mouse.move(x0 + i * (box["width"] - 16) * (2.2 / (high - low)) / 10, y)
        page.mouse.up()
        page.wait_for_function(
            "() => JSON.parse(document.querySelector('.pg-stage').dataset.query)['convolution.stride_nd.w'] !== '1'"
        )
        B.wait_until_idle(page)
        stride = int(json.loads(page.get_attribute(STAGE, "data-query"))["convolution.stride_nd.w"])
        assert stride >= 2
        address = A.from_query({A.STARTER_KEY: "conv_bn_relu", "convolution.stride_nd": f"1,{stride}"})
        chain = C.resolve(address.names, address.raw(), chainview.input_of(address).shape)
        page.wait_for_function(  # the answer of the released value drawn: every tensor after the input at its shape
            "(shapes) => [...document.querySelectorAll('.pg-stage [data-figure]')].slice(1).every("
            "(e, i) => e.querySelector('.pg-stats').innerText.startsWith('shape (' + shapes[i].join(', ') + ')'))",
            arg=[list(link.output_shape) for link in chain.links],
        )
        after = dict(figures(page))
        assert after[C.INPUT] == before[C.INPUT]  # the input stays; every tensor after the convolution is redrawn
        for key in ("convolution", "scale", "activation"):
            assert after[key] != before[key], key
        assert runs(page) == started  # answered by the stage's route, not a run of the page's script
        assert f"convolution.stride_nd.w={stride}" in page.evaluate("() => location.search")
        assert not page.errors
    finally:
        page.close()


def test_a_refused_edit_marks_its_control_and_the_last_good_chain_stays_drawn(context, app):
    page = open_chain(context, app, "starter=conv_relu")
    try:
        before, seq = figures(page), drawn(page)
        exact = page.locator(f'{STAGE} [data-param="convolution.stride_nd.w"] + .pg-exact')
        exact.fill("0")  # a stride of 0: the convolution's rule
        exact.press("Enter")
        page.wait_for_selector(f'{STAGE} [data-param="convolution.stride_nd.w"].pg-invalid')
        problem = page.inner_text(f"{STAGE} .pg-problem")
        assert "convolution.stride_nd" in problem and "the figures show the last good chain" in problem
        assert figures(page) == before and drawn(page) == seq
        exact.fill("2")
        exact.press("Enter")  # a valid value clears the mark and draws the chain
        page.wait_for_function(f"() => Number(document.querySelector('{STAGE}').dataset.drawn) > {seq}")
        assert page.locator(f"{STAGE} .pg-invalid").count() == 0
        assert dict(figures(page))["convolution"].startswith("shape (1, 1, 4, 4)")  # 9 columns, 3 wide, stride 2
        assert not page.errors
    finally:
        page.close()


def test_an_older_chain_link_opens_and_a_fresh_page_reopens_what_the_stage_wrote(context, app):
    page = open_chain(context, app, "layers=convolution,activation&convolution.stride_nd=2,2&activation.type=GELU_ERF")
    try:
        query = json.loads(page.get_attribute(STAGE, "data-query"))
        assert query["convolution.stride_nd.h"] == query["convolution.stride_nd.w"] == "2"
        assert query["activation.type"] == "GELU_ERF"
        seq = drawn(page)
        page.focus(f'{STAGE} [data-param="convolution.padding_nd.w"]')
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"() => Number(document.querySelector('{STAGE}').dataset.drawn) > {seq}")
        page.wait_for_function("() => location.search.includes('convolution.padding_nd.w=1')")
        link, shown = page.url, figures(page)
        assert "convolution.stride_nd=" not in link  # written per axis, as the stage spells it
        again = open_chain(context, app, link.split("?", 1)[1])
        assert figures(again) == shown
        again.close()
    finally:
        page.close()


@pytest.mark.parametrize("query", ["starter=leaky_by_hand&input.shape=1,3,32,32", "starter=conv_bn_relu"])
def test_the_chains_tensors_are_on_the_first_screen_in_presenter_mode_at_1280_by_720(context, app, query):
    page = open_chain(context, app, query + "&view.presenter=true")
    try:
        assert page.locator(f"{STAGE}.pg-presenter").count() == 1
        boxes = page.eval_on_selector_all(
            f"{STAGE} [data-figure] canvas", "els => els.map(e => e.getBoundingClientRect().toJSON())"
        )
        assert len(boxes) == len(figures(page)) and all(b["bottom"] <= 720 and b["right"] <= 1280 for b in boxes)
        assert all(b["width"] > 20 for b in boxes), boxes
        header = page.locator('[data-testid="stHeader"]').bounding_box()
        assert page.locator(f"{STAGE} .pg-title").bounding_box()["y"] >= header["y"] + header["height"]  # not under it
    finally:
        page.close()


def test_the_layer_list_changes_the_chain_from_the_stages_latest_values(context, app):
    page = open_chain(context, app, "layers=convolution,activation")
    try:
        B.wait_until_idle(page)
        seq = drawn(page)
        page.focus(f'{STAGE} [data-param="convolution.stride_nd.h"]')
        page.keyboard.press("ArrowRight")  # stride 2, on the stage only: the page's script has not run
        page.wait_for_function(f"() => Number(document.querySelector('{STAGE}').dataset.drawn) > {seq}")
        expand = page.locator('[data-testid="stExpandSidebarButton"]')
        if expand.count() and expand.first.is_visible():
            expand.first.click()
        down = page.locator('[data-testid="stSidebar"]').get_by_role("button", name="arrow_downward").first
        down.wait_for(state="visible")
        with B.rerun(page):
            down.click()
        page.wait_for_selector(f'{STAGE} [data-figure="convolution"]:nth-child(3)')
        assert [w for w, _ in figures(page)] == [C.INPUT, "activation", "convolution"]
        query = json.loads(page.get_attribute(STAGE, "data-query"))
        assert query["convolution.stride_nd.h"] == "2"  # the value moved on the stage came along
        assert not page.errors
    finally:
        page.close()
