"""Every door holds, in the system Chromium: the stage marks the control a refusal names (a text over the cap, an
emptied axis), is not left busy when its server restarts under the page, and a model's node names are listed as
text. Each step waits on what the page writes (data-drawn, aria-invalid, the problem line), not on a fixed time,
except the restart's, which waits out the stage's own retry window (LOST_MS) before it looks."""

from __future__ import annotations

import time

import pytest

from playground.chromium import browser as B
from playground.serve import protocol

pytestmark = pytest.mark.browser
STAGE = ".pg-stage"
LOST_MS = 10_000  # net.js: how long a page whose server is gone asks again before it says so


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def port():
    return B.free_port()


@pytest.fixture(scope="module")
def app(cache, port):
    with B.serve_app(port=port, env={"PLAYGROUND_ENGINE_CACHE": cache}) as url:
        yield url


@pytest.fixture()
def page(browser):
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    yield page
    ctx.close()


def open_stage(page, url):
    page.goto(url)
    page.wait_for_selector(f'{STAGE}[data-drawn] [data-figure="output"] canvas')
    return page


def problem_shown(page):
    page.wait_for_function(f"() => !document.querySelector('{STAGE} .pg-problem').hidden")
    return page.inner_text(f"{STAGE} .pg-problem")


def test_a_text_over_the_cap_marks_the_control_it_was_typed_in(page, app):
    open_stage(page, f"{app}/convolution")
    box = page.locator('[data-param="convolution.kernel"]')
    box.fill("1," * protocol.MAX_TEXT)
    box.press("Enter")
    said = problem_shown(page)
    assert f"convolution.kernel: must be text of at most {protocol.MAX_TEXT} characters" in said
    assert box.get_attribute("aria-invalid") == "true"
    assert "shape (1, 1, 4, 7)" in page.inner_text(f'{STAGE} [data-figure="output"] .pg-stats')  # the last good


def test_an_emptied_axis_box_is_refused_on_its_own_control(page, app):
    open_stage(page, f"{app}/convolution?convolution.stride_nd.w=3")
    exact = page.locator(f'{STAGE} .pg-control[data-name="stride_nd"] .pg-exact').first  # the h axis's box
    exact.fill("")
    exact.dispatch_event("change")
    said = problem_shown(page)
    assert "convolution.stride_nd.h: must be a whole number (it is empty)" in said
    assert page.get_attribute('[data-param="convolution.stride_nd.h"]', "aria-invalid") == "true"
    assert page.get_attribute('[data-param="convolution.stride_nd.w"]', "aria-invalid") != "true"
    assert "shape (1, 1, 4, 3)" in page.inner_text(f'{STAGE} [data-figure="output"] .pg-stats')


def test_onnx_node_names_in_the_listing_stay_text(page, app, tmp_path):
    from test_doors import HOSTILE_NAMES, _prelu_chain

    path = tmp_path / "names.onnx"
    path.write_bytes(_prelu_chain(HOSTILE_NAMES).SerializeToString())
    fetched = []
    page.on("request", lambda r: fetched.append(r.url) if "evil.example" in r.url else None)
    open_stage(page, f"{app}/prelu")
    page.click('[data-testid="stExpandSidebarButton"]')
    page.locator('[data-testid="stSidebar"] [data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
    page.wait_for_selector('[data-testid="stSidebar"] [data-testid="stPageLink"] >> text=PRelu')
    links = [
        t.replace("\u2060", "")
        for t in page.locator(  # the word joiner that keeps a URL from linking itself
            '[data-testid="stSidebar"] [data-testid="stPageLink"]'
        ).all_inner_texts()
    ]
    html = page.inner_html('[data-testid="stSidebar"]')
    assert "evil.example" not in "".join(page.eval_on_selector_all("img", "els => els.map(e => e.src)"))
    assert not fetched and "javascript:" not in "".join(
        page.eval_on_selector_all("a", "els => els.map(e => e.getAttribute('href') || '')")
    )
    assert "<b>bold</b>" not in html and "<strong>bold</strong>" not in html
    assert any("![i](http://evil.example/x.png)" in t for t in links), links
    assert any("[x](javascript:alert(1))" in t for t in links), links


def test_a_stage_whose_server_restarts_is_not_left_busy(browser, cache):
    port = B.free_port()
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.set_default_timeout(90_000)
    try:
        with B.serve_app(port=port, env={"PLAYGROUND_ENGINE_CACHE": cache}) as url:
            open_stage(page, f"{url}/convolution")
            mounted = page.get_attribute(STAGE, "data-mounted-at")
        # The server is gone: a change asks, and asks again, the stage dimmed meanwhile.
        page.focus('[data-param="convolution.stride_nd.h"]')
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"() => document.querySelector('{STAGE}').hasAttribute('data-busy')")
        with B.serve_app(port=port, env={"PLAYGROUND_ENGINE_CACHE": cache}):
            # The page reconnects, runs again and starts its stage afresh on the URL's configuration.
            page.wait_for_function(
                f"() => document.querySelector('{STAGE}').dataset.mountedAt !== '{mounted}'"
                f" && document.querySelector('{STAGE}').dataset.drawn"
            )
            time.sleep(LOST_MS / 1000 + 2)  # the first stage's retries have long given up
            state = page.evaluate(
                f"() => {{ const s = document.querySelector('{STAGE}'); return "
                "{busy: s.hasAttribute('data-busy'), inflight: s.__stage.inflight}; }"
            )
            assert state == {"busy": False, "inflight": None}, state
    finally:
        ctx.close()


@pytest.mark.parametrize("extra, said", [(0, "1 node(s), 1 open as a layer"), (1, "the cap is 67,108,864")])
def test_a_model_of_exactly_64_mib_uploads_and_one_byte_more_is_refused_by_name(page, app, tmp_path, extra, said):
    from test_doors import _model_of_size

    from playground.onnx.reading import MAX_MODEL_BYTES

    path = tmp_path / "cap.onnx"
    path.write_bytes(_model_of_size(MAX_MODEL_BYTES + extra))
    page.goto(app)
    page.wait_for_selector('[data-testid="stFileUploaderDropzoneInput"]', state="attached")
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
    page.wait_for_function(
        "(said) => document.body.innerText.includes(said) || document.body.innerText.includes('or smaller')",
        arg=said,
        timeout=120_000,
    )
    text = page.inner_text("body")
    assert said in text and "or smaller" not in text, text[-2000:]


def test_a_refused_image_upload_keeps_the_stage_drawn(page, app, tmp_path):
    open_stage(page, f"{app}/convolution")
    before = page.inner_text(f'{STAGE} [data-figure="input"] .pg-stats')
    page.click('[data-testid="stExpandSidebarButton"]')
    kind = page.locator(B.key_selector("convolution.input.kind"))
    kind.wait_for(state="visible")
    page.wait_for_timeout(500)  # the drawer's slide: a click during it lands beside the box
    with B.rerun(page):
        kind.click()
        page.get_by_role("option", name="image", exact=True).click()
    bad = tmp_path / "photo.png"
    bad.write_bytes(b"GIF89a this is no PNG")
    with B.rerun(page):
        page.locator('[data-testid="stSidebar"] input[type="file"]').first.set_input_files(str(bad))
    page.wait_for_function("() => document.body.innerText.includes('not a PNG or JPEG image')")
    assert page.locator(f'{STAGE} [data-figure="output"] canvas').count() >= 1  # the stage is still there
    assert page.inner_text(f'{STAGE} [data-figure="input"] .pg-stats') == before
    assert "the stage shows the last good input" in page.inner_text("body")
