"""The app in the system Chromium: pages load, widgets moved with the keyboard or typed into change
what is drawn, impossible combinations are reported and recovered from, a shared link reproduces
the state, and the snapshot command writes real PNGs.

One app server (with its own empty engine cache), one browser and one browser context for the
module; every page is its own Streamlit session. A layer page is reused by the next test that
needs it only when its text shows it back in its default state, else it is opened afresh (Pages).
Nothing sleeps for a fixed time: every step waits on the app's own run state
(playground.chromium.browser.wait_until_idle / rerun, which read the app's websocket messages).

Widgets are found by Streamlit's `st-key-<widget key>` class (playground.chromium.browser.key_selector; keys:
playground/ui/state.py), numbers by the text the page prints ("Output (1, 1, 2, 4)", the heatmap
stats captions "shape … · min … · max …").
"""
from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest

from playground import numbers, presets
from playground.chromium import browser as B
from playground.trt import launch
from playground.trt.backend import detect
from playground.layers import LAYERS

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["home", *LAYERS]
EXCEPTION = '[data-testid="stException"]'
ALERT = '[data-testid="stAlert"]'
OUTPUT_SHAPE = re.compile(r"Output \((\d+(?:, \d+)*)\)")
VIEWPORT = {"width": 1400, "height": 1000}

# Records, from the first paint on, whether an exception box was ever in the page ("at any time").
EXCEPTION_WATCH_JS = """(() => {
  window.__exceptionBoxes = [];
  const seen = () => document.querySelectorAll('%s').forEach(e => window.__exceptionBoxes.push(e.innerText.slice(0, 500)));
  new MutationObserver(seen).observe(document, {subtree: true, childList: true});
})();""" % EXCEPTION
# The output heatmap's values, as drawn (the canvas component keeps its spec on its element).
OUTPUT_FIGURE_JS = """() => {
  const el = (%s)();
  return el && el.spec ? JSON.stringify(el.spec.panels.map(p => p.values)) : null;
}""" % B.OUTPUT_PLOT_JS


# -- fixtures ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def engine_cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("engine_cache")


@pytest.fixture(scope="module")
def app(engine_cache_dir):
    with B.serve_app(env={"PLAYGROUND_ENGINE_CACHE": str(engine_cache_dir)}) as url:
        yield url


@pytest.fixture(scope="module")
def chrome():
    if B.chromium_path() is None:
        pytest.fail("no system Chromium (chromium / chromium-browser on PATH): the browser tests need it; "
                    "scripts/test.sh installs it with apt-get install chromium", pytrace=False)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.fail("Playwright (Python) is not installed: pip install -r requirements.txt", pytrace=False)
    with B.chromium() as browser:
        yield browser


class Pages:
    """Pages of one browser context (its HTTP cache keeps the app's scripts between pages). A layer
    page, once loaded, is kept for the next test that asks for it in its default state (reloaded
    if a test left it otherwise: the check is the page's own text); fresh() pages are not kept.
    Every page records whether an exception box ever showed and any uncaught JavaScript error."""

    def __init__(self, context, app: str):
        self.context, self.app = context, app
        self.kept: dict[str, tuple] = {}  # name -> (page, its text in the default state)
        self.errors: dict = {}  # page -> uncaught JavaScript errors

    def fresh(self):
        page = self.context.new_page()
        page.set_default_timeout(30_000)
        self.errors[page] = []
        page.on("pageerror", lambda exc: self.errors[page].append(str(exc)))
        return page

    def layer(self, name: str):
        """The page `name` in its default state."""
        if name in self.kept:
            page, default = self.kept[name]
            if not page.is_closed() and default_state(page) == default:
                return page
            page.close()
        page = open_page(self.fresh(), self.app, name)
        self.kept[name] = (page, default_state(page))
        return page

    def problems(self) -> list[str]:
        """Exception boxes and JavaScript errors since the last call."""
        out = []
        for page, errors in self.errors.items():
            if not page.is_closed():
                out += [f"exception box at {page.url}: {b}" for b in page.evaluate(
                    "() => (window.__exceptionBoxes || []).splice(0)")]
            out += [f"JavaScript error at {page.url}: {e}" for e in errors]
            errors.clear()
        return out


@pytest.fixture(scope="module")
def pool(chrome, app):
    context = B.new_context(chrome, viewport=VIEWPORT, reduced_motion="reduce")
    context.add_init_script(EXCEPTION_WATCH_JS)
    yield Pages(context, app)
    context.close()


@pytest.fixture
def pages(pool):
    """The module's pages; after the test: no exception box ever shown, no JavaScript error, and the
    test's fresh pages closed."""
    before = set(pool.errors)
    yield pool
    problems = pool.problems()
    for page in set(pool.errors) - before:
        if all(page is not kept for kept, _ in pool.kept.values()):
            page.close()
            del pool.errors[page]
    assert not problems, "\n".join(problems)


