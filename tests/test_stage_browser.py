"""The stage in the system Chromium: its contract for tests (data-param on
every control, data-figure and a stats line on every figure), a change answered by the server's route with no
script run, a dragged slider whose output follows the hand and ends on the released value, keys, hover outlines,
the URL written as values change and read back by a fresh page, a refusal named with the last good drawing kept.
Nothing sleeps for a fixed time: each step waits on what the stage writes (data-drawn, data-query)."""

from __future__ import annotations

import json
import re

import pytest

from playground.chromium import browser as B
from playground.layers import LAYERS
from playground.serve import protocol, server

pytestmark = pytest.mark.browser
STAGE = ".pg-stage"


@pytest.fixture(scope="module")
def context(browser):
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    yield ctx
    ctx.close()


def open_stage(context, app, path):
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    page.goto(f"{app}/{path}")
    page.wait_for_selector(f'{STAGE}[data-drawn] [data-figure="output"] canvas')
    return page


def drawn(page) -> int:
    return int(page.get_attribute(STAGE, "data-drawn"))


def query(page) -> dict:
    return json.loads(page.get_attribute(STAGE, "data-query"))


def stats(page, which) -> str:
    return page.inner_text(f'{STAGE} [data-figure="{which}"] .pg-stats')


def wait_url(page, text: str) -> None:
    """The address bar names `text` (the stage writes it a moment after the change)."""
    page.wait_for_function("(t) => location.href.includes(t)", arg=text)


def runs(page) -> int:
    return page.evaluate("() => window.__playgroundRuns.started")


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_every_control_and_figure_keeps_the_contract(context, app, name):
    page = open_stage(context, app, name)
    layer = LAYERS[name]
    shape = layer.example_shape
    keys = set(protocol.query_keys(layer, shape)) | {f"{name}.compare"}
    # a short array's per-value sliders: LAYER.PARAM.INDEX, one per value the schema sends
    values = {
        f"{c['key']}.{i}"
        for c in protocol.controls(layer, layer.defaults(shape), shape)
        for i in range(len(c.get("values") or []))
    }
    params = set(page.eval_on_selector_all(f"{STAGE} [data-param]", "els => els.map(e => e.dataset.param)"))
    assert params <= keys | values and {k.split(".")[1] for k in params} == set(layer.param_names) | {"compare"}
    assert values <= params
    for which in ("input", "output"):
        assert re.match(r"shape \(\d+(, \d+)*\) · min \S+ · max \S+", stats(page, which))
    sliders = page.eval_on_selector_all(
        f'{STAGE} input[type="range"][data-param]',
        "els => els.map(e => [e.getAttribute('aria-label'), e.getAttribute('aria-valuenow')])",
    )
    assert all(label and now is not None for label, now in sliders)
    assert not page.errors
    page.close()


def test_a_key_press_is_one_evaluation_and_its_verdict_a_small_request_after_it(context, app):
    """No quick answer before the full one, no neighbour asked for by the tab (the server builds them ahead): the
    answer, then its engine's verdict and ONNX Runtime's badge."""
    page = open_stage(context, app, "convolution")
    B.wait_until_idle(page)
    page.wait_for_selector(f"{STAGE} [data-onnxruntime]")  # the first answer's badge, asked once it was drawn
    sent = []
    page.on("request", lambda r: sent.append(json.loads(r.post_data)) if r.url.endswith(protocol_route()) else None)
    before = drawn(page)
    page.focus('[data-param="convolution.padding_nd.w"]')
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => Number(document.querySelector('{STAGE}').dataset.drawn) > {before}")
    for _ in range(100):  # the verdict's request follows the answer's
        if len(sent) >= 2:
            break
        page.wait_for_timeout(100)
    B.wait_until_idle(page)
    page.wait_for_timeout(1500)  # past the settle: nothing more is asked while the hand rests
    assert [(m["params"]["convolution.padding_nd.w"], bool(m.get("quick")), bool(m.get("finish"))) for m in sent] == [
        ("1", False, False),
        ("1", False, True),
    ], sent
    assert not page.errors
    page.close()


