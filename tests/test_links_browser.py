"""Links in the system Chromium: the address bar follows the stage within 150 ms of a key press (a held key's sweep
too), the stage's own writes win over a run's stale one, and a link's key the page does not use is marked on its
control and never reaches the link the page offers."""

from __future__ import annotations

import statistics

import pytest

from playground.chromium import browser as B

pytestmark = pytest.mark.browser
STAGE = ".pg-stage"
FOLLOW_MS = 150  # the address bar within this of a key press
# Every write of the address bar and every key press, by the page's clock (installed before the page's scripts).
HOOK = """
window.__writes = []; window.__keys = [];
for (const f of ['pushState', 'replaceState']) {
  const own = history[f].bind(history);
  history[f] = (s, t, u) => { const r = own(s, t, u); window.__writes.push([performance.now(), location.search]); return r; };
}
document.addEventListener('keydown', () => window.__keys.push(performance.now()), true);
"""


@pytest.fixture(scope="module")
def context(browser):
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    ctx.add_init_script(HOOK)
    yield ctx
    ctx.close()


def open_stage(context, app, path):
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{app}/{path}")
    page.wait_for_selector(f'{STAGE}[data-drawn] [data-figure="output"] canvas')
    B.wait_until_idle(page)
    return page


def follow_ms(page, key_at: float, text: str) -> float:
    """How long after the key press at `key_at` the address bar first named `text`."""
    writes = page.evaluate("() => window.__writes")
    return next(t for t, search in writes if t >= key_at and text in search) - key_at


def test_the_address_bar_follows_each_key_press_within_150_ms_and_a_held_keys_sweep_as_it_goes(context, app):
    page = open_stage(context, app, "convolution")
    page.focus('[data-param="convolution.stride_nd.h"]')
    took = []
    for value, key in ((2, "ArrowRight"), (3, "ArrowRight"), (2, "ArrowLeft"), (3, "ArrowRight"), (4, "ArrowRight")):
        page.keyboard.press(key)
        page.wait_for_function("(t) => location.search.includes(t)", arg=f"stride_nd.h={value}")
        took.append(follow_ms(page, page.evaluate("() => window.__keys.at(-1)"), f"stride_nd.h={value}"))
        page.wait_for_timeout(300)
    # (a press the loaded machine's main thread holds up, its frame and all, may miss it: one in five)
    assert statistics.median(took) <= FOLLOW_MS and sum(t <= FOLLOW_MS for t in took) >= 4, took
    # A held key (a press every 40 ms): the address bar follows as it goes, not once the hand lets go
    first = len(page.evaluate("() => window.__keys"))
    for _ in range(8):
        page.keyboard.press("ArrowRight")
        page.wait_for_timeout(40)
    keys = page.evaluate("() => window.__keys")[first:]
    during = [t for t, _ in page.evaluate("() => window.__writes") if keys[0] <= t <= keys[-1]]
    assert len(during) >= 2, (keys, during)
    page.wait_for_function("() => location.search.includes('stride_nd.h=12')")
    page.close()


def test_a_run_that_pushes_a_stale_address_is_overwritten_by_the_stage(context, app):
    page = open_stage(context, app, "convolution")
    page.focus('[data-param="convolution.stride_nd.h"]')
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => location.search.includes('stride_nd.h=2')")
    # as Streamlit's frontend does when a run sets the URL's keys to what the server held (a settle behind the hand)
    page.evaluate("() => history.pushState({}, '', location.pathname)")
    page.click(f"{STAGE} .pg-copy")  # the link copied is the stage's configuration
    assert "stride_nd.h=2" in page.inner_text(f"{STAGE} .pg-url") and "stride_nd.h=2" in page.url
    page.evaluate("() => history.pushState({}, '', location.pathname)")
    page.wait_for_function("() => location.search.includes('stride_nd.h=2')")  # the settle's write: the stage's
    page.close()


def test_a_links_key_the_page_does_not_use_is_marked_and_left_out_of_the_link(context, app):
    page = open_stage(
        context,
        app,
        "resize?resize.resize_mode=CUBIC&resize.scales=64,64&resize.input.H=512&resize.input.W=512&resize.input.C=8",
    )
    scales = page.locator(f'{STAGE} [data-param="resize.scales"]').first
    assert "pg-dropped" in scales.get_attribute("class") and "more than 512" in scales.get_attribute("title")
    link = page.inner_text(f"{STAGE} .pg-url")
    assert "resize.scales" not in link and "resize.input.H=512" in link and "resize.scales" not in page.url
    page.close()
    page = open_stage(context, app, "convolution?convolution.stride_nd=2,2")  # the CLI's spelling
    assert "shape (1, 1, 2, 4)" in page.inner_text(f'{STAGE} [data-figure="output"] .pg-stats')
    link = page.inner_text(f"{STAGE} .pg-url")
    assert "stride_nd.h=2" in link and "stride_nd=" not in link
    page.close()