# -- helpers ----------------------------------------------------------------------------------
def open_page(page, app: str, name: str):
    page.goto(f"{app}/{'' if name == 'home' else name}")
    B.wait_until_idle(page)
    assert page.locator(EXCEPTION).count() == 0, page.locator(EXCEPTION).first.inner_text()
    return page


def main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def output_shape(page) -> str | None:
    m = OUTPUT_SHAPE.search(main_text(page))
    return m.group(0) if m else None


def stats_captions(page) -> list[str]:
    """The heatmaps' stats captions, input first: "shape (1, 1, 3, 3) · min -4 · max 4 · …"."""
    return page.evaluate(B.STATS_CAPTIONS_JS)


def output_stats(page) -> str:
    captions = stats_captions(page)
    assert len(captions) >= 2, f"expected the input's and the output's stats captions, found {captions}"
    return captions[-1]  # the stage draws input, (kernel,) output


def default_state(page) -> tuple:
    return output_shape(page), tuple(stats_captions(page)), tuple(alerts(page))


def widget(page, key: str):
    loc = page.locator(B.key_selector(key))
    assert loc.count() == 1, f"no single element with the class of widget key {key!r} ({B.key_selector(key)})"
    return loc


def slider_keys(page, key: str, *keys: str) -> None:
    """Focus the slider's thumb and press keys, waiting for the run each one triggers."""
    thumb = widget(page, key).get_by_role("slider")
    thumb.focus()
    for k in keys:
        with B.rerun(page):
            page.keyboard.press(k)


def open_tab(page, name: str) -> None:
    """Click a tab by name; the sidebar's (Input, View) after opening the sidebar, which starts closed."""
    expand = page.locator('[data-testid="stExpandSidebarButton"]')
    if name in ("Input", "View") and expand.count() and expand.first.is_visible():
        expand.first.click()
        page.locator('[data-testid="stSidebar"]').get_by_role("tab", name=name).wait_for(state="visible")
    page.get_by_role("tab", name=name, exact=True).first.click()


def alerts(page) -> list[str]:
    return [t.strip() for t in page.locator(f'[data-testid="stMain"] {ALERT}, [data-testid="stSidebar"] {ALERT}').all_inner_texts()]


# -- tests ------------------------------------------------------------------------------------
def test_the_app_server_starts_with_the_allocator_settings(app):
    """As scripts/start.sh starts it (playground.trt.launch): the builds these tests wait for are the app's."""
    environ = dict(e.split("=", 1) for e in Path(f"/proc/{app.pid}/environ").read_text().split("\0") if "=" in e)
    assert set(launch.TUNABLES) <= set(environ.get(launch.VARIABLE, "").split(":"))


@pytest.mark.parametrize("name", PAGES)
def test_page_loads_without_exception_and_names_backend(pages, name):
    page = pages.layer(name)
    text = main_text(page)
    backend = detect()
    assert backend.name in text, f"the backend {backend.name!r} is not named on {name}"
    if name == "home":
        assert "Backend" in text and "Builds engines" in text
    else:
        assert LAYERS[name].title in text
        x = tuple(LAYERS[name].example_shape)
        assert f"Input {x} → Output (" in text
        assert len(stats_captions(page)) >= 2
        assert page.evaluate(OUTPUT_FIGURE_JS), "no output heatmap drawn"


def test_slider_keyboard_changes_value_caption_and_heatmap(pages):
    page = pages.layer("leaky_relu")  # alpha: slider -2..2 step 0.01, default 0.1; input -4..4
    thumb_value = widget(page, "leaky_relu.alpha").locator('[data-testid="stSliderThumbValue"]')
    assert thumb_value.inner_text().strip() == "0.10"
    stats0, fig0 = output_stats(page), page.evaluate(OUTPUT_FIGURE_JS)
    assert "min -0.4 " in stats0 + " ", stats0

    slider_keys(page, "leaky_relu.alpha", "ArrowRight")
    assert thumb_value.inner_text().strip() == "0.11"
    stats1, fig1 = output_stats(page), page.evaluate(OUTPUT_FIGURE_JS)
    assert "min -0.44 " in stats1 + " ", stats1
    assert fig1 != fig0, "the output heatmap's data did not change"

    slider_keys(page, "leaky_relu.alpha", "End")
    assert thumb_value.inner_text().strip() == "2.00"
    assert "min -8 " in output_stats(page) + " ", output_stats(page)
    assert page.evaluate(OUTPUT_FIGURE_JS) not in (fig0, fig1)