def protocol_route() -> str:
    from playground.serve import server

    return server.ROUTE


def test_a_key_press_is_answered_by_the_route_without_a_script_run(context, app):
    page = open_stage(context, app, "convolution")
    B.wait_until_idle(page)
    before, started = drawn(page), runs(page)
    page.focus('[data-param="convolution.stride_nd.h"]')
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => Number(document.querySelector('{STAGE}').dataset.drawn) > {before}")
    assert "shape (1, 1, 2, 7)" in stats(page, "output")
    assert runs(page) == started  # drawn before any script run (the settle after it reruns the page's sections)
    page.wait_for_function("() => location.search.includes('convolution.stride_nd.h=2')")  # a moment after the change
    # A step back is drawn from the browser's cache in the key's own handler (its frame the first after the key):
    # by the time the input event reaches the document the figures are drawn; the address bar follows after.
    page.evaluate(
        """(sel) => document.addEventListener('input', () => { window.__atInput = {
             drawn: Number(document.querySelector(sel).dataset.drawn), search: location.search }; }, {once: true})""",
        STAGE,
    )
    before = drawn(page)
    page.keyboard.press("ArrowLeft")
    at_input = page.evaluate("() => window.__atInput")
    assert at_input["drawn"] > before and "stride_nd.h=2" in at_input["search"], at_input
    assert "shape (1, 1, 4, 7)" in stats(page, "output")
    page.wait_for_function("() => !location.search.includes('stride_nd.h')")  # back to the default: the key leaves it
    page.close()


def test_a_dragged_slider_draws_as_the_hand_moves_and_ends_on_the_released_value(context, app):
    page = open_stage(context, app, "convolution")
    slider = page.locator('[data-param="convolution.padding_nd.h"]')
    box = slider.bounding_box()
    y = box["y"] + box["height"] / 2
    before = drawn(page)
    page.mouse.move(box["x"] + 4, y)
    page.mouse.down()
    for i in range(1, 21):
        page.mouse.move(box["x"] + 4 + (box["width"] - 8) * i / 20, y)
        page.wait_for_timeout(40)
    page.mouse.up()
    high = slider.get_attribute("max")
    page.wait_for_function(
        f"() => JSON.parse(document.querySelector('{STAGE}').dataset.query)"
        f"['convolution.padding_nd.h'] === '{high}' && !document.querySelector('{STAGE}')"
        ".hasAttribute('data-busy')"
    )
    assert drawn(page) - before >= 3  # several positions drawn while the thumb moved, not only the last
    assert f"shape (1, 1, {6 + 2 * int(high) - 2}, 7)" in stats(page, "output")
    page.close()


def test_a_change_is_answered_uncompressed(context, app):
    """The app's stage route answers outside Streamlit's gzip (server.Uncompressed): float32 planes gzip barely
    shrinks, at a cost the server's event loop pays for every answer."""
    page = open_stage(context, app, "convolution?convolution.num_output_maps=3")

    def change(r):  # the change's answer, not a follow-up (`finish`) of the page's first one still on its way
        return (
            r.url.endswith(server.ROUTE)
            and r.request.method == "POST"
            and '"finish"' not in (r.request.post_data or "")
        )

    with page.expect_response(change) as answer:
        page.focus('[data-param="convolution.padding_nd.w"]')
        page.keyboard.press("ArrowRight")
    r = answer.value
    assert r.status == 200 and r.headers["content-type"].startswith(protocol.FRAME_TYPE)
    assert int(r.headers["content-length"]) > 1000 and "content-encoding" not in r.headers
    page.close()


