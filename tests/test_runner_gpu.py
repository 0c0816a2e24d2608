"""Tests for playground.trt.runner, the cuda-python GPU path.

Unmarked tests run everywhere (CI has no GPU). Tests marked `gpu` are skipped
without a CUDA device (see conftest.py) and exercise buffers, streams, events
and run_engine on a real GPU through a fake engine, so they need no TensorRT.
"""

from __future__ import annotations

import enum
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from playground.trt import runner
from playground.trt.runner import (
    CudaError,
    DeviceBuffer,
    Event,
    GpuInfo,
    Stream,
    check,
    gpu_info,
    measure_copy_roundtrip,
    numpy_dtype,
    run_engine,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
MiB = 1 << 20


def _run_python(code: str, **env_overrides: str) -> str:
    """Run ``code`` in a fresh interpreter that can import playground; return stdout."""
    env = dict(os.environ, **env_overrides)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


# ------------------------------------------------------------------ fake engine
# Mimics the slice of TensorRT's ICudaEngine / IExecutionContext that
# run_engine uses. Its "inference" is a device-to-device copy x -> y on the
# stream it is given, so the whole address/stream path runs without TensorRT.


class DataType(enum.Enum):
    FLOAT = 0
    HALF = 1
    BF16 = 7


class TensorIOMode(enum.Enum):
    INPUT = 1
    OUTPUT = 2


class FakeIdentityEngine:
    num_io_tensors = 2

    def __init__(self, shape, dtype=DataType.FLOAT, fail_execute=False):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.fail_execute = fail_execute
        self.contexts: list[FakeContext] = []

    def get_tensor_name(self, index):
        return ("x", "y")[index]

    def get_tensor_mode(self, name):
        return TensorIOMode.INPUT if name == "x" else TensorIOMode.OUTPUT

    def get_tensor_dtype(self, name):
        return self.dtype

    def create_execution_context(self):
        self.contexts.append(FakeContext(self))
        return self.contexts[-1]


class FakeContext:
    def __init__(self, engine):
        self.engine = engine
        self.shape = engine.shape  # may hold -1 until set_input_shape
        self.addresses: dict[str, int] = {}
        self.input_shapes_set: list[tuple] = []
        self.executions = 0

    def get_tensor_shape(self, name):
        return self.shape

    def set_input_shape(self, name, shape):
        self.input_shapes_set.append(tuple(shape))
        self.shape = tuple(shape)
        return True

    def set_tensor_address(self, name, ptr):
        self.addresses[name] = ptr
        return True

    def execute_async_v3(self, stream_handle):
        if self.engine.fail_execute:
            raise RuntimeError("fake engine failure")
        from cuda.bindings import runtime as cudart

        nbytes = int(np.prod(self.shape)) * numpy_dtype(self.engine.dtype).itemsize
        check(
            cudart.cudaMemcpyAsync(
                self.addresses["y"],
                self.addresses["x"],
                nbytes,
                cudart.cudaMemcpyKind.cudaMemcpyDeviceToDevice,
                stream_handle,
            ),
            "cudaMemcpyAsync",
        )
        self.executions += 1
        return True


# -------------------------------------------------------------------- CPU tests


def test_import_does_not_load_cuda_bindings():
    out = _run_python(
        """
        import sys
        import playground.trt.runner
        print(sorted(m for m in sys.modules if m == "cuda" or m.startswith("cuda.")))
        """
    )
    assert out == "[]"


def test_gpu_info_is_none_without_devices():
    # Hiding every device gives "no GPU" on any machine, GPU or not.
    out = _run_python(
        """
        from playground.trt.runner import gpu_info
        print(gpu_info())
        """,
        CUDA_VISIBLE_DEVICES="",
    )
    assert out == "None"


def test_gpu_info_is_none_without_cuda_bindings():
    out = _run_python(
        """
        import sys
        sys.modules["cuda"] = None  # makes `import cuda...` raise ImportError
        from playground.trt.runner import gpu_info
        print(gpu_info())
        """
    )
    assert out == "None"


def test_gpu_info_never_raises_here():
    info = gpu_info()
    assert info is None or isinstance(info, GpuInfo)
    assert gpu_info() is info  # cached


def test_check_raises_cuda_error_with_names():
    cudart = pytest.importorskip("cuda.bindings.runtime")
    with pytest.raises(CudaError, match="cudaMalloc.*cudaErrorInvalidValue") as caught:
        check((cudart.cudaError_t.cudaErrorInvalidValue, None), "cudaMalloc")
    assert isinstance(caught.value, RuntimeError)
    assert caught.value.function == "cudaMalloc"
    assert caught.value.error_name == "cudaErrorInvalidValue"


def test_check_unpacks_success_values():
    cudart = pytest.importorskip("cuda.bindings.runtime")
    ok = cudart.cudaError_t.cudaSuccess
    assert check((ok,)) is None
    assert check((ok, 42)) == 42
    assert check((ok, 1, 2)) == (1, 2)


def test_numpy_dtype_by_name():
    assert numpy_dtype(DataType.FLOAT) == np.float32
    assert numpy_dtype(DataType.HALF) == np.float16
    assert numpy_dtype("DataType.INT32") == np.int32  # str() form also works
    with pytest.raises(TypeError, match="BF16"):
        numpy_dtype(DataType.BF16)


def test_run_engine_rejects_bad_inputs_before_touching_the_gpu():
    engine = FakeIdentityEngine((2, 3))
    with pytest.raises(KeyError, match="missing"):
        run_engine(engine, {})
    with pytest.raises(KeyError, match="unknown"):
        run_engine(engine, {"x": np.zeros((2, 3)), "z": np.zeros(1)})
    with pytest.raises(ValueError, match="expected shape"):
        run_engine(engine, {"x": np.zeros((3, 2))})
    with pytest.raises(ValueError, match="timing_runs"):
        run_engine(engine, {"x": np.zeros((2, 3))}, timing_runs=-1)


# -------------------------------------------------------------------- GPU tests


def _free_device_bytes() -> int:
    free, _total = runner._call("cudaMemGetInfo")
    return int(free)


@pytest.mark.gpu
def test_gpu_info_fields():
    info = gpu_info()
    print(f"\nGPU: {info}")
    assert isinstance(info.name, str) and info.name
    major, minor = info.compute_capability
    assert major >= 3 and minor >= 0
    assert info.memory_bytes > 1 << 30


@pytest.mark.gpu
def test_device_buffer_roundtrip_is_bit_exact():
    rng = np.random.default_rng(0)
    # Random bit patterns, NaN payloads and denormals included.
    host = rng.integers(0, 2**32, size=(257, 131), dtype=np.uint32).view(np.float32)
    back = np.empty_like(host)
    with Stream() as stream, DeviceBuffer(host.nbytes) as buffer:
        assert buffer.nbytes == host.nbytes and buffer.ptr
        buffer.copy_from_host(host, stream)
        buffer.copy_to_host(back, stream)
        stream.synchronize()
    assert np.array_equal(back.view(np.uint32), host.view(np.uint32))
    assert buffer.closed
    buffer.close()  # idempotent


@pytest.mark.gpu
def test_measure_copy_roundtrip():
    host = np.arange(4 * MiB, dtype=np.float32)  # 16 MiB
    back, ms = measure_copy_roundtrip(host)
    print(f"\nroundtrip of 16 MiB: {ms:.3f} ms")
    assert np.array_equal(back.view(np.uint32), host.view(np.uint32))
    assert isinstance(ms, float) and ms > 0


@pytest.mark.gpu
def test_buffers_are_freed():
    DeviceBuffer(1).close()  # make sure the CUDA context exists before the baseline
    baseline = _free_device_bytes()
    for _ in range(20):
        with DeviceBuffer(256 * MiB) as buffer:
            assert _free_device_bytes() <= baseline - 200 * MiB
        assert buffer.closed
    assert abs(_free_device_bytes() - baseline) < 64 * MiB


@pytest.mark.gpu
def test_event_timing_and_stream_sync():
    cudart = runner._cudart()
    with Stream() as stream, Event() as start, Event() as end, DeviceBuffer(64 * MiB) as a, DeviceBuffer(64 * MiB) as b:
        start.record(stream)
        runner._call(
            "cudaMemcpyAsync", b.ptr, a.ptr, a.nbytes, cudart.cudaMemcpyKind.cudaMemcpyDeviceToDevice, stream.handle
        )
        end.record(stream)
        stream.synchronize()
        # After synchronize() nothing is pending on the stream.
        assert runner._cudart().cudaStreamQuery(stream.handle)[0] == cudart.cudaError_t.cudaSuccess
        ms = Event.elapsed_ms(start, end)
    assert isinstance(ms, float) and ms > 0
    assert stream.closed and start.closed and end.closed
    stream.close()
    start.close()  # idempotent


@pytest.mark.gpu
def test_run_engine_with_fake_engine():
    engine = FakeIdentityEngine((1024, 1024))  # 4 MiB, so a run takes measurable time
    x = np.random.default_rng(1).standard_normal((1024, 1024)).astype(np.float32)
    outputs, latency_ms = run_engine(engine, {"x": x}, timing_runs=5)
    print(f"\nfake-engine latency (median of 5): {latency_ms:.4f} ms")
    assert set(outputs) == {"y"}
    assert outputs["y"].dtype == np.float32 and outputs["y"].shape == x.shape
    assert np.array_equal(outputs["y"], x)
    assert isinstance(latency_ms, float) and latency_ms > 0
    assert engine.contexts[0].executions == 1 + 5


@pytest.mark.gpu
def test_run_engine_dynamic_shape_and_cast():
    engine = FakeIdentityEngine((-1, 4), dtype=DataType.HALF)
    x = np.arange(12, dtype=np.float64).reshape(3, 4)  # cast to float16 by run_engine
    outputs, latency_ms = run_engine(engine, {"x": x})
    assert latency_ms is None
    assert engine.contexts[0].input_shapes_set == [(3, 4)]
    assert outputs["y"].dtype == np.float16
    assert np.array_equal(outputs["y"], x.astype(np.float16))


@pytest.mark.gpu
def test_run_engine_frees_everything_when_execute_raises(monkeypatch):
    created: list = []

    def tracking(cls):
        class Tracked(cls):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                created.append(self)

        return Tracked

    for name in ("DeviceBuffer", "Stream", "Event"):
        monkeypatch.setattr(runner, name, tracking(getattr(runner, name)))

    engine = FakeIdentityEngine((64 * MiB // 4,), fail_execute=True)  # 64 MiB each way
    x = np.ones(engine.shape, dtype=np.float32)
    runner.DeviceBuffer(1).close()
    created.clear()
    baseline = _free_device_bytes()
    for _ in range(5):
        with pytest.raises(RuntimeError, match="fake engine failure"):
            run_engine(engine, {"x": x}, timing_runs=3)

    kinds = sorted({type(obj).__mro__[1].__name__ for obj in created})
    assert kinds == ["DeviceBuffer", "Event", "Stream"]
    assert all(obj.closed for obj in created)
    assert abs(_free_device_bytes() - baseline) < 64 * MiB