def test_per_axis_stride_slider_changes_output_shape(pages):
    page = pages.layer("convolution")
    assert output_shape(page) == "Output (1, 1, 4, 7)"
    slider_keys(page, "convolution.stride_nd.h", "ArrowRight")
    assert output_shape(page) == "Output (1, 1, 2, 7)"
    assert output_stats(page).startswith("shape (1, 1, 2, 7)")
    slider_keys(page, "convolution.stride_nd.h", "ArrowLeft")  # back to the default, for the next test
    assert output_shape(page) == "Output (1, 1, 4, 7)"


def test_a_change_redraws_the_controls_it_bounds(pages):
    """A change reruns the stage and only the controls it changes: padding widens the kernel size slider's range
    (the kernel fits within the padded input) while the stage shows the new output."""
    page = pages.layer("convolution")  # H = 6, kernel 3
    kernel = widget(page, "convolution.kernel_size_nd.h").get_by_role("slider")  # an <input type="range">
    assert kernel.get_attribute("max") == "6"
    slider_keys(page, "convolution.padding_nd.h", "ArrowRight")
    assert kernel.get_attribute("max") == "8"
    assert output_shape(page) == "Output (1, 1, 6, 7)"
    slider_keys(page, "convolution.padding_nd.h", "ArrowLeft")  # back to the default, for the next test
    assert kernel.get_attribute("max") == "6"
    assert output_shape(page) == "Output (1, 1, 4, 7)"


def test_impossible_combination_is_named_and_page_recovers(pages):
    page = pages.layer("convolution")  # H = 6, kernel 3
    before_stats = output_stats(page)
    slider_keys(page, "convolution.dilation_nd.h", "End")  # 1 + 16·2 = 33 cells on a 6-cell axis
    shown = alerts(page)
    assert any("dilation_nd" in a and "last valid configuration" in a for a in shown), f"no error naming dilation_nd: {shown}"
    assert page.locator(EXCEPTION).count() == 0
    assert output_shape(page) == "Output (1, 1, 4, 7)"  # the last valid result stays on screen

    slider_keys(page, "convolution.dilation_nd.h", "Home")  # undone
    assert widget(page, "convolution.dilation_nd.h").get_by_role("slider").get_attribute("aria-valuetext") == "1"
    shown = alerts(page)
    assert not any("dilation_nd" in a for a in shown), f"the error stayed after the fix: {shown}"
    assert output_shape(page) == "Output (1, 1, 4, 7)"
    assert output_stats(page) == before_stats
    # and it still answers
    slider_keys(page, "convolution.stride_nd.h", "ArrowRight")
    assert output_shape(page) == "Output (1, 1, 2, 7)"
    slider_keys(page, "convolution.stride_nd.h", "ArrowLeft")


def test_shared_link_reproduces_state(pages):
    """Contract (URL-bound state, Streamlit bind="query-params"): the query parameter is the widget
    key, e.g. ?convolution.stride_nd.h=2, and opening that URL in a new session shows the same."""
    page = pages.fresh()
    open_page(page, pages.app, "convolution")
    slider_keys(page, "convolution.stride_nd.h", "ArrowRight")
    assert output_shape(page) == "Output (1, 1, 2, 7)"
    try:
        page.wait_for_function("() => location.search.length > 1", timeout=5_000)
    except Exception:
        pass
    query = urllib.parse.urlsplit(page.url).query
    assert query, (f"changing convolution stride h left the URL without a query string ({page.url}): "
                   "URL-bound widget state (bind='query-params') has not landed")
    other = pages.fresh()
    other.goto(page.url)
    B.wait_until_idle(other)
    assert other.locator(EXCEPTION).count() == 0
    assert output_shape(other) == "Output (1, 1, 2, 7)", f"{page.url} did not reproduce the stride"
    assert output_stats(other) == output_stats(page)
    assert widget(other, "convolution.stride_nd.h").get_by_role("slider").get_attribute("aria-valuetext") == "2"
    params = urllib.parse.parse_qs(query)
    assert params.get("convolution.stride_nd.h") == ["2"], f"query parameters not named by widget key: {params}"


def test_spec_example_with_another_input_redraws_the_input_controls(pages):
    """A parameter change reruns only the parameters and results; a spec example that also sets the input
    (num_groups needs C = 2) runs the whole page, so the Input tab shows the example's shape."""
    page = pages.fresh()
    page.goto(f"{pages.app}/convolution")
    B.wait_until_idle(page)
    example = presets.find("convolution", "num_groups_2")
    assert example.input["shape"] == (1, 2, 6, 9)
    box = widget(page, "convolution.preset").get_by_role("combobox")
    box.click()
    box.fill("num_groups")  # the list draws only the options in view
    with B.rerun(page):
        page.get_by_role("option", name=example.title).click()
    B.wait_until_idle(page)
    assert f"Input (1, 2, 6, 9) → Output {example.expected.shape}" in main_text(page)
    assert not any("num_groups" in a for a in alerts(page)), alerts(page)
    open_tab(page, "Input")
    assert widget(page, "convolution.input.C").locator("input").input_value() == "2"
    page.wait_for_function("() => new URLSearchParams(location.search).get('convolution.input.C') === '2'",
                           timeout=5_000)


