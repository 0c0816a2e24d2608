"""The app in the system Chromium, as a person uses it: every page loads and names its backend, the stage's
controls change what is drawn (keys, an exact box, a choice, per-value sliders), impossible combinations are named
and recovered from, examples and their links set the input too, every layer fits one screen at both projector sizes
in both modes, uploads and hostile text stay harmless, and the snapshot command writes real PNGs.

One app server (with its own empty engine cache) and one browser for the module; every page is its own Streamlit
session. Nothing sleeps for a fixed time: each step waits on what the stage writes (data-drawn, data-query, its
stats lines) or on the app's own run state (playground.chromium.browser.wait_until_idle).
"""

from __future__ import annotations

import json
import math
import os
import struct
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest

from playground.chromium import browser as B
from playground.layers import LAYERS
from playground.network import presets
from playground.serve import launch
from playground.trt.backend import detect

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
STAGE = ".pg-stage"
EXCEPTION = '[data-testid="stException"]'
ALERT = '[data-testid="stAlert"]'


@pytest.fixture(scope="module")
def engine_cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("engine_cache")


@pytest.fixture(scope="module")
def app(engine_cache_dir):
    with B.serve_app(env={"PLAYGROUND_ENGINE_CACHE": str(engine_cache_dir)}) as url:
        yield url


@pytest.fixture(scope="module")
def context(browser):
    ctx = B.new_context(browser, viewport={"width": 1400, "height": 1000}, reduced_motion="reduce")
    yield ctx
    ctx.close()


@pytest.fixture
def page(context):
    """A fresh page; after the test: no exception box ever shown and no JavaScript error."""
    p = context.new_page()
    p.set_default_timeout(30_000)
    errors = []
    p.on("pageerror", lambda exc: errors.append(str(exc)))
    yield p
    boxes = p.locator(EXCEPTION).count() if not p.is_closed() else 0
    p.close()
    assert not errors and not boxes, (errors, boxes)


# -- helpers ----------------------------------------------------------------------------------
def open_stage(page, app: str, path: str):
    page.goto(f"{app}/{path}")
    page.wait_for_selector(f'{STAGE}[data-drawn] [data-figure="output"] canvas')
    B.wait_until_idle(page)
    return page


def stats(page, which: str = "output") -> str:
    return page.inner_text(f'{STAGE} [data-figure="{which}"] .pg-stats')


def shapes(page) -> str:
    return page.inner_text(f"{STAGE} .pg-head b")


def query(page) -> dict:
    return json.loads(page.get_attribute(STAGE, "data-query"))


def wait_stats(page, text: str, which: str = "output") -> None:
    """Until the figure's stats line holds `text` (the stage draws answers as they come)."""
    page.wait_for_function(
        "([sel, text]) => { const e = document.querySelector(sel); return e && e.textContent.includes(text); }",
        arg=[f'{STAGE} [data-figure="{which}"] .pg-stats', text],
    )


def wait_idle_stage(page) -> None:
    page.wait_for_function(f"() => !document.querySelector('{STAGE}').hasAttribute('data-busy')")


def press(page, param: str, *keys: str) -> None:
    page.focus(f'[data-param="{param}"]')
    for k in keys:
        page.keyboard.press(k)


def problem(page) -> str:
    el = page.locator(f"{STAGE} .pg-problem")
    return "" if el.get_attribute("hidden") is not None else el.inner_text()


def alerts(page) -> list[str]:
    return [
        t.strip()
        for t in page.locator(f'[data-testid="stMain"] {ALERT}, [data-testid="stSidebar"] {ALERT}').all_inner_texts()
    ]


def open_sidebar_tab(page, name: str) -> None:
    expand = page.locator('[data-testid="stExpandSidebarButton"]')
    if expand.count() and expand.first.is_visible():
        expand.first.click()
    page.locator('[data-testid="stSidebar"]').get_by_role("tab", name=name).click()


# -- tests ------------------------------------------------------------------------------------
def test_the_app_server_starts_with_the_allocator_settings(app):
    """As scripts/start.sh starts it (playground.serve.launch): the builds these tests wait for are the app's."""
    environ = dict(e.split("=", 1) for e in Path(f"/proc/{app.pid}/environ").read_text().split("\0") if "=" in e)
    assert set(launch.TUNABLES) <= set(environ.get(launch.VARIABLE, "").split(":"))


