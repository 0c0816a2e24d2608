"""The chain page in the system Chromium: every starter chain opens with its note and its engine at both projector
sizes, normal and presenter, with no error and no traceback; the layer list's buttons change the chain."""

from __future__ import annotations

import re

import pytest

from playground import chains
from playground.chromium import browser as B
from playground.ui.chain import ENGINE_OPEN_PX
from playground.ui.keys import key_selector
from playground.ui.view import SETTLE_MS, VIEWPORT_PROBE

pytestmark = pytest.mark.browser

EXCEPTION = '[data-testid="stException"]'
ERROR = '[data-testid="stAlertContentError"]'


def open_chain(browser, app, query: str, width: int = 1920, height: int = 1080):
    ctx = B.new_context(browser, viewport={"width": width, "height": height}, reduced_motion="reduce")
    page = ctx.new_page()
    page.goto(f"{app}/chain?{query}")
    B.wait_until_idle(page, 120_000)
    said(page, height)
    return ctx, page


def said(page, height: int) -> None:
    """Wait until the page has been drawn knowing the window is `height` tall (the probe holds what it knows)."""
    page.wait_for_selector(f"{key_selector(VIEWPORT_PROBE)} [data-known='{height}']", state="attached")
    B.wait_until_idle(page, 120_000)


@pytest.mark.parametrize("starter", chains.STARTERS, ids=lambda s: s.name)
def test_each_starter_chain_opens_with_its_note_and_its_engine(browser, app, starter):
    ctx, page = open_chain(browser, app, f"starter={starter.name}")
    try:
        assert page.locator(EXCEPTION).count() == 0 and page.locator(ERROR).count() == 0
        body = page.inner_text("body")
        assert starter.title in body and starter.note[:40] in body
        assert "engine layer(s)" in body and "not run here" in body
    finally:
        ctx.close()


@pytest.mark.parametrize("width, height", [(1280, 720), (1920, 1080)])
@pytest.mark.parametrize("presenter", [False, True])
def test_what_fused_and_the_tensors_are_on_the_first_screen_at_projector_sizes(browser, app, width, height, presenter):
    """The engine's line says what fused, over its layers: open where the window has room for them (1920 × 1080),
    folded at 1280 × 720; under it, the first line of tensors is in the window (the figures' plots, what the page is
    for)."""
    query = "starter=leaky_by_hand" + ("&view.presenter=true" if presenter else "")
    ctx, page = open_chain(browser, app, query, width, height)
    try:
        summary = page.locator(".st-key-chain-engine summary")
        assert re.search(
            r"The engine: 4 chain layer\(s\) → 1 engine layer\(s\), fused: scale \+ activation", summary.inner_text()
        )
        box = summary.bounding_box()
        assert box["y"] + box["height"] <= height, box
        opened = page.locator(".st-key-chain-engine details").evaluate("d => d.open")
        assert opened == (height >= ENGINE_OPEN_PX), opened
        if opened:
            assert "__myl_MoveReluMulAddMulAddAdd" in page.locator(".st-key-chain-engine").inner_text()
        plots = [b.bounding_box() for b in page.locator(".st-key-chain-tensors .nsewdrag").all()]
        first = [b for b in plots if abs(b["y"] - plots[0]["y"]) < 1]
        assert len(first) >= 2 and all(b["y"] + b["height"] <= height for b in first), (first, height)
        assert page.locator(EXCEPTION).count() == 0
    finally:
        ctx.close()


def test_the_layer_buttons_change_the_chain(browser, app):
    ctx, page = open_chain(browser, app, "layers=convolution,activation")
    try:
        with B.rerun(page):
            page.get_by_role("button", name="arrow_downward").first.click()
        B.wait_until_idle(page, 120_000)
        assert "layers=activation%2Cconvolution" in page.url or "layers=activation,convolution" in page.url
    finally:
        ctx.close()


@pytest.mark.parametrize("width, height", [(1280, 720), (1920, 1080)])
@pytest.mark.parametrize("presenter", [False, True])
def test_each_layers_buttons_sit_on_its_line(browser, app, width, height, presenter):
    query = "starter=leaky_by_hand" + ("&view.presenter=true" if presenter else "")
    ctx, page = open_chain(browser, app, query, width, height)
    try:
        for i in range(4):
            row = page.locator(f".st-key-chain-layer-{i}")
            name = row.locator('[data-testid="stMarkdown"]').bounding_box()
            buttons = [b.bounding_box() for b in row.locator("button:visible").all()]
            assert len(buttons) == 3, i
            for b in buttons:  # beside the name, its middle within the name's lines
                assert b["x"] >= name["x"] + name["width"] - 1, (i, name, b)
                assert name["y"] <= b["y"] + b["height"] / 2 <= name["y"] + name["height"], (i, name, b)
    finally:
        ctx.close()


@pytest.mark.parametrize("width, height, per_line", [(1280, 720, 2), (1920, 1080, 3)])
def test_the_tensors_keep_a_legible_width(browser, app, width, height, per_line):
    ctx, page = open_chain(browser, app, "starter=leaky_by_hand", width, height)
    try:
        boxes = [b.bounding_box() for b in page.locator(".st-key-chain-tensors > div").all()]
        assert len(boxes) == 5  # the input and four layers
        assert min(b["width"] for b in boxes) >= 320, boxes
        assert sum(abs(b["y"] - boxes[0]["y"]) < 1 for b in boxes) == per_line, boxes
    finally:
        ctx.close()


def _engine_open(page) -> bool:
    return page.locator(".st-key-chain-engine details").evaluate("d => d.open")


def test_a_resize_across_the_engines_height_opens_or_folds_it_and_one_within_a_side_reruns_nothing(browser, app):
    """The window's size is said again where a resize, once settled, crosses the height the engine's layers open
    at: 1080 → 720 folds them, 720 → 1000 opens them again. A resize that stays on one side (1000 → 950, then a
    drag through several heights above it) asks the server for no run."""
    ctx, page = open_chain(browser, app, "starter=leaky_by_hand", 1920, 1080)
    try:
        assert _engine_open(page)
        page.set_viewport_size({"width": 1280, "height": 720})
        said(page, 720)
        assert not _engine_open(page)
        page.set_viewport_size({"width": 1920, "height": 1000})
        said(page, 1000)
        assert _engine_open(page)
        before = B.mark(page)
        for h in (950, ENGINE_OPEN_PX + 40, ENGINE_OPEN_PX, 990):
            page.set_viewport_size({"width": 1600, "height": h})
            page.wait_for_timeout(60)  # a drag: each size held for less than the settling time
        page.set_viewport_size({"width": 1500, "height": 950})
        page.wait_for_timeout(4 * SETTLE_MS)
        assert B.mark(page) == before, "a resize on one side of the engine's height reran the page"
        assert _engine_open(page) and page.locator(f"{key_selector(VIEWPORT_PROBE)} [data-known='1000']").count()
        # a drag that crosses and comes back before it settles says nothing either
        page.set_viewport_size({"width": 1500, "height": 700})
        page.wait_for_timeout(60)
        page.set_viewport_size({"width": 1500, "height": 960})
        page.wait_for_timeout(4 * SETTLE_MS)
        assert B.mark(page) == before
        assert page.locator(EXCEPTION).count() == 0
    finally:
        ctx.close()