def test_preset_link_then_a_parameter_change_gives_a_link_without_the_preset(pages):
    """?preset=NAME is applied once; the first change after it writes the example's values into the URL and
    drops `preset`, so the link then reproduces the changed page, not the example."""
    from playground import core

    example = presets.find("convolution", "num_groups_2")
    strided = core.evaluate("convolution", {**example.params, "stride_nd": "2,1"}, presets.input_for(example),
                            run=False).output.shape
    page = pages.fresh()
    page.goto(f"{pages.app}/convolution?preset=num_groups_2")
    B.wait_until_idle(page)
    assert "Input (1, 2, 6, 9)" in main_text(page)
    slider_keys(page, "convolution.stride_nd.h", "ArrowRight")
    B.wait_until_idle(page)
    assert output_shape(page) == f"Output {strided}"
    # The URL is written in steps (the example's values, the slider's own): wait for the last, not just `preset` gone.
    page.wait_for_function("() => { const q = new URLSearchParams(location.search); "
                           "return !q.has('preset') && q.get('convolution.stride_nd.h') === '2'; }", timeout=5_000)
    params = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)
    assert params.get("convolution.input.C") == ["2"] and params.get("convolution.stride_nd.h") == ["2"], params
    other = pages.fresh()
    other.goto(page.url)
    B.wait_until_idle(other)
    assert output_shape(other) == f"Output {strided}" and "Input (1, 2, 6, 9)" in main_text(other)
    assert output_stats(other) == output_stats(page)


# Page coordinates of output cell (slice i, h, w)'s centre on a heatmap element.
CELL_CENTRE_JS = "([el, i, h, w]) => el.cellCentre(i, h, w)"
# The cells outlined on the input heatmap (the picked cell's window): [h, w] of each.
INPUT_WINDOW_JS = """() => {
    const el = document.querySelector('[class*="-figure-input"] .pg-heatmap');
    return el.spec.panels.flatMap(p => p.outlines.map(([h, w]) => [h, w]));
}"""


def test_clicking_an_output_cell_picks_it_and_outlines_its_window(pages):
    """A click on a cell of the output heatmap sets the cell index inputs, the Σ of that cell, and
    the outlined window on the input heatmap."""
    from playground import core

    page = pages.fresh()
    page.goto(f"{pages.app}/convolution?convolution.num_output_maps=2")
    B.wait_until_idle(page)
    y = core.evaluate("convolution", {"num_output_maps": 2}).reference
    output = page.evaluate_handle(B.OUTPUT_PLOT_JS)
    for k, h, w in ((1, 2, 5), (0, 3, 1)):
        page.locator('[class*="-figure-output"]').scroll_into_view_if_needed()
        x, yy = page.evaluate(CELL_CENTRE_JS, [output, k, h, w])
        with B.rerun(page):
            page.mouse.click(x, yy)
        line = widget(page, "convolution.extra.cell").inner_text()  # beside the heatmaps: products and Σ
        assert f"output(0, {k}, {h}, {w}) = " in line and line.endswith(f"= {numbers.precise(y[0, k, h, w])}"), line
        values = [widget(page, f"convolution.extra.{n}").locator("input").input_value() for n in "khw"]
        assert values == [str(k), str(h), str(w)]
        window = {tuple(c) for c in page.evaluate(INPUT_WINDOW_JS)}
        assert window == {(h + i, w + j) for i in range(3) for j in range(3)}
        output = page.evaluate_handle(B.OUTPUT_PLOT_JS)  # the chart is drawn anew after each change


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    length, chunk = struct.unpack(">I4s", data[8:16])
    assert chunk == b"IHDR" and length == 13, f"{path}: no IHDR chunk first"
    return struct.unpack(">II", data[16:24])