def test_hover_outlines_the_window_and_a_click_picks_the_cell(context, app):
    page = open_stage(context, app, "convolution")
    canvas = page.locator(f'{STAGE} [data-figure="output"] canvas').first
    box = canvas.bounding_box()
    blank = page.evaluate(f"() => document.querySelector('{STAGE} [data-figure=input] .pg-overlay').innerHTML")
    page.mouse.move(box["x"] + box["width"] * 0.9, box["y"] + box["height"] * 0.9)
    hovered = page.evaluate(f"() => document.querySelector('{STAGE} [data-figure=input] .pg-overlay').innerHTML")
    assert hovered != blank
    assert "value =" in page.inner_text(f"{STAGE} .pg-tip")
    page.mouse.click(box["x"] + box["width"] * 0.9, box["y"] + box["height"] * 0.9)
    assert page.get_attribute(STAGE, "data-pick") == "0,0,3,6"
    assert page.inner_text(f"{STAGE} .pg-line").startswith("output(0,0,3,6) =")
    page.click(f"{STAGE} .pg-next")
    assert page.get_attribute(STAGE, "data-pick") == "0,0,0,0"  # past the last cell, back to the first
    page.close()


def test_a_slice_outlines_its_region_on_the_input_and_the_region_follows_the_start(context, app, tmp_path):
    """The cells the slice reads are outlined on the input (green, one border around a box of cells) under the
    picked cell's window; a start moved moves the border."""
    page = open_stage(context, app, "slice")
    region = f"{STAGE} [data-figure=input] .pg-overlay path[stroke='#2e7d32']"
    page.wait_for_selector(region, state="attached")
    before = page.get_attribute(region, "d")
    page.screenshot(path=str(tmp_path / "slice.png"))
    seq = drawn(page)
    page.focus('[data-param="slice.start.h"]')
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => Number(document.querySelector('{STAGE}').dataset.drawn) > {seq}")
    page.wait_for_function(f"(b) => document.querySelector(\"{region}\").getAttribute('d') !== b", arg=before)
    page.close()


def complete(page) -> bool:
    return page.evaluate(f"() => Boolean(document.querySelector('{STAGE}').__stage.answer.cells.complete)")


def test_a_changes_windows_follow_its_answer_and_the_inputs_border_waits_for_none_of_them(context, app):
    """A key press's answer has the picked cell's window and the input's padded extent; its follow-up brings every
    window (hover reads them). A follow-up that brings nothing while the page still shows its answer (the server
    remembers another configuration) has the configuration asked again, and that answer's follow-up lands."""
    page = open_stage(context, app, "convolution")
    B.wait_until_idle(page)
    input_width = f"() => document.querySelector('{STAGE} [data-figure=input] canvas').width"
    sent, cut = [], {"left": 1}

    def follow_up(route):  # w 2's first follow-up answered as if the server had moved on; w 3's, every one
        body = json.loads(route.request.post_data)
        w = body["params"]["convolution.padding_nd.w"]
        if body.get("finish") and ((w == "2" and cut["left"]) or w == "3"):
            cut["left"] -= w == "2"
            route.fulfill(status=200, content_type="application/json", body='{"finish": null}')
        else:
            route.continue_()

    page.on("request", lambda r: sent.append(json.loads(r.post_data)) if r.url.endswith(protocol_route()) else None)
    page.route(f"**{protocol_route()}", follow_up)
    for w in ("1", "2"):
        before = drawn(page)
        page.focus('[data-param="convolution.padding_nd.w"]')
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"() => Number(document.querySelector('{STAGE}').dataset.drawn) > {before}")
        width = page.evaluate(input_width)  # drawn with the answer's extent: the follow-up changes no border
        page.wait_for_function(f"() => document.querySelector('{STAGE}').__stage.answer.cells.complete === true")
        assert page.evaluate(input_width) == width and query(page)["convolution.padding_nd.w"] == w
    asked = [(m["params"]["convolution.padding_nd.w"], bool(m.get("finish"))) for m in sent]
    assert asked == [("1", False), ("1", True), ("2", False), ("2", True), ("2", False), ("2", True)], asked
    canvas = page.locator(f'{STAGE} [data-figure="output"] canvas').first
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.9, box["y"] + box["height"] * 0.9)  # a far cell: not the picked
    hover = f"() => document.querySelectorAll('{STAGE} [data-figure=input] .pg-overlay [stroke=\"#0057b8\"]').length"
    assert page.evaluate(hover) > 0  # the hovered cell's window, from the follow-up's map
    assert complete(page) and not page.errors
    before = drawn(page)  # a server that never follows up: the configuration is asked again once, not forever
    page.focus('[data-param="convolution.padding_nd.w"]')
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => Number(document.querySelector('{STAGE}').dataset.drawn) > {before}")
    page.wait_for_timeout(1500)
    asked = [
        (m["params"]["convolution.padding_nd.w"], bool(m.get("finish")))
        for m in sent
        if m["params"].get("convolution.padding_nd.w") == "3"
    ]
    assert asked == [("3", False), ("3", True), ("3", False), ("3", True)], asked
    page.close()


