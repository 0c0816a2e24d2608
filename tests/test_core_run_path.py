"""The run path of `evaluate` where TensorRT can run: wiring tested with the GPU calls stood in for.

The buffer/stream/event code itself runs in tests/test_runner_gpu.py on a real GPU."""

import dataclasses

import numpy as np
import pytest

from playground.network import core
from playground.trt import engine, runner
from playground.trt.backend import detect
from playground.trt.cache import EngineCache

pytestmark = pytest.mark.skipif(not detect().can_build, reason="no TensorRT module installed")


@pytest.fixture
def runnable(monkeypatch):
    backend = dataclasses.replace(detect(), can_run=True, gpu=runner.GpuInfo("Test GPU", (8, 6), 1 << 30))
    calls = {}

    def fake_run(eng, inputs, *, timing_runs, runtime_config=None):
        calls["timing_runs"], calls["runtime_config"] = timing_runs, runtime_config
        x = inputs[engine.INPUT_NAME]
        return {engine.OUTPUT_NAME: calls["output"](x)}, 0.042

    monkeypatch.setattr(core._engines, "get", lambda trt, key, data: object())
    monkeypatch.setattr(engine, "layers_from_engine", lambda trt, e: [{"name": "inspected", "type": "kgen"}])
    monkeypatch.setattr(runner, "run_engine", fake_run)
    monkeypatch.setattr(engine, "runtime_config_for", lambda trt, e, path: ("runtime config", lambda: None))
    return backend, calls


def test_tensorrt_output_is_shown_and_compared(runnable, tmp_path):
    backend, calls = runnable
    calls["output"] = lambda x: np.maximum(x, 0) + np.float32(1e-3)
    r = core.evaluate("activation", {}, backend=backend, cache=EngineCache(tmp_path))
    assert r.output_source == "tensorrt" and r.source_label == "TensorRT on Test GPU (compute capability 8.6)"
    assert r.max_abs_diff == pytest.approx(1e-3, rel=1e-3) and r.latency_ms == 0.042
    assert r.report.layers == [{"name": "inspected", "type": "kgen"}]
    assert calls["timing_runs"] == core.TIMING_RUNS and calls["runtime_config"] == "runtime config"


def test_nan_in_both_counts_as_agreement(runnable, tmp_path):
    backend, calls = runnable
    calls["output"] = lambda x: np.power(x * 0.5 - 7, 0.5, dtype=np.float32)
    with np.errstate(invalid="ignore"):
        r = core.evaluate("scale", {"power": 0.5}, backend=backend, cache=EngineCache(tmp_path))
    assert r.max_abs_diff is not None and r.max_abs_diff < 1e-5


def test_a_gpu_failure_falls_back_to_the_reference_and_says_why(runnable, tmp_path, monkeypatch):
    backend, calls = runnable
    monkeypatch.setattr(runner, "run_engine", lambda *a, **k: (_ for _ in ()).throw(runner.CudaError("cudaMalloc", 2)))
    r = core.evaluate("activation", {}, backend=backend, cache=EngineCache(tmp_path))
    assert r.output_source == "reference" and np.array_equal(r.output, r.reference)
    assert any("Running the engine failed" in m for m in r.messages)


def test_rtx_runs_only_on_its_compute_capabilities():
    """TensorRT for RTX 1.7's own list: "Supported compute capabilities: 8.0 8.6 8.9 12.0 12.1 >12.0"."""
    from playground.network import export
    from playground.trt.backend import RTX_HINT, RTX_SUPPORTED, can_run_on

    gpu = lambda cc: runner.GpuInfo("g", cc, 0)  # noqa: E731
    for cc in [(8, 0), (8, 6), (8, 9), (12, 0), (12, 1), (13, 0)]:
        assert can_run_on("tensorrt_rtx", gpu(cc)) == (True, ""), cc
    for cc in [(7, 5), (8, 7), (9, 0), (10, 0), (11, 0)]:
        ok, why = can_run_on("tensorrt_rtx", gpu(cc))
        assert not ok and f"compute capability {cc[0]}.{cc[1]}" in why and RTX_SUPPORTED in why, cc
    assert can_run_on("tensorrt", gpu((9, 0)))[0] and not can_run_on("tensorrt", None)[0]
    # The exported script states the same list, from the same place.
    assert f"RTX_HINT = {RTX_HINT!r}" in export.export_script("activation", {}) and RTX_SUPPORTED in RTX_HINT