def test_a_stage_heatmap_shows_a_cells_value_on_hover_and_downloads_as_a_png(pages, tmp_path):
    """The canvas heatmaps keep what Plotly gave: the hovered cell's index and exact value, and a PNG (at twice
    the screen's pixels, named after the page and figure)."""
    from playground import core

    page = open_page(pages.fresh(), pages.app, "convolution")
    y = core.evaluate("convolution", {}).reference
    output = page.evaluate_handle(B.OUTPUT_PLOT_JS)
    x, yy = page.evaluate(CELL_CENTRE_JS, [output, 0, 2, 5])
    page.mouse.move(x, yy, steps=3)
    tip = page.locator('[class*="-figure-output"] .pg-tip')
    tip.wait_for(state="visible", timeout=5_000)
    assert tip.inner_text().splitlines() == ["n=0, c=0, h=2, w=5", f"value = {y[0, 0, 2, 5]:.7g}"]
    with page.expect_download() as info:
        page.locator('[class*="-figure-output"] .pg-png').click()
    assert info.value.suggested_filename == "convolution_output.png"
    path = tmp_path / "output.png"
    info.value.save_as(path)
    width, height = page.evaluate("(el) => [el.spec.width, el.spec.height]", output)
    assert png_size(path) == (2 * width, 2 * height)

def _snapshot(out: Path, cache: Path, *args: str) -> None:
    env = {**os.environ, "PLAYGROUND_ENGINE_CACHE": str(cache)}
    r = subprocess.run([sys.executable, "-m", "playground", "snapshot", "--out", str(out), *args],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]


def test_snapshot_command_writes_pngs_and_index(tmp_path, engine_cache_dir):
    out, width, height = tmp_path / "shots", 1024, 700
    _snapshot(out, engine_cache_dir, "--pages", "home", "convolution", "--width", str(width), "--height", str(height),
              "--full-page")
    index = (out / "index.md").read_text()
    for name in ("home", "convolution"):
        png = out / f"{name}.png"
        w, h = png_size(png)
        assert w == width, f"{png}: {w} px wide, asked for {width}"
        assert h >= height, f"{png}: {h} px high, less than the {height} px viewport"
        assert png.stat().st_size > 10_000, f"{png} is suspiciously small ({png.stat().st_size} bytes)"
        assert f"({png.name})" in index, f"index.md does not link {png.name}"


def test_snapshot_frames_the_figures_with_the_output_and_the_link_options(tmp_path, engine_cache_dir):
    """By default a layer page's picture is its figures (the instrument stage's): narrower than the window, never
    taller than it, and it holds the output heatmap (the output's colours are in it)."""
    from PIL import Image

    out = tmp_path / "stage"
    _snapshot(out, engine_cache_dir, "--pages", "activation", "--presets", "convolution:stride_nd_2_2",
              "--query", "hide=title")
    for name in ("activation", "convolution--stride_nd-2-2"):  # named by its configuration
        w, h = png_size(out / f"{name}.png")
        assert w <= 1920 and 200 < h <= 1080, (name, w, h)
    # the activation's output (RELU of the spec's ramp) has its zeros drawn white in the diverging scale, and
    # its picture ends under the figures: far less than a screen high
    import numpy as np

    img = np.asarray(Image.open(out / "activation.png").convert("RGB"))
    assert img.shape[0] < 800, img.shape
    whites = int((img == (247, 247, 247)).all(axis=-1).sum())
    assert whites > 500, "the output heatmap's zero cells are not in the picture"


def test_snapshot_figures_at_2x_hold_no_control_cut_nothing_are_opaque_and_repeat_to_the_byte(tmp_path,
                                                                                               engine_cache_dir):
    """Two pages and one lesson at twice the pixels, cropped to their figures: no control in the picture, every
    figure inside it, every pixel opaque, and the same state written twice gives the same bytes."""
    import json

    from PIL import Image

    args = ("--pages", "pooling", "softmax", "--presets", "activation:int8_tie", "--scale", "2")
    _snapshot(tmp_path / "a", engine_cache_dir, *args)
    _snapshot(tmp_path / "b", engine_cache_dir, *args)
    shots = json.loads((tmp_path / "a" / "shots.json").read_text())
    assert len(shots) == 3 and "activation--" in " ".join(shots)
    for name, record in shots.items():
        clip = record["clip"]
        img = Image.open(tmp_path / "a" / name)
        assert img.size == (round(2 * clip["width"]), round(2 * clip["height"])), (name, img.size, clip)
        assert img.mode in ("RGB", "RGBA") and (img.mode == "RGB" or img.getextrema()[3] == (255, 255))
        inside = lambda b: (b["x"] >= clip["x"] and b["y"] >= clip["y"] and b["x"] + b["width"] <= clip["x"] +  # noqa: E731
                            clip["width"] and b["y"] + b["height"] <= clip["y"] + clip["height"])
        overlaps = lambda b: not (b["x"] + b["width"] <= clip["x"] or b["x"] >= clip["x"] + clip["width"] or  # noqa: E731
                                  b["y"] + b["height"] <= clip["y"] or b["y"] >= clip["y"] + clip["height"])
        assert {f["which"] for f in record["figures"]} >= {"input", "output"}
        assert all(inside(f) for f in record["figures"]), name
        assert not any(overlaps(c) for c in record["controls"]), name
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), f"{name} differs"
    index = (tmp_path / "a" / "index.md").read_text()
    assert "python -m playground run activation --set type=CLIP" in index and "?preset=int8_tie" in index
    assert "rounds to ±33 steps" in index  # the lesson's own note, as the caption and the alt text