def test_the_pages_menu_follows_the_stages_first_paint_and_moves_nothing(context, app):
    page = context.new_page()
    page.goto(f"{app}/convolution")
    page.wait_for_function(
        f"() => document.querySelector('{STAGE}') && document.querySelector('{STAGE}').dataset.paintedAt"
    )
    box = page.locator(STAGE).bounding_box()
    page.wait_for_selector('[data-testid="stTopNavLink"]')  # the paint's run places the menu
    assert page.locator(STAGE).bounding_box() == box  # in the header: the stage stays where it was painted
    page.click('[data-testid="stTopNavLink"]:has-text("Activation")')  # and it leads to another layer's page
    page.wait_for_selector(f'{STAGE}[data-drawn] [data-param="activation.type"]')
    assert page.locator('[data-testid="stTopNavLink"]').count() > 0
    page.close()


def test_a_link_reopens_the_configuration_and_a_refusal_keeps_the_last_good_drawing(context, app):
    page = open_stage(context, app, "convolution?convolution.stride_nd.w=2&convolution.padding_mode=SAME_UPPER")
    assert query(page)["convolution.stride_nd.w"] == "2" and "shape (1, 1, 6, 5)" in stats(page, "output")
    assert page.input_value('[data-param="convolution.padding_mode"]') == "SAME_UPPER"
    before = drawn(page)
    box = page.locator(f'{STAGE} .pg-control[data-name="num_groups"] .pg-exact')
    box.fill("2")
    box.press("Enter")
    page.wait_for_function(f"() => !document.querySelector('{STAGE} .pg-problem').hidden")
    assert "num_groups" in page.inner_text(f"{STAGE} .pg-problem") and "last valid" in page.inner_text(
        f"{STAGE} .pg-problem"
    )
    assert page.get_attribute('[data-param="convolution.num_groups"]', "aria-invalid") == "true"
    assert "shape (1, 1, 6, 5)" in stats(page, "output") and drawn(page) >= before
    page.close()


def test_an_example_sets_the_input_and_the_parameters_and_states_its_verdict(context, app):
    page = open_stage(context, app, "pooling")
    page.select_option(f'{STAGE} [data-control="example"]', "blend_quarter")
    # the default's verdict may be on the stage already: wait for the example's configuration, then its verdict
    page.wait_for_function(
        f"() => JSON.parse(document.querySelector('{STAGE}').dataset.query || '{{}}')['pooling.blend_factor'] === '0.25'"
    )
    out = f'{STAGE} [data-figure="output"] .pg-stats'
    page.wait_for_function(f"() => (document.querySelector('{out}') || {{}}).innerText?.includes('max 15.375')")
    page.wait_for_function(f"() => document.querySelector('{STAGE} .pg-agrees')")
    assert page.input_value('[data-param="pooling.type"]') == "MAX_AVERAGE_BLEND"
    assert query(page)["pooling.blend_factor"] == "0.25" and "pooling.blend_factor=0.25" in page.url
    assert "shape (1, 1, 2, 2) · min 5.375 · max 15.375" in stats(page, "output")  # six digits, as a cell
    page.close()