@pytest.mark.parametrize("name", ["home", *LAYERS])
def test_every_page_loads_and_names_its_backend(page, app, name):
    backend = detect()
    if name == "home":
        page.goto(app)
        B.wait_until_idle(page)
        text = page.inner_text('[data-testid="stMain"]')
        assert "Backend" in text and "Builds engines" in text and backend.name in text
        return
    open_stage(page, app, name)
    assert LAYERS[name].title in page.inner_text(f"{STAGE} .pg-head")
    layer = LAYERS[name]  # several inputs: each named with its shape, those the defaults read
    shown = " · ".join(f"{n.upper()} {layer.input_shape(n)}" for n in layer.used_inputs(layer.defaults()))
    assert shapes(page).startswith(f"{shown if layer.several else 'Input ' + str(layer.example_shape)} → Output (")
    badge = page.locator(f"{STAGE} .pg-head .pg-badge").first  # plain words first, the machine's on hover
    assert backend.title in badge.inner_text() + (badge.get_attribute("title") or "") or not backend.can_build
    assert stats(page, "input").startswith("shape (") and stats(page).startswith("shape (")


def test_a_slider_stepped_with_the_keyboard_changes_its_value_and_the_output(page, app):
    open_stage(page, app, "leaky_relu")  # alpha: slider -2..2 step 0.01, default 0.1; input -4..4
    assert "min -0.4 " in stats(page) + " "
    press(page, "leaky_relu.alpha", "ArrowRight")
    wait_stats(page, "min -0.44 ")
    assert page.get_attribute('[data-param="leaky_relu.alpha"]', "aria-valuenow") == "0.11"
    press(page, "leaky_relu.alpha", "End")
    wait_stats(page, "min -8 ")
    assert query(page)["leaky_relu.alpha"] == "2"


def test_a_change_moves_the_bounds_of_the_controls_it_bounds(page, app):
    """Padding widens the kernel size's range (the kernel fits within the padded input)."""
    open_stage(page, app, "convolution")  # H = 6, kernel 3
    kernel = f'{STAGE} [data-param="convolution.kernel_size_nd.h"]'
    assert page.get_attribute(kernel, "max") == "6"
    press(page, "convolution.padding_nd.h", "ArrowRight")
    wait_stats(page, "shape (1, 1, 6, 7)")
    page.wait_for_function(f"() => document.querySelector('{kernel}').max === '8'")


def test_an_impossible_combination_is_named_and_the_page_recovers(page, app):
    open_stage(page, app, "convolution")  # H = 6, kernel 3
    before = stats(page)
    press(page, "convolution.dilation_nd.h", "End")  # 1 + 32·2 cells on a 6-cell axis
    page.wait_for_function(f"() => !document.querySelector('{STAGE} .pg-problem').hidden")
    assert "dilation_nd" in problem(page) and "last valid" in problem(page)
    assert stats(page) == before  # the last valid drawing stays
    press(page, "convolution.dilation_nd.h", "Home")
    page.wait_for_function(f"() => document.querySelector('{STAGE} .pg-problem').hidden")
    wait_idle_stage(page)
    assert stats(page) == before
    press(page, "convolution.stride_nd.h", "ArrowRight")  # and it still answers
    wait_stats(page, "shape (1, 1, 2, 7)")


def test_a_float_slider_and_its_exact_box_agree(page, app):
    open_stage(page, app, "activation?activation.type=LEAKY_RELU")
    exact = page.locator(f'{STAGE} .pg-control[data-name="alpha"] .pg-exact')
    assert exact.input_value() == "0.01"
    press(page, "activation.alpha", *["ArrowRight"] * 5)  # five steps of 0.01: a visible sweep
    wait_stats(page, "min -0.24 ")
    assert exact.input_value() == "0.06"
    exact.fill("12.5")  # off the slider's range: the box takes it
    exact.press("Enter")
    wait_stats(page, "min -50 ")
    assert query(page)["activation.alpha"] == "12.5"


def test_a_choice_steps_with_the_keyboard_and_takes_its_own_defaults(page, app):
    open_stage(page, app, "convolution")
    press(page, "convolution.padding_mode", "ArrowDown", "ArrowDown")  # EXPLICIT_ROUND_DOWN → … → SAME_UPPER
    wait_stats(page, "shape (1, 1, 6, 9)")
    open_stage(page, app, "activation")
    page.select_option('[data-param="activation.type"]', "CLIP")  # RELU's unused 0 and 0 would clip to nothing
    wait_stats(page, "min -2 · max 2")
    assert query(page)["activation.alpha"] == "-2" and query(page)["activation.beta"] == "2"


