"""The documentation gallery picks a layer's examples on its open page instead of loading a page for each, and a
picture made that way is the very picture a page opened on that example gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[1]


def _snapshot(out: Path, cache: Path, *args: str) -> str:
    env = {**os.environ, "PLAYGROUND_ENGINE_CACHE": str(cache)}
    r = subprocess.run(
        [sys.executable, "-m", "playground", "snapshot", "--out", str(out), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return r.stdout


def test_an_example_picked_on_the_open_page_is_drawn_as_when_its_page_is_opened(tmp_path):
    cache = tmp_path / "cache"
    # three of the convolution's examples: another input shape (num_groups_2: C = 2), a lesson, and a geometry
    picked = (
        "convolution:stride_nd_2_2",
        "convolution:num_groups_2",
        "convolution:fp16_overflow",
        "convolution:dilation_nd_2_2",
    )
    log = _snapshot(tmp_path / "picked", cache, "--presets", *picked, "--scale", "2")
    assert log.count("opening http") == 1 and log.count("on the open page") == 3, log  # one page load for four
    for one in picked[1:]:  # each on a page of its own, as the gallery did before
        _snapshot(tmp_path / "opened", cache, "--presets", one, "--scale", "2")
        (name,) = json.loads((tmp_path / "opened" / "shots.json").read_text())
        assert (tmp_path / "picked" / name).read_bytes() == (tmp_path / "opened" / name).read_bytes(), name
    index = (tmp_path / "picked" / "index.md").read_text()
    assert index.count("## Convolution") == 4 and "?preset=num_groups_2" in index


def test_a_layer_of_several_inputs_has_its_examples_picked_on_one_page(tmp_path):
    picked = ("elementwise:sum_row", "elementwise:sub_column")  # two inputs each: a feed dict, not one array
    log = _snapshot(tmp_path / "picked", tmp_path / "cache", "--presets", *picked)
    assert log.count("opening http") == 1 and log.count("on the open page") == 1, log
    assert len(json.loads((tmp_path / "picked" / "shots.json").read_text())) == 2


def _orange(path: Path) -> int:
    """The picked cell's outline's pixels (heatmap.js marks it #ff6600): how many the picture holds."""
    import numpy as np
    from PIL import Image

    img = np.asarray(Image.open(path).convert("RGB")).astype(int)
    return int((np.abs(img - (255, 102, 0)).sum(axis=-1) < 30).sum())


def test_a_gallery_of_one_width_without_the_picked_cells_outlines_and_with_absolute_links(tmp_path):
    """--width: every picture that wide, whatever its layer's figures (one plane or several, wide or tall) or page;
    --no-pick: no picked cell's outline; --base-url: the gallery's links absolute. Without them, the same figures
    have the outline and a width of their own."""
    import onnx
    from onnx import TensorProto, helper
    from PIL import Image

    model = tmp_path / "relu.onnx"
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), model)
    out, cache = tmp_path / "one", tmp_path / "cache"
    pages = ("home", "chain", "model", "convolution", "normalization", "resize", "concatenation")
    _snapshot(
        out, cache, "--pages", *pages, "--model", str(model), "--width", "800", "--no-pick",
        "--base-url", "https://docs.example.org/",
    )  # fmt: skip
    shots = json.loads((out / "shots.json").read_text())
    assert len(shots) == len(pages) and "model.png" in shots
    assert {Image.open(out / name).size[0] for name in shots} == {800}, {n: Image.open(out / n).size for n in shots}
    for name, shot in shots.items():  # every figure inside its picture
        for f in shot["figures"]:
            assert shot["clip"]["x"] <= f["x"] and f["x"] + f["width"] <= shot["clip"]["x"] + 800 + 1, (name, f)
    assert _orange(out / "convolution.png") == 0
    index = (out / "index.md").read_text()
    assert "[https://docs.example.org/convolution](https://docs.example.org/convolution)" in index
    assert "(https://docs.example.org/model?onnx=" in index and "model=relu.onnx" in index  # the model, by its digest
    assert "](/" not in index and "`/" not in index  # no link left relative

    plain = tmp_path / "plain"
    _snapshot(plain, cache, "--pages", "convolution", "normalization")
    assert _orange(plain / "convolution.png") > 20  # the picked cell's outline
    assert {Image.open(plain / n).size[0] for n in ("convolution.png", "normalization.png")} != {800}


def test_one_width_wraps_a_figures_planes_and_crops_a_chain_and_a_model_to_their_content(tmp_path):
    """--width 800 with one cell size (--cell 32): a convolution of 8 output maps (4 planes a page, 4 × 7 cells of
    32 px: 994 px side by side) wraps its planes inside its figure; the chain and the model pages are pictures of
    their content laid out 800 px wide (no menu, no sidebar), as tall as it, not of the window (720 px high: the
    convolution's figures are taller, and whole). Every picture is
    800 px wide with every figure's (a page's every element's) box inside it, and nothing in a layer's figures or
    on the model page runs past its box's width (`cut`)."""
    import onnx
    from onnx import TensorProto, helper
    from PIL import Image

    model = tmp_path / "relu.onnx"
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), model)
    out = tmp_path / "one"
    _snapshot(
        out, tmp_path / "cache", "--pages", "convolution", "chain", "model", "--model", str(model),
        "--query", "convolution.num_output_maps=8", "--cell", "32", "--width", "800", "--height", "720",
    )  # fmt: skip
    shots = json.loads((out / "shots.json").read_text())
    assert set(shots) == {"convolution.png", "chain.png", "model.png"}, shots
    for name, shot in shots.items():
        size = Image.open(out / name).size
        assert size[0] == 800, (name, size)
        assert abs(size[1] - shot["clip"]["height"]) <= 1, (name, size, shot["clip"])  # its foot not cut by the window
        assert shot["figures"], name
        for f in shot["figures"]:
            assert shot["clip"]["x"] - 0.5 <= f["x"] and f["x"] + f["width"] <= shot["clip"]["x"] + 800 + 0.5, (name, f)
    conv = {f["which"]: f for f in shots["convolution.png"]["figures"]}
    assert conv["output"]["width"] <= 800 - 24 and conv["output"]["height"] > 2 * 4 * 32, conv["output"]  # two lines
    assert shots["convolution.png"]["cut"] == [] and shots["model.png"]["cut"] == [], shots
    assert Image.open(out / "convolution.png").size[1] > 720  # its figures, taller than the window, whole
    for name in ("chain.png", "model.png"):  # its content's height, not the window's
        assert Image.open(out / name).size[1] != 720, name
    assert not any("pg-row" in c or "Plotly" in c for c in shots["chain.png"]["cut"]), shots["chain.png"]["cut"]