def test_compare_mode_adds_the_second_output_and_their_difference(context, app):
    page = open_stage(context, app, "convolution")
    options = "el => [...el.options].map(o => o.value)"
    assert page.eval_on_selector('[data-param="convolution.compare"]', options) == [
        "",
        "TF32",
        "FP16",
        "BF16",
        "INT8",
        "FP8",
    ]
    before = drawn(page)
    page.select_option('[data-param="convolution.compare"]', "FP16")
    page.wait_for_function(f"() => Number(document.querySelector('{STAGE}').dataset.drawn) > {before}")
    figures = page.eval_on_selector_all(f"{STAGE} [data-figure]", "els => els.map(e => e.dataset.figure)")
    assert figures == ["input", "kernel", "output", "compared", "difference"]
    assert "FP32 − FP16" in page.inner_text(f"{STAGE} .pg-precision")
    wait_url(page, "convolution.compare=FP16")
    before = drawn(page)  # the configuration in FP16 compared with FP16 is no comparison: FP32 is offered instead
    page.select_option('[data-param="convolution.precision"]', "FP16")
    page.wait_for_function(f"() => Number(document.querySelector('{STAGE}').dataset.drawn) > {before}")
    assert page.eval_on_selector('[data-param="convolution.compare"]', options) == [
        "",
        "FP32",
        "TF32",
        "BF16",
        "INT8",
        "FP8",
    ]
    page.close()


def test_the_keyboard_skips_the_collapsed_sidebar_and_reaches_the_stage(context, app):
    page = open_stage(context, app, "convolution")
    page.evaluate("() => document.activeElement && document.activeElement.blur()")  # from the top of the page
    stops = []
    for _ in range(20):
        page.keyboard.press("Tab")
        stops.append(
            page.evaluate(
                "() => { const e = document.activeElement; return [e.closest('[data-testid=stSidebar]')"
                " !== null, e.dataset.param || e.dataset.control || ''] }"
            )
        )
    assert not any(in_sidebar for in_sidebar, _ in stops)
    assert any(name for _, name in stops)  # a stage control within 20 stops (the navigation's links first)
    page.close()


def test_the_next_step_of_the_value_moved_last_has_its_engine_built_ahead(context, app):
    """The one neighbour mechanism: the server builds the engines one step either side while the hand rests (the
    tab asks for nothing ahead), so the next step's engine comes from the cache."""
    page = open_stage(context, app, "convolution?convolution.kernel_size_nd.h=1")
    page.focus('[data-param="convolution.padding_nd.w"]')
    page.keyboard.press("ArrowRight")  # padding w 1: the engine of its neighbour 2 is built while the hand rests
    page.wait_for_selector(f'{STAGE} [data-engine="built"], {STAGE} [data-engine="cached"]')
    page.wait_for_timeout(2000)
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        f"() => document.querySelector('{STAGE} [data-figure=output] .pg-stats')"
        ".textContent.includes('shape (1, 1, 6, 11)')"
    )
    page.wait_for_selector(f'{STAGE} [data-engine="cached"]')  # its verdict: found in the cache, not built now
    assert not page.errors
    page.close()


def test_a_link_copied_on_the_presenters_screen_names_the_host_and_reopens_the_configuration(tmp_path, browser):
    with B.serve_app(env={"PLAYGROUND_ENGINE_CACHE": str(tmp_path)}, address="127.0.0.2") as app:
        presenter = browser.new_context(
            viewport={"width": 1280, "height": 720}, permissions=["clipboard-read", "clipboard-write"]
        )
        page = open_stage(presenter, app, "convolution?view.presenter=true&convolution.stride_nd.w=2")
        figure = page.locator(f'{STAGE} [data-figure="output"]').bounding_box()
        page.click(f"{STAGE} .pg-qr-button")
        page.wait_for_selector(f"{STAGE} .pg-qr svg")
        assert page.locator(f'{STAGE} [data-figure="output"]').bounding_box() == figure  # nothing reflowed
        page.keyboard.press("Escape")
        page.click(f"{STAGE} .pg-copy")
        link = page.evaluate("() => navigator.clipboard.readText()")
        assert link.startswith("http://127.0.0.2:") and "convolution.stride_nd.w=2" in link
        room = browser.new_context(viewport={"width": 1280, "height": 720})
        other = room.new_page()
        other.goto(link)
        other.wait_for_selector(f'{STAGE}[data-drawn] [data-figure="output"] canvas')
        assert "shape (1, 1, 4, 4)" in stats(other, "output")
        presenter.close(), room.close()