def test_an_arrays_values_each_have_a_slider(page, app):
    open_stage(page, app, "prelu")  # spec slopes 0.5, 1, 2
    values = page.locator(f'{STAGE} .pg-control[data-name="slopes"] .pg-values input[type="range"]')
    assert values.count() == 3 and values.nth(2).input_value() == "2"
    assert "min -8 " in stats(page) + " "
    values.nth(2).focus()
    low = float(values.nth(2).get_attribute("min"))  # around the value: weights have no declared range
    page.keyboard.press("Home")  # the third slope to the slider's low end
    page.wait_for_function(
        f"() => JSON.parse(document.querySelector('{STAGE}').dataset.query)['prelu.slopes'] === '0.5,1,{low:g}'"
    )
    wait_idle_stage(page)
    assert query(page)["prelu.slopes"] == f"0.5,1,{low:g}"


def test_an_optional_array_is_set_and_cleared(page, app):
    open_stage(page, app, "resize")
    assert shapes(page).endswith("Output (1, 1, 8, 8)")  # shape, 2 × the input, while scales is unset
    scales = page.locator(f'{STAGE} [data-param="resize.scales"]')
    scales.fill("1.5, 1")
    scales.press("Enter")
    wait_stats(page, "shape (1, 1, 6, 4)")
    assert page.locator(f'{STAGE} .pg-control[data-name="scales"] .pg-values input[type="range"]').count() == 2
    scales.fill("")
    scales.press("Enter")
    wait_stats(page, "shape (1, 1, 8, 8)")


def test_every_numeric_parameter_is_a_slider(page, app):
    missing = []
    for name, layer in LAYERS.items():
        open_stage(page, app, name)
        shape = layer.example_shape
        for p in layer.params:
            if p.of.number and p.name_of is None:
                keys = [f"{name}.{p.name}"]
            elif p.along_axes and not p.permutation:  # an order of axes is one list of permutations
                keys = [f"{name}.{p.name}.{ax}" for ax in p.axis_names(len(shape))]
            else:
                continue
            missing += [k for k in keys if page.locator(f'{STAGE} input[type="range"][data-param="{k}"]').count() != 1]
    assert not missing, f"no slider for {missing}"


def test_an_example_with_another_input_sets_the_sidebars_input_and_the_link(page, app):
    open_stage(page, app, "convolution")
    example = presets.find("convolution", "num_groups_2")
    assert example.input["shape"] == (1, 2, 6, 9)
    page.select_option(f'{STAGE} [data-control="example"]', "num_groups_2")
    wait_stats(page, "shape (1, 2, 6, 9)", "input")
    wait_stats(page, f"shape {example.expected.shape}")
    page.wait_for_function("() => new URLSearchParams(location.search).get('convolution.input.C') === '2'")
    assert "num_groups" not in problem(page)
    open_sidebar_tab(page, "Input")
    assert page.locator(B.key_selector("convolution.input.C")).locator("input").input_value() == "2"


def test_an_examples_link_then_a_change_gives_a_link_that_reopens_the_change(page, app, context):
    from playground.network import core

    example = presets.find("convolution", "num_groups_2")
    strided = core.evaluate(
        "convolution", {**example.params, "stride_nd": "2,1"}, presets.input_for(example), run=False
    ).output.shape
    open_stage(page, app, "convolution?preset=num_groups_2")
    assert stats(page, "input").startswith("shape (1, 2, 6, 9)") and "preset" not in page.url
    press(page, "convolution.stride_nd.h", "ArrowRight")
    wait_stats(page, f"shape {strided}")
    page.wait_for_function("() => location.search.includes('convolution.stride_nd.h=2')")  # a moment after the change
    params = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)
    assert params.get("convolution.input.C") == ["2"] and params.get("convolution.stride_nd.h") == ["2"], params
    other = open_stage(context.new_page(), app, page.url.split("/", 3)[3])
    assert stats(other) == stats(page) and stats(other, "input").startswith("shape (1, 2, 6, 9)")
    other.close()


def test_a_picked_cell_travels_in_the_link_and_the_details_tab_follows_it(browser, app):
    fresh = B.new_context(browser, viewport={"width": 1400, "height": 1000})  # the sidebar closed, as a page opens
    page = open_stage(
        fresh.new_page(),
        app,
        "convolution?convolution.stride_nd.w=2&convolution.extra.n=0&convolution.extra.k=0"
        "&convolution.extra.h=1&convolution.extra.w=2",
    )
    assert page.get_attribute(STAGE, "data-pick") in (None, "0,0,1,2")
    assert page.inner_text(f"{STAGE} .pg-line").startswith("output(0,0,1,2) =")
    page.click(f"{STAGE} .pg-next")
    # an older link's LAYER.extra.AXIS opened it; the stage writes LAYER.cell.AXIS, the old keys gone
    page.wait_for_function(
        "() => { const q = new URLSearchParams(location.search);"
        " return q.get('convolution.cell.w') === '3' && !q.has('convolution.extra.w'); }"
    )
    page.get_by_role("tab", name="Details").click()
    page.wait_for_function("() => document.body.innerText.includes('output(0, 0, 1, 3) = ')")
    fresh.close()


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    length, chunk = struct.unpack(">I4s", data[8:16])
    assert chunk == b"IHDR" and length == 13, f"{path}: no IHDR chunk first"
    return struct.unpack(">II", data[16:24])


