"""Run TensorRT engines on a GPU through cuda-python (``cuda.bindings.runtime``).

Ownership rule (as in Polygraphy): whoever creates a device buffer, stream or
event owns it and frees it, via ``with`` or an ``ExitStack``. Nothing here waits
for the garbage collector to release GPU memory.

``cuda.bindings`` is imported lazily (see ``_cudart``) so that importing this
module costs nothing on machines without CUDA, such as CI.
"""

from __future__ import annotations

import contextlib
import functools
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "CudaError",
    "DeviceBuffer",
    "Event",
    "GpuInfo",
    "Stream",
    "check",
    "gpu_info",
    "measure_copy_roundtrip",
    "numpy_dtype",
    "run_engine",
]


@functools.cache
def _cudart():
    # Deferred so that `import playground.runner` never loads the CUDA bindings.
    from cuda.bindings import runtime as cudart

    return cudart


class CudaError(RuntimeError):
    """A CUDA runtime call returned something other than cudaSuccess."""

    def __init__(self, function: str, error: Any):
        self.function = function
        self.error = error
        self.error_name = _error_name(error)
        super().__init__(f"{function} failed: {self.error_name} ({int(error)})")


def _error_name(error: Any) -> str:
    try:
        cudart = _cudart()
        err, name = cudart.cudaGetErrorName(error)
        if err == cudart.cudaError_t.cudaSuccess:
            return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:  # noqa: BLE001 - naming the error must not hide it
        pass
    return getattr(error, "name", None) or str(error)


def check(result: Any, function: str = "CUDA call") -> Any:
    """Unpack cuda-python's ``(err, *values)`` tuple; raise CudaError on failure.

    Returns None for ``(err,)``, the value for ``(err, value)`` and a tuple for
    more values.
    """
    if not isinstance(result, tuple):
        result = (result,)
    error, *values = result
    # cudaError_t is an int enum whose success value is 0; comparing by int
    # keeps this working for driver-API CUresult tuples too.
    if int(error) != 0:
        raise CudaError(function, error)
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return tuple(values)


def _call(function_name: str, *args: Any) -> Any:
    """Call ``cudart.<function_name>(*args)`` and check its result."""
    return check(getattr(_cudart(), function_name)(*args), function_name)


# --------------------------------------------------------------------------- GPU info


@dataclass(frozen=True)
class GpuInfo:
    name: str
    compute_capability: tuple[int, int]
    memory_bytes: int


@functools.cache
def gpu_info() -> GpuInfo | None:
    """Describe the current CUDA device, or None if there is none usable.

    Never raises: a missing package, missing driver or zero devices all mean
    "no GPU" to callers (the app's health line, the test suite's skip logic).
    """
    try:
        if _call("cudaGetDeviceCount") < 1:
            return None
        device = _call("cudaGetDevice")
        props = _call("cudaGetDeviceProperties", device)
        name = props.name
        if isinstance(name, bytes):
            name = name.split(b"\0", 1)[0].decode(errors="replace")
        return GpuInfo(
            name=str(name).strip(),
            compute_capability=(int(props.major), int(props.minor)),
            memory_bytes=int(props.totalGlobalMem),
        )
    except Exception:  # noqa: BLE001 - documented: never raises
        return None


# ----------------------------------------------------------------- owned CUDA objects


def _stream_handle(stream: Stream | None) -> int:
    # None means the legacy default stream.
    return 0 if stream is None else stream.handle