def test_a_narrow_screen_shows_the_figures_first_and_a_tap_toggles_the_value(app, browser):
    phone = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    page = open_stage(phone, app, "convolution")
    figures = page.locator(f"{STAGE} .pg-figures").bounding_box()
    controls = page.locator(f"{STAGE} .pg-controls").bounding_box()
    assert figures["y"] < controls["y"]
    page.tap(f'{STAGE} [data-figure="input"] .pg-canvas', position={"x": 10, "y": 10})
    assert page.locator(f"{STAGE} .pg-tip").is_visible()
    page.tap(f'{STAGE} [data-figure="input"] .pg-canvas', position={"x": 10, "y": 10})
    assert not page.locator(f"{STAGE} .pg-tip").is_visible()
    phone.close()


def test_a_new_input_from_the_sidebar_starts_the_stage_afresh_on_it(context, app):
    page = open_stage(context, app, "convolution?convolution.stride_nd.w=2")
    page.click('[data-testid="stExpandSidebarButton"]')
    B.type_number(page, "convolution.input.H", 8)
    page.wait_for_function(
        f"() => document.querySelector('{STAGE} [data-figure=input] .pg-stats')"
        ".textContent.startsWith('shape (1, 1, 8, 9)')"
    )
    assert "shape (1, 1, 6, 4)" in stats(page, "output") and query(page)["convolution.stride_nd.w"] == "2"
    before = drawn(page)
    page.focus('[data-param="convolution.stride_nd.h"]')
    page.keyboard.press("ArrowRight")  # the route answers on the new input
    page.wait_for_function(f"() => Number(document.querySelector('{STAGE}').dataset.drawn) > {before}")
    assert "shape (1, 1, 3, 4)" in stats(page, "output")
    assert not page.errors
    page.close()


def test_the_png_button_saves_every_figure_on_one_opaque_picture_named_by_the_configuration(context, app, tmp_path):
    from PIL import Image

    page = open_stage(context, app, "convolution?convolution.stride_nd.h=2&convolution.padding_mode=SAME_UPPER")
    with page.expect_download() as info:
        page.click(f"{STAGE} .pg-png")
    download = info.value
    assert download.suggested_filename == "convolution--stride_nd.h-2--padding_mode-SAME_UPPER.png"
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    img = Image.open(path)
    assert img.mode in ("RGB", "RGBA") and (img.mode == "RGB" or img.getextrema()[3] == (255, 255))
    widths = page.eval_on_selector_all(f"{STAGE} [data-figure] canvas:not(.pg-overlay)", "els => els.map(e => e.width)")
    assert img.size[0] >= sum(widths)  # the input, the kernel and the output side by side, at twice the pixels
    page.close()


@pytest.mark.parametrize("size", ((1280, 720), (1920, 1080), (1000, 700)), ids=lambda s: f"{s[0]}x{s[1]}")
def test_an_open_sidebar_narrows_the_stage_never_covers_it(browser, app, size):
    """Streamlit opens its sidebar beside the page on a screen this wide: the stage lays out in the width left
    (its figures fitted again, one column where it gets narrow), and nothing of it lies under the sidebar."""
    fresh = B.new_context(browser, viewport={"width": size[0], "height": size[1]})  # the sidebar closed
    page = open_stage(fresh, app, "convolution")
    page.click('[data-testid="stExpandSidebarButton"]')
    page.wait_for_selector('[data-testid="stSidebar"][data-collapsed="false"]')
    sidebar = page.locator('[data-testid="stSidebar"]')
    page.wait_for_function(  # its opening slide over, and the figures drawn again for the narrower stage
        "() => { const s = document.querySelector('[data-testid=stSidebar]').getBoundingClientRect();"
        f" const row = document.querySelector('{STAGE} .pg-row');"
        " return s.left === 0 && row.scrollWidth <= row.clientWidth; }",
        polling=100,  # not on animation frames: a page behind another may get none
    )
    edge = sidebar.bounding_box()["x"] + sidebar.bounding_box()["width"]
    assert edge > 200  # it is open
    for part in (STAGE, f"{STAGE} .pg-controls", f'{STAGE} [data-figure="input"] canvas'):
        assert page.locator(part).first.bounding_box()["x"] >= edge, part
    right = page.eval_on_selector_all(
        f"{STAGE} [data-figure]", "els => Math.max(...els.map((e) => e.getBoundingClientRect().right))"
    )
    assert right <= size[0] + 1  # the figures fit the width left
    fresh.close()