def _snapshot(out: Path, cache: Path, *args: str) -> None:
    env = {**os.environ, "PLAYGROUND_ENGINE_CACHE": str(cache)}
    r = subprocess.run(
        [sys.executable, "-m", "playground", "snapshot", "--out", str(out), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]


def test_snapshot_command_writes_pngs_and_index(tmp_path, engine_cache_dir):
    out, width, height = tmp_path / "shots", 1024, 700
    _snapshot(
        out,
        engine_cache_dir,
        "--pages",
        "home",
        "convolution",
        "--width",
        str(width),
        "--height",
        str(height),
        "--full-page",
    )
    index = (out / "index.md").read_text()
    for name in ("home", "convolution"):
        png = out / f"{name}.png"
        w, h = png_size(png)
        assert w == width, f"{png}: {w} px wide, asked for {width}"
        assert h >= height, f"{png}: {h} px high, less than the {height} px viewport"
        assert png.stat().st_size > 10_000, f"{png} is suspiciously small ({png.stat().st_size} bytes)"
        assert f"({png.name})" in index, f"index.md does not link {png.name}"


def test_snapshot_frames_the_figures_with_the_output_and_the_link_options(tmp_path, engine_cache_dir):
    """By default a layer page's picture is its figures: narrower than the window, never taller than it, and it
    holds the output heatmap (the output's colours are in it)."""
    import numpy as np
    from PIL import Image

    out = tmp_path / "stage"
    _snapshot(
        out,
        engine_cache_dir,
        "--pages",
        "activation",
        "--presets",
        "convolution:stride_nd_2_2",
        "--query",
        "hide=title",
    )
    for name in ("activation", "convolution--stride_nd-2-2"):  # named by its configuration
        w, h = png_size(out / f"{name}.png")
        assert w <= 1920 and 200 < h <= 1080, (name, w, h)
    # the activation's output (RELU of the spec's ramp) has its zeros drawn white in the diverging scale, and
    # its picture ends under the figures: far less than a screen high
    img = np.asarray(Image.open(out / "activation.png").convert("RGB"))
    assert img.shape[0] < 800, img.shape
    whites = int((img == (247, 247, 247)).all(axis=-1).sum())
    assert whites > 500, "the output heatmap's zero cells are not in the picture"


def test_snapshot_figures_at_2x_hold_no_control_cut_nothing_are_opaque_and_repeat_to_the_byte(
    tmp_path, engine_cache_dir
):
    """Two pages and one lesson at twice the pixels, cropped to their figures: no control in the picture, every
    figure inside it, every pixel opaque, and the same state written twice gives the same bytes."""
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

        def inside(b):
            return (
                b["x"] >= clip["x"]
                and b["y"] >= clip["y"]
                and b["x"] + b["width"] <= clip["x"] + clip["width"]
                and b["y"] + b["height"] <= clip["y"] + clip["height"]
            )

        def overlaps(b):
            return not (
                b["x"] + b["width"] <= clip["x"]
                or b["x"] >= clip["x"] + clip["width"]
                or b["y"] + b["height"] <= clip["y"]
                or b["y"] >= clip["y"] + clip["height"]
            )

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


def test_uploads_broken_or_real_images(page, app, tmp_path):
    """An upload that is no image is named and refused; a real PNG becomes the input; the page serves on."""
    import io

    from PIL import Image

    open_stage(page, app, "activation")
    open_sidebar_tab(page, "Input")
    kind = page.locator(B.key_selector("activation.input.kind"))
    with B.rerun(page):
        kind.click()
        page.get_by_role("option", name="image", exact=True).click()
    uploader = page.locator('[data-testid="stSidebar"] input[type="file"]').first
    (tmp_path / "notes.png").write_bytes(b"this is text, not a PNG")
    with B.rerun(page):
        uploader.set_input_files(str(tmp_path / "notes.png"))
    assert any("upload:" in a for a in alerts(page)), alerts(page)

    png = io.BytesIO()
    Image.new("RGB", (40, 20), (255, 0, 0)).save(png, format="PNG")
    (tmp_path / "red.png").write_bytes(png.getvalue())
    with B.rerun(page):
        uploader.set_input_files(str(tmp_path / "red.png"))
    page.wait_for_selector(f'{STAGE}[data-drawn] [data-figure="output"] canvas')
    assert not any("upload:" in a for a in alerts(page)), alerts(page)
    wait_stats(page, "shape (1, 1, 3, 3) · min 0.29", "input")  # red's luminance, 76/255, resized to H × W


# -- one screen per layer ------------------------------------------------------------------------------------
SCREENS = ((1280, 720), (1920, 1080))
PARTS = {
    "controls": f"{STAGE} .pg-controls",
    "shape line and badge": f"{STAGE} .pg-head",
    "input": f'{STAGE} [data-figure="input"] canvas',
    "output": f'{STAGE} [data-figure="output"] canvas',
}


def _off_screen(page, size: tuple[int, int], layer: str) -> list[str]:
    w, h = size
    parts = dict(PARTS, **({"kernel": f'{STAGE} [data-figure="kernel"] canvas'} if LAYERS[layer].stage_tensors else {}))
    out = []
    for name, selector in parts.items():
        box = page.locator(selector).first.bounding_box()
        if (
            box is None
            or box["x"] < 0
            or box["y"] < 0
            or box["x"] + box["width"] > w + 1
            or box["y"] + box["height"] > h + 1
        ):
            out.append(f"{name}: {box}")
    return out


@pytest.mark.parametrize("size", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_layer_page_and_example_fits_one_screen(browser, app, size):
    """Without scrolling: the controls, input, (kernel,) output, the shape line and the source badge, on every
    layer page, normal and presenter, and in the example whose output is the largest (the one most likely to
    overflow; every example's page is the same stage)."""
    context = B.new_context(browser, viewport={"width": size[0], "height": size[1]}, reduced_motion="reduce")
    page = context.new_page()
    problems = []
    try:
        for layer in LAYERS:
            urls = [layer, f"{layer}?view.presenter=true"]
            largest = max(presets.PRESETS.get(layer, []), key=lambda p: math.prod(p.expected_shape), default=None)
            urls += [f"{layer}?preset={largest.name}"] if largest else []
            for url in urls:
                open_stage(page, app, url)
                problems += [f"{url}: {p}" for p in _off_screen(page, size, layer)]
    finally:
        context.close()
    assert not problems, f"{len(problems)} parts off the {size[0]}×{size[1]} screen:\n" + "\n".join(problems)


# -- hostile text ----------------------------------------------------------------------------------------------
HOSTILE = "[click](http://evil.example) <img src=x onerror=alert(1)> :red[boom] **bold** `code` www.evil.example"
# What the hostile text would have made had it been rendered as markdown or HTML.
INJECTED_JS = """() => [
    ...document.querySelectorAll('a[href*="evil.example"], img[src="x"], [onerror]'),
    ...[...document.querySelectorAll('strong, b, code')].filter(e => /^(bold|code)$/.test(e.textContent.trim())),
    ...[...document.querySelectorAll('span')].filter(e => e.textContent === 'boom' && getComputedStyle(e).color !== getComputedStyle(e.parentElement).color),
].map(e => e.outerHTML.slice(0, 120))"""


@pytest.mark.parametrize("name", list(LAYERS))
def test_hostile_text_in_every_text_control_stays_text(page, app, name):
    """Text that would be a link, an image, a coloured span, bold and code as markdown or HTML, given as every
    parameter of a link (a tampered URL), then typed into every text box of the stage and the sidebar: it shows
    as typed."""
    query = urllib.parse.urlencode({f"{name}.{p.name}": HOSTILE for p in LAYERS[name].params if not p.along_axes})
    open_stage(page, app, f"{name}?{query}")
    warned = " ".join(alerts(page))
    assert "evil.example" in warned, f"{name}: the link's values were not reported: {warned[:300]}"
    assert page.evaluate(INJECTED_JS) == [], f"{name}: a link's value"
    open_sidebar_tab(page, "Input")
    boxes = page.locator(
        f'{STAGE} input[type="text"], [data-testid="stSidebar"] input[type="text"], [data-testid="stSidebar"] textarea'
    )
    tried = 0
    for i in range(boxes.count()):
        box = boxes.nth(i)
        if not box.is_visible() or not box.is_editable():
            continue
        box.fill(HOSTILE)
        box.press("Enter")
        wait_idle_stage(page)
        B.wait_until_idle(page)
        tried += 1
        assert page.evaluate(INJECTED_JS) == [], f"text box {i} of {name}"
    assert tried >= 1, f"{name}: no text box found"