def test_snapshot_on_a_dark_background_is_dark_opaque_and_keeps_its_text_light(tmp_path, engine_cache_dir):
    """--background dark: every pixel opaque, the margin dark, and the captions drawn light on it (dark text on
    a dark page would vanish in dark-mode docs)."""
    import numpy as np
    from PIL import Image

    _snapshot(tmp_path, engine_cache_dir, "--pages", "softmax", "--background", "dark")
    img = np.asarray(Image.open(tmp_path / "softmax.png").convert("RGBA")).astype(int)
    assert (img[..., 3] == 255).all()
    light = img[..., :3].mean(axis=-1)
    assert (light[[0, 0, -1, -1], [0, -1, 0, -1]] < 60).all(), "the margin is not dark"
    bottom = light[-40:-12]  # the captions' last line (the stats) lies in the picture's bottom margin
    assert (bottom > 180).sum() > 50 and (bottom < 60).mean() > 0.5, "no light caption text on the dark margin"


def test_uploads_broken_or_real_images(pages, tmp_path):
    """An upload that is no image is named and refused; a real PNG becomes the input; the page serves on."""
    import io

    from PIL import Image

    page = pages.fresh()
    open_page(page, pages.app, "activation")
    open_tab(page, "Input")
    kind = widget(page, "activation.input.kind")
    with B.rerun(page):
        kind.click()
        page.get_by_role("option", name="image", exact=True).click()
    uploader = page.locator('[data-testid="stSidebar"] input[type="file"]')
    (tmp_path / "notes.png").write_bytes(b"this is text, not a PNG")
    with B.rerun(page):
        uploader.set_input_files(str(tmp_path / "notes.png"))
    assert any(a.startswith("upload:") or "upload:" in a for a in alerts(page)), alerts(page)
    assert page.locator(EXCEPTION).count() == 0

    png = io.BytesIO()
    Image.new("RGB", (40, 20), (255, 0, 0)).save(png, format="PNG")
    (tmp_path / "red.png").write_bytes(png.getvalue())
    with B.rerun(page):
        uploader.set_input_files(str(tmp_path / "red.png"))
    assert not any("upload:" in a for a in alerts(page)), alerts(page)
    assert output_shape(page) == "Output (1, 1, 3, 3)"  # resized to the chosen H × W
    assert stats_captions(page)[0].startswith("shape (1, 1, 3, 3) · min 0.29")  # red's luminance, 76/255


# -- the stage: one screen per layer ----------------------------------------------------------------
SCREENS = ((1280, 720), (1920, 1080))


def _stage_parts(layer: str) -> dict[str, str]:
    """What must be on screen together: the controls, the figures (their drawings: the stats caption under each may
    run below), the shape line and the source badge."""
    figure = lambda which: B.key_selector(f"{layer}.figure.{which}") + " .pg-heatmap"  # noqa: E731
    parts = {"controls": B.key_selector(f"ctl.{layer}.parameters"), "input": figure("input"),
             "output": figure("output"), "shape line and badge": B.key_selector(f"{layer}.headline")}
    if LAYERS[layer].stage_tensors:
        parts["kernel"] = figure("kernel")
    return parts


def _off_screen(page, size: tuple[int, int], layer: str, demonstrated: str | None = None) -> list[str]:
    w, h = size
    out = []
    for name, selector in _stage_parts(layer).items():
        box = page.locator(selector).first.bounding_box()
        if box is None or box["x"] < 0 or box["y"] < 0 or box["x"] + box["width"] > w + 1 \
                or box["y"] + box["height"] > h + 1:
            out.append(f"{name}: {box}")
    if demonstrated:  # the parameter a spec example demonstrates: within the controls panel's visible box
        panel = page.locator(B.key_selector(f"ctl.{layer}.parameters")).bounding_box()
        box = page.locator(B.key_selector(f"ctl.{layer}.{demonstrated}")).bounding_box()
        if box is None or box["y"] < panel["y"] - 1 or box["y"] + min(box["height"], 80) > panel["y"] + panel["height"] + 1:
            out.append(f"{demonstrated} (demonstrated) {box} outside the panel {panel}")
    return out