def test_a_stage_narrowed_a_little_fits_its_figures_again_rather_than_scroll(browser, app):
    """A sidebar's slide narrows the stage in steps, the last a few pixels past the step the cells were fitted at:
    after a resize the kept cells must fit the width (they are kept through a value change, not a resize)."""
    fresh = B.new_context(browser, viewport={"width": 1280, "height": 720})
    page = open_stage(fresh, app, "convolution")
    page.click('[data-testid="stExpandSidebarButton"]')
    page.wait_for_selector('[data-testid="stSidebar"][data-collapsed="false"]')
    fits = (
        f"() => {{ const row = document.querySelector('{STAGE} .pg-row'); return row.scrollWidth <= row.clientWidth; }}"
    )
    page.wait_for_function(fits, polling=100)
    for width in (1250, 1225, 1200):  # each step within the 40 px a kept size tolerates
        page.set_viewport_size({"width": width, "height": 720})
        page.wait_for_timeout(400)  # the resize observed and drawn
        assert page.evaluate(fits), width
    fresh.close()


def test_a_first_touch_that_adds_planes_fits_the_figures_again_rather_than_scroll(browser, app):
    """Gather's mode ELEMENT → DEFAULT, a newcomer's first touch, turns the output's one plane into three: the cells
    kept through a value change are fitted again for the planes more, and every output plane is in the row's width
    (its last plane was past the window's right edge at 1280 px)."""
    fresh = B.new_context(browser, viewport={"width": 1280, "height": 720})
    page = open_stage(fresh, app, "gather")
    before = drawn(page)
    page.select_option('[data-param="gather.mode"]', "DEFAULT")
    page.wait_for_function(f"() => Number(document.querySelector('{STAGE}').dataset.drawn) > {before}")
    page.wait_for_function(f"() => !document.querySelector('{STAGE}').hasAttribute('data-busy')")
    row = page.evaluate(
        f"""() => {{ const row = document.querySelector('{STAGE} .pg-row'), out = row.querySelector('[data-figure="output"]');
        return {{scroll: row.scrollWidth, width: row.clientWidth, right: row.getBoundingClientRect().right,
                 out: out.getBoundingClientRect().right }}; }}"""
    )
    assert "3, 3, 3" in stats(page, "output"), stats(page, "output")  # three planes of 3 × 3
    assert row["scroll"] <= row["width"] and row["out"] <= row["right"], row
    fresh.close()


def test_the_tabs_under_the_stage_follow_a_change_on_a_page_opened_from_a_link(browser, app):
    """Streamlit's next runs send the query the page loaded with; the settle hands the page the URL the stage wrote,
    so the engine card (and the downloads) are of the configuration on the stage, not of the link's."""
    fresh = B.new_context(browser, viewport={"width": 1280, "height": 720})  # the sidebar closed
    page = open_stage(fresh, app, "convolution?convolution.stride_nd.w=2")
    page.locator(".stMain [data-testid='stTab']", has_text="Engine").click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=stMarkdownContainer] td')]"
        ".some(td => td.textContent.trim() === '(1, 1, 4, 4)')"
    )
    page.focus('[data-param="convolution.stride_nd.h"]')
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=stMarkdownContainer] td')]"
        ".some(td => td.textContent.trim() === '(1, 1, 2, 4)')"
    )
    page.locator(".stMain [data-testid='stTab']", has_text="Downloads").click()  # a run of its own: still the change
    page.get_by_role("tab", name="Engine").click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=stMarkdownContainer] td')]"
        ".some(td => td.textContent.trim() === '(1, 1, 2, 4)')"
    )
    fresh.close()


