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