@pytest.mark.parametrize("size", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_layer_page_and_spec_example_fits_one_screen(chrome, app, size):
    """Without scrolling: the controls, input, (kernel,) output, the shape line and the source badge, on every
    layer page, normal and presenter, default and every spec example (each example's demonstrated parameter
    scrolled into the controls panel)."""
    from playground.ui import workshop

    context = B.new_context(chrome, viewport={"width": size[0], "height": size[1]}, reduced_motion="reduce")
    page = context.new_page()
    problems = []
    try:
        for layer in LAYERS:
            urls = [(f"{layer}", None), (f"{layer}?view.presenter=true", None)]
            urls += [(f"{layer}?preset={p.name}", workshop.demonstrated(LAYERS[layer], p))
                     for p in presets.PRESETS.get(layer, [])]
            for url, demonstrated in urls:
                page.goto(f"{app}/{url}")
                B.wait_until_idle(page)
                for _ in range(12):  # the panel scrolls to the demonstrated parameter once drawn
                    found = _off_screen(page, size, layer, demonstrated)
                    if not found:
                        break
                    page.wait_for_timeout(250)
                problems += [f"{url}: {p}" for p in found]
    finally:
        context.close()
    assert not problems, f"{len(problems)} parts off the {size[0]}×{size[1]} screen:\n" + "\n".join(problems)


def _slider_keys_of(layer) -> list[str]:
    """The widget keys that must be sliders: every number (per spatial axis for per-axis ones; a single-valued
    array's one value)."""
    from playground.ui.widgets import SLIDE, SLIDER_MAX_STEPS

    keys = []
    for p in layer.params:
        k = f"{layer.name}.{p.name}"
        if p.kind == "int":
            keys.append(k)
        elif p.kind == "float":
            keys.append(k if (p.high - p.low) / p.step <= SLIDER_MAX_STEPS else f"{k}.{SLIDE}")
        elif p.along_axes:
            keys += [f"{k}.{ax}" for ax in p.axis_names(len(layer.example_shape))]
        elif p.kind == "array" and p.slide and not p.optional:  # one value by default: its slider and exact box
            keys.append(f"{k}.0.{SLIDE}")
    return keys  # an optional array has sliders once its override box is ticked: see the next test but one


def test_every_numeric_parameter_is_a_slider(pages):
    missing = []
    for name, layer in LAYERS.items():
        page = pages.layer(name)
        for key in _slider_keys_of(layer):
            if page.locator(B.key_selector(key)).get_by_role("slider").count() != 1:
                missing.append(key)
    assert not missing, f"no slider for {missing}"


def test_an_optional_array_is_set_by_its_override_box_and_then_slid(pages):
    page = pages.fresh()
    open_page(page, pages.app, "resize")
    assert "Output (1, 1, 8, 8)" in main_text(page)  # shape, 2 × the input, while scales is unset
    with B.rerun(page):
        widget(page, "resize.scales.set").locator("label").click()
    assert "Output (1, 1, 4, 4)" in main_text(page)  # ticked: scale 1 on both axes
    assert widget(page, "resize.scales.1.slide").get_by_role("slider").count() == 1
    B.type_number(page, "resize.scales.0", 1.5)
    assert "Output (1, 1, 6, 4)" in main_text(page)
    with B.rerun(page):
        widget(page, "resize.scales.set").locator("label").click()
    assert "Output (1, 1, 8, 8)" in main_text(page)
    assert page.locator(B.key_selector("resize.scales.0.slide")).count() == 0


def test_float_slider_and_exact_box_agree(pages):
    page = pages.fresh()
    open_page(page, pages.app, "activation?activation.type=LEAKY_RELU")
    box = widget(page, "activation.alpha").locator("input")
    assert box.input_value() == "0.01"
    slider_keys(page, "activation.alpha.slide", *["ArrowRight"] * 5)  # five steps of 0.01: a visible sweep
    assert box.input_value() == "0.06"
    assert "min -0.24 " in output_stats(page) + " ", output_stats(page)
    B.type_number(page, "activation.alpha", 12.5)  # off the slider's range: the box takes it
    assert "min -50 " in output_stats(page) + " ", output_stats(page)
    assert float(widget(page, "activation.alpha.slide").get_by_role("slider").get_attribute("aria-valuetext")) == 5


def test_enum_is_stepped_with_the_keyboard(pages):
    page = pages.fresh()
    open_page(page, pages.app, "convolution")
    slider_keys(page, "convolution.padding_mode", "ArrowRight", "ArrowRight")  # EXPLICIT_ROUND_DOWN → … → SAME_UPPER
    assert "Output (1, 1, 6, 9)" in main_text(page)


def test_step_walks_the_window_and_a_link_restores_the_picked_cell(pages):
    page = pages.fresh()
    open_page(page, pages.app, "convolution?convolution.stride_nd.w=2")
    assert "output(0, 0, 0, 0) = " in widget(page, "convolution.extra.cell").inner_text()
    with B.rerun(page):
        widget(page, "convolution.extra.next").get_by_role("button").click()
    assert "output(0, 0, 0, 1) = " in widget(page, "convolution.extra.cell").inner_text()
    window = {tuple(c) for c in page.evaluate(INPUT_WINDOW_JS)}
    assert window == {(i, 2 + j) for i in range(3) for j in range(3)}  # moved on by the stride, 2
    page.wait_for_function("() => new URLSearchParams(location.search).get('convolution.extra.w') === '1'",
                           timeout=5_000)
    other = pages.fresh()
    open_page(other, pages.app, "convolution?convolution.stride_nd.w=2&convolution.extra.h=1&convolution.extra.w=2")
    assert "output(0, 0, 1, 2) = " in widget(other, "convolution.extra.cell").inner_text()
    assert {tuple(c) for c in other.evaluate(INPUT_WINDOW_JS)} == {(1 + i, 4 + j) for i in range(3) for j in range(3)}


# The cells the hovered output cell outlines on the input heatmap: [h, w] of each.
HOVER_BOXES_JS = """() => document.querySelector('[class*="-figure-input"] .pg-heatmap').outlined || []"""
HOVER_COUNT_JS = "(n) => (%s)().length === n" % HOVER_BOXES_JS


def test_hovering_an_output_cell_outlines_its_window_on_the_input(pages):
    page = pages.fresh()
    open_page(page, pages.app, "convolution?convolution.padding_nd.h=1")
    page.wait_for_function(f"() => Boolean(({B.OUTPUT_PLOT_JS})())", timeout=10_000)  # drawn
    B.wait_until_idle(page)
    for h, w in ((0, 0), (3, 5)):
        output = page.evaluate_handle(B.OUTPUT_PLOT_JS)
        x, y = page.evaluate(CELL_CENTRE_JS, [output, 0, h, w])
        page.mouse.move(x - 2, y - 2)
        page.mouse.move(x, y, steps=3)
        page.wait_for_function(HOVER_COUNT_JS, arg=9, timeout=5_000)
        boxes = {tuple(b) for b in page.evaluate(HOVER_BOXES_JS)}
        assert boxes == {(h - 1 + i, w + j) for i in range(3) for j in range(3)}, boxes  # padding 1 above
    page.mouse.move(5, 5)  # leaving the output clears the outline
    page.wait_for_function(HOVER_COUNT_JS, arg=0, timeout=5_000)


HOSTILE = "[click](http://evil.example) <img src=x onerror=alert(1)> :red[boom] **bold** `code` www.evil.example"
# What the hostile text would have made had it been rendered as markdown or HTML.
INJECTED_JS = """() => [
    ...document.querySelectorAll('a[href*="evil.example"], img[src="x"], [onerror]'),
    ...[...document.querySelectorAll('strong, b, code')].filter(e => /^(bold|code)$/.test(e.textContent.trim())),
    ...[...document.querySelectorAll('span')].filter(e => e.textContent === 'boom' && getComputedStyle(e).color !== getComputedStyle(e.parentElement).color),
].map(e => e.outerHTML.slice(0, 120))"""


@pytest.mark.parametrize("name", list(LAYERS))
def test_hostile_text_in_every_text_control_stays_text(pages, name):
    """Text that would be a link, an image, a coloured span, bold and code as markdown or HTML, given as every
    parameter of a link (a tampered URL), then typed into every text box of the page (parameters beside the
    figures, the sidebar's Input tab, the pickers' search boxes): it shows as typed."""
    page = pages.fresh()
    query = urllib.parse.urlencode({f"{name}.{p.name}": HOSTILE for p in LAYERS[name].params})
    page.goto(f"{pages.app}/{name}?{query}")
    B.wait_until_idle(page)
    warned = " ".join(alerts(page))
    assert "evil.example" in warned, f"{name}: the link's values were not reported: {warned[:300]}"
    assert page.evaluate(INJECTED_JS) == [], f"{name}: a link's value"
    open_tab(page, "Input")
    boxes = page.locator('[data-testid="stMain"] input[type="text"], [data-testid="stMain"] textarea, '
                         '[data-testid="stSidebar"] input[type="text"], [data-testid="stSidebar"] textarea')
    tried = 0
    for i in range(boxes.count()):
        box = boxes.nth(i)
        if not box.is_visible() or not box.is_editable():
            continue
        box.fill(HOSTILE)
        box.press("Enter" if box.evaluate("e => e.tagName") == "INPUT" else "Control+Enter")
        B.wait_until_idle(page)
        tried += 1
        assert page.evaluate(INJECTED_JS) == [], f"text box {i} of {name}"
        assert page.locator(EXCEPTION).count() == 0
    assert tried >= 2, f"{name}: only {tried} text boxes found"