def test_a_large_configuration_opens_with_its_values_fetched_by_the_route(context, app):
    """Megabytes of tensors do not pass through the page's own messages (one event loop carries every page's): the
    page hands its stage the answer without values, and the stage asks the route for them."""
    page = open_stage(context, app, "activation?activation.input.C=8&activation.input.H=512&activation.input.W=512")
    assert "shape (1, 8, 512, 512)" in stats(page, "output")
    decoded = f"() => document.querySelector('{STAGE}').__stage.data.answer.figures.some(f => f.t !== undefined)"
    assert page.evaluate(decoded) is False and drawn(page) >= 1 and not page.errors
    page.close()
    small = open_stage(context, app, "activation")  # the spec's sizes come with the page
    assert small.evaluate(decoded) is True
    small.close()


def test_every_value_of_a_short_array_has_its_slider_named_by_its_index(context, app):
    page = open_stage(context, app, "prelu")  # the spec's slopes 0.5, 1, 2
    assert [page.input_value(f'{STAGE} input[type="range"][data-param="prelu.slopes.{i}"]') for i in range(3)] == [
        "0.5",
        "1",
        "2",
    ]
    page.focus('[data-param="prelu.slopes.2"]')
    page.keyboard.press("Home")
    page.wait_for_function(
        f"() => JSON.parse(document.querySelector('{STAGE}').dataset.query)['prelu.slopes'].startsWith('0.5,1,')"
    )
    page.close()
    page = open_stage(context, app, "scale?scale.mode=CHANNEL&scale.input.C=3&scale.scale=1,2,3")
    assert page.input_value(f'{STAGE} [data-param="scale.scale.2"]') == "3"
    page.close()


def marked(page) -> list[str]:
    return page.eval_on_selector_all(
        f"{STAGE} [aria-invalid=true], {STAGE} .pg-invalid", "els => els.map(e => e.dataset.param)"
    )


def test_the_red_marks_follow_the_latest_answer(context, app):
    """A refusal marks every axis of its parameter; the answer after a fix of one axis clears them all."""
    page = open_stage(context, app, "convolution")
    page.focus('[data-param="convolution.dilation_nd.h"]')
    page.keyboard.press("End")  # 1 + 32·2 cells on a 6-cell axis
    page.wait_for_function(f"() => !document.querySelector('{STAGE} .pg-problem').hidden")
    assert set(marked(page)) == {"convolution.dilation_nd.h", "convolution.dilation_nd.w"}
    page.keyboard.press("Home")
    page.wait_for_function(f"() => document.querySelector('{STAGE} .pg-problem').hidden")
    assert marked(page) == []
    page.close()


def test_a_slider_snaps_to_what_the_latest_answer_offers(context, app):
    """num_groups offers the common divisors of C and num_output_maps: with C = 4 and 2 output maps, 1 and 2 (the
    page opened offering 1 alone); a control that offers one value is disabled and says the rule its next breaks."""
    page = open_stage(context, app, "convolution?convolution.input.C=4")
    groups = f'{STAGE} .pg-control[data-name="num_groups"] .pg-note'
    assert page.inner_text(groups) == "only 1 fits this configuration: 2 must divide num_output_maps=1"
    assert page.is_disabled('[data-param="convolution.num_groups"]')
    assert page.input_value('[data-param="convolution.num_groups"]') == "1"
    before = drawn(page)
    page.focus('[data-param="convolution.num_output_maps"]')
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"() => Number(document.querySelector('{STAGE}').dataset.drawn) > {before}")
    page.wait_for_function(f"() => document.querySelector('{groups}').textContent === 'offers 1, 2'")
    assert not page.is_disabled('[data-param="convolution.num_groups"]')
    page.focus('[data-param="convolution.num_groups"]')
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        f"() => JSON.parse(document.querySelector('{STAGE}').dataset.query)['convolution.num_groups'] === '2'"
    )
    page.wait_for_function(f"() => !document.querySelector('{STAGE}').hasAttribute('data-busy')")
    assert page.locator(f"{STAGE} .pg-problem").is_hidden()
    wait_url(page, "num_groups=2")
    page.close()