class _Owned:
    """A CUDA object this process created and frees: `close()` once, or leave a `with` block."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class Stream(_Owned):
    """An owned CUDA stream. ``handle`` is the raw int TensorRT expects."""

    def __init__(self):
        self._stream = _call("cudaStreamCreate")
        self.handle: int = int(self._stream)

    @property
    def closed(self) -> bool:
        return self._stream is None

    def synchronize(self) -> None:
        _call("cudaStreamSynchronize", self._stream)

    def close(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            _call("cudaStreamDestroy", stream)


class Event(_Owned):
    """An owned CUDA event with timing enabled."""

    def __init__(self):
        self.handle = _call("cudaEventCreate")

    @property
    def closed(self) -> bool:
        return self.handle is None

    def record(self, stream: Stream | None = None) -> None:
        _call("cudaEventRecord", self.handle, _stream_handle(stream))

    def synchronize(self) -> None:
        _call("cudaEventSynchronize", self.handle)

    @staticmethod
    def elapsed_ms(start: Event, end: Event) -> float:
        """Milliseconds between two recorded events; waits for ``end``."""
        end.synchronize()
        return float(_call("cudaEventElapsedTime", start.handle, end.handle))

    def close(self) -> None:
        if self.handle is not None:
            handle, self.handle = self.handle, None
            _call("cudaEventDestroy", handle)


class DeviceBuffer(_Owned):
    """An owned ``cudaMalloc`` allocation of ``nbytes`` bytes at ``ptr``."""

    def __init__(self, nbytes: int):
        if nbytes < 0:
            raise ValueError(f"nbytes must be >= 0, got {nbytes}")
        self.nbytes = int(nbytes)
        # Allocate at least one byte so empty tensors still get a non-null
        # address; TensorRT rejects null addresses for IO tensors.
        self._ptr: int | None = int(_call("cudaMalloc", max(self.nbytes, 1)))

    @property
    def ptr(self) -> int:
        if self._ptr is None:
            raise ValueError("DeviceBuffer is closed")
        return self._ptr

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def _check_fits(self, array: np.ndarray) -> None:
        if array.nbytes > self.nbytes:
            raise ValueError(f"array of {array.nbytes} bytes does not fit a {self.nbytes}-byte buffer")

    def copy_from_host(self, array: np.ndarray, stream: Stream | None = None) -> None:
        """Queue a host-to-device copy of ``array`` on ``stream``.

        A non-contiguous input is copied to a contiguous temporary; that is
        safe because CUDA stages pageable H2D sources before returning.
        """
        array = np.ascontiguousarray(array)
        self._check_fits(array)
        if array.nbytes:
            _call(
                "cudaMemcpyAsync",
                self.ptr,
                array.ctypes.data,
                array.nbytes,
                _cudart().cudaMemcpyKind.cudaMemcpyHostToDevice,
                _stream_handle(stream),
            )

    def copy_to_host(self, array: np.ndarray, stream: Stream | None = None) -> np.ndarray:
        """Queue a device-to-host copy into ``array`` (filled once ``stream`` syncs)."""
        if not array.flags.c_contiguous or not array.flags.writeable:
            # A temporary would be filled after we return, so refuse instead.
            raise ValueError("copy_to_host needs a writeable C-contiguous array")
        self._check_fits(array)
        if array.nbytes:
            _call(
                "cudaMemcpyAsync",
                array.ctypes.data,
                self.ptr,
                array.nbytes,
                _cudart().cudaMemcpyKind.cudaMemcpyDeviceToHost,
                _stream_handle(stream),
            )
        return array

    def close(self) -> None:
        if self._ptr is not None:
            ptr, self._ptr = self._ptr, None
            _call("cudaFree", ptr)

    def __repr__(self) -> str:
        where = "closed" if self._ptr is None else hex(self._ptr)
        return f"DeviceBuffer(nbytes={self.nbytes}, ptr={where})"


@contextlib.contextmanager
def _drained_on_error(stream: Stream):
    """On an exception, wait for ``stream`` before the buffers it uses are freed."""
    try:
        yield
    except BaseException:
        # Best effort: the original exception is what the caller needs to see.
        with contextlib.suppress(Exception):
            stream.synchronize()
        raise


# ---------------------------------------------------------------------------- engines

# Keyed by DataType *name* so engines from `tensorrt` and `tensorrt_rtx` both map.
_NUMPY_DTYPES: dict[str, np.dtype] = {
    "FLOAT": np.dtype(np.float32),
    "HALF": np.dtype(np.float16),
    "INT8": np.dtype(np.int8),
    "UINT8": np.dtype(np.uint8),
    "INT32": np.dtype(np.int32),
    "INT64": np.dtype(np.int64),
    "BOOL": np.dtype(np.bool_),
}


def _enum_name(value: Any) -> str:
    name = getattr(value, "name", None)
    if isinstance(name, str):
        return name
    return str(value).rsplit(".", 1)[-1]


def numpy_dtype(trt_dtype: Any) -> np.dtype:
    """NumPy dtype for a TensorRT DataType; TypeError for BF16/FP8/INT4/... ."""
    name = _enum_name(trt_dtype)
    try:
        return _NUMPY_DTYPES[name]
    except KeyError:
        raise TypeError(f"TensorRT dtype {name} has no NumPy equivalent") from None


def run_engine(
    engine: Any,
    inputs: Mapping[str, np.ndarray],
    *,
    timing_runs: int = 0,
    runtime_config: Any = None,
    prepare: Any = None,
) -> tuple[dict[str, np.ndarray], float | None]:
    """Run a deserialized ICudaEngine once on ``inputs``; optionally time it.

    Returns ``(outputs, median_ms)``; ``median_ms`` is None unless
    ``timing_runs > 0``, in which case it is the median of that many further
    executions, each bracketed by CUDA events (copies not included).
    ``runtime_config`` (TensorRT-RTX) carries its runtime cache into the context.
    ``prepare(context)`` is called on the new context before it runs (a debug listener set on it).
    """
    if timing_runs < 0:
        raise ValueError(f"timing_runs must be >= 0, got {timing_runs}")
    context = (
        engine.create_execution_context(runtime_config)
        if runtime_config is not None
        else engine.create_execution_context()
    )
    if context is None:
        raise RuntimeError("engine.create_execution_context() failed")
    try:
        if prepare is not None:
            prepare(context)
        return _run_with_context(engine, context, inputs, timing_runs)
    finally:
        # An exception's traceback keeps this frame alive; drop the context
        # (and its activation memory) now rather than when that is collected.
        del context


def _run_with_context(engine, context, inputs, timing_runs):
    names = [engine.get_tensor_name(i) for i in range(engine.num_io_tensors)]
    input_names = [n for n in names if _enum_name(engine.get_tensor_mode(n)) == "INPUT"]
    output_names = [n for n in names if _enum_name(engine.get_tensor_mode(n)) == "OUTPUT"]

    missing = set(input_names) - set(inputs)
    unknown = set(inputs) - set(input_names)
    if missing or unknown:
        raise KeyError(f"engine inputs are {input_names}; missing {sorted(missing)}, unknown {sorted(unknown)}")

    # Host side first: cast and shape-check before any GPU work is queued.
    host_inputs: dict[str, np.ndarray] = {}
    for name in input_names:
        array = np.ascontiguousarray(inputs[name], dtype=numpy_dtype(engine.get_tensor_dtype(name)))
        engine_shape = tuple(context.get_tensor_shape(name))
        if any(d < 0 for d in engine_shape):
            if len(engine_shape) != array.ndim or not context.set_input_shape(name, array.shape):
                raise ValueError(f"input {name!r}: shape {array.shape} rejected (engine shape {engine_shape})")
        elif engine_shape != array.shape:
            raise ValueError(f"input {name!r}: expected shape {engine_shape}, got {array.shape}")
        host_inputs[name] = array

    # Output shapes are known only once every dynamic input shape is set.
    host_outputs: dict[str, np.ndarray] = {}
    for name in output_names:
        shape = tuple(context.get_tensor_shape(name))
        if any(d < 0 for d in shape):
            raise NotImplementedError(f"output {name!r} has a data-dependent shape {shape}")
        host_outputs[name] = np.empty(shape, dtype=numpy_dtype(engine.get_tensor_dtype(name)))

    with contextlib.ExitStack() as stack:
        stream = stack.enter_context(Stream())
        start = stack.enter_context(Event())
        end = stack.enter_context(Event())
        buffers = {
            name: stack.enter_context(DeviceBuffer(array.nbytes))
            for name, array in {**host_inputs, **host_outputs}.items()
        }
        # Entered last so it unwinds first: drain queued work before freeing.
        stack.enter_context(_drained_on_error(stream))

        for name, buffer in buffers.items():
            # TensorRT returns False (rather than raising) on a bad address.
            if context.set_tensor_address(name, buffer.ptr) is False:
                raise RuntimeError(f"set_tensor_address failed for {name!r}")

        for name, array in host_inputs.items():
            buffers[name].copy_from_host(array, stream)
        _execute(context, stream)
        for name, array in host_outputs.items():
            buffers[name].copy_to_host(array, stream)
        stream.synchronize()

        latency_ms = None
        if timing_runs:
            samples = []
            for _ in range(timing_runs):
                start.record(stream)
                _execute(context, stream)
                end.record(stream)
                samples.append(Event.elapsed_ms(start, end))
            latency_ms = float(statistics.median(samples))

    return host_outputs, latency_ms


def _execute(context, stream: Stream) -> None:
    # Like set_tensor_address, a failed enqueue is reported as False.
    if context.execute_async_v3(stream.handle) is False:
        raise RuntimeError("context.execute_async_v3() failed")


# ------------------------------------------------------------------------- health check


def measure_copy_roundtrip(array: np.ndarray) -> tuple[np.ndarray, float]:
    """Copy ``array`` host->device->host; return (the copy, milliseconds taken)."""
    host_in = np.ascontiguousarray(array)
    host_out = np.empty_like(host_in)
    with Stream() as stream, Event() as start, Event() as end, DeviceBuffer(host_in.nbytes) as buffer:
        with _drained_on_error(stream):
            start.record(stream)
            buffer.copy_from_host(host_in, stream)
            buffer.copy_to_host(host_out, stream)
            end.record(stream)
            elapsed_ms = Event.elapsed_ms(start, end)
            stream.synchronize()
    return host_out, elapsed_ms
