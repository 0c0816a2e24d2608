"""A room cannot break it: shipped server settings, and a damaged engine cache under the app."""

import tomllib
from pathlib import Path

import pytest
from apptest import open_page, stage_data
from streamlit.testing.v1 import AppTest

from playground.trt.backend import detect

ROOT = Path(__file__).resolve().parent.parent


def test_shipped_server_config_is_safe_by_default():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["address"] == "localhost"  # a room is let in deliberately (README)
    assert cfg["server"]["enableXsrfProtection"] is True
    from playground.onnx.reading import MAX_MODEL_BYTES

    # an ONNX model of the cap and its upload's framing (the server's limit is in MiB, over the whole request); no
    # more than a MiB beyond
    assert MAX_MODEL_BYTES < cfg["server"]["maxUploadSize"] << 20 <= MAX_MODEL_BYTES + (1 << 20)
    assert cfg["browser"]["gatherUsageStats"] is False
    assert cfg["client"]["showErrorDetails"] == "none"  # no tracebacks reach a browser


@pytest.fixture(autouse=True)
def fresh_app_cache():
    from playground.serve import shared

    yield
    shared.engine_cache.clear()  # later pages get the default directory again


def _convolution_page(env_cache: Path, monkeypatch) -> AppTest:
    monkeypatch.setenv("PLAYGROUND_ENGINE_CACHE", str(env_cache))
    from playground.serve import shared

    shared.engine_cache.clear()  # one per process: make it pick up this directory
    return open_page("convolution")


@pytest.mark.skipif(not detect().can_build, reason="no TensorRT module installed")
@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_damaged_engine_files_are_rebuilt_and_the_page_keeps_serving(tmp_path, monkeypatch, damage):
    at = _convolution_page(tmp_path, monkeypatch)
    files = list(tmp_path.glob("*.engine"))
    assert files, "the page built and cached an engine"
    for f in files:
        blob = f.read_bytes()
        f.write_bytes(blob[: len(blob) // 3] if damage == "truncated" else b"\x00garbage" * 100)
    at = _convolution_page(tmp_path, monkeypatch)  # a new process would find only the damaged files
    answer = stage_data(at)["answer"]
    assert answer["shapes"].endswith("Output (1, 1, 4, 7)") and not at.error
    assert any("unreadable" in m and "rebuilt" in m for m in answer["messages"])  # said, not hidden
    assert all(f.stat().st_size > 1000 for f in tmp_path.glob("*.engine"))  # whole again


def test_unusable_cache_directory_degrades_with_a_warning(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    at = _convolution_page(blocker / "cache", monkeypatch)
    answer = stage_data(at)["answer"]
    assert answer["shapes"].endswith("Output (1, 1, 4, 7)") and not at.error
    assert any("memory only" in m for m in answer["messages"])
