"""The precision analysis' figures from a TensorRT engine: the model with its casts or Q/DQ pairs placed (every
opened node in the precision: `precision_plan.plan_model` with nothing kept), built by TensorRT's ONNX parser as a
strongly typed network, its unfused tensors marked as debug tensors (`mark_unfused_tensors_as_debug_tensors`: unlike
marking outputs, this leaves what TensorRT fuses as it is), run once with a debug listener that copies each tensor
to the host while it is valid. A node whose output TensorRT fused away has no debug tensor, and is said so.

Names: TensorRT hands the listener its own tensor names for tensors marked this way (the engine inspector's); a node
is matched to the debug tensor named as its ONNX output, and debug tensors no node's output names are counted.

    run(c, precision, feeds) → ({step index: metrics}, {"ran": …, …})
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..trt import engine as eng
from ..trt import runner

WHY_NOT = "no TensorRT that runs engines here"
FUSED = "no debug tensor: TensorRT fused this node's output away (or named it otherwise)"
# TensorRT's types NumPy lacks, read through ml_dtypes (the engine's bytes as they are)
_ML_DTYPES = {"BF16": "bfloat16", "FP8": "float8_e4m3fn"}


def why_not(backend) -> str | None:
    """None where `backend` runs engines and has the debug-tensor API; else why not."""
    if backend is None or not backend.can_run:
        return WHY_NOT + (f" ({backend.why_not_run})" if backend is not None and backend.why_not_run else "")
    if not hasattr(backend.trt.INetworkDefinition, "mark_unfused_tensors_as_debug_tensors"):
        return (
            f"{backend.name} {backend.version} has no mark_unfused_tensors_as_debug_tensors (TensorRT 10.x before it)"
        )
    return None


def _mark_unfused(trt, network) -> None:
    if not network.mark_unfused_tensors_as_debug_tensors():
        raise RuntimeError("TensorRT could not mark the network's unfused tensors as debug tensors")


def _dtype(trt_type) -> np.dtype:
    name = runner._enum_name(trt_type)
    if name in _ML_DTYPES:
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, _ML_DTYPES[name]))
    return runner.numpy_dtype(trt_type)


def _pointer(addr) -> int:
    """The address a debug tensor's capsule holds (pybind11 passes `void const *` as a capsule)."""
    if isinstance(addr, int):
        return addr
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get(addr, get_name(addr))


def listener_for(trt):
    """An IDebugListener of `trt` whose `tensors` collects {name: host copy} of every debug tensor."""

    class Listener(trt.IDebugListener):
        def __init__(self):
            trt.IDebugListener.__init__(self)
            self.tensors: dict[str, np.ndarray] = {}

        def process_debug_tensor(self, addr, location, type, shape, name, stream):  # noqa: A002 - TensorRT's names
            host = np.empty(tuple(int(d) for d in shape), _dtype(type))
            if host.nbytes:
                if runner._enum_name(location) == "HOST":
                    ctypes.memmove(host.ctypes.data, _pointer(addr), host.nbytes)
                else:  # valid only during this call: copied on its stream, and waited for
                    cudart = runner._cudart()
                    runner.check(
                        cudart.cudaMemcpyAsync(
                            host.ctypes.data,
                            _pointer(addr),
                            host.nbytes,
                            cudart.cudaMemcpyKind.cudaMemcpyDeviceToHost,
                            stream,
                        ),
                        "cudaMemcpyAsync",
                    )
                    runner.check(cudart.cudaStreamSynchronize(stream), "cudaStreamSynchronize")
            self.tensors[name] = host
            return True

    return Listener()


def _listen(listener):
    def prepare(context) -> None:
        if not context.set_debug_listener(listener):
            raise RuntimeError("TensorRT would not set the debug listener")
        context.set_all_tensors_debug_state(True)
        context.unfused_tensors_debug_state = True  # the unfused tensors' emission is off by default

    return prepare


def engine_tensors(backend, model: bytes, feeds: dict) -> dict[str, np.ndarray]:
    """{tensor name: array}: every debug tensor and output of `model` (its bytes, the precision in its casts or
    Q/DQ) as a TensorRT engine computes it on `feeds`."""
    report = eng.build_onnx(backend, model, prepare=_mark_unfused)
    if report.status != "built":
        raise RuntimeError(report.error or "the build returned no engine")
    engine = eng.engine_from_bytes(backend.trt, report.engine)
    listener = listener_for(backend.trt)
    try:
        outputs, _ = runner.run_engine(engine, feeds, prepare=_listen(listener))
    finally:
        del engine  # made here, freed here (the context, run_engine's, is gone by now)
    return {**listener.tensors, **outputs}


def run(c, precision: str, feeds: dict, measure, tensors_of=None, backend=None) -> tuple[dict, dict]:
    """({step index: metrics or {"missing": why}}, what ran): each opened node's engine tensor against its FP32 real
    tensor, by `measure` (the analysis' own metrics). `tensors_of(model bytes, feeds)` stands in for the engine."""
    if tensors_of is None:
        if backend is None:
            from ..trt.backend import detect

            backend = detect()
        reason = why_not(backend)
        if reason:
            return {}, {"ran": False, "why_not": reason}
        tensors_of = lambda model, x: engine_tensors(backend, model, x)  # noqa: E731
    from .precision_plan import plan_model

    model = plan_model(c, precision, []).SerializeToString()
    try:
        tensors = tensors_of(model, feeds)
    except Exception as exc:  # noqa: BLE001 - the build or the run failed: said, the analysis stands
        return {}, {"ran": False, "why_not": f"{type(exc).__name__}: {exc}"}
    figures, matched = {}, set()
    for s in c.steps:
        if s.opened is None:
            continue
        name = s.node.output[0]
        if name in tensors:
            matched.add(name)
            figures[s.index] = measure(np.asarray(tensors[name], np.float32), c.values[name])
        else:
            figures[s.index] = {"missing": FUSED}
    info = {
        "ran": True,
        "backend": None if backend is None else f"{backend.name} {backend.version}",
        "device": None if backend is None else backend.device,
        "debug_tensors": len(tensors),
        "nodes_matched": len(matched),
        "unmatched_tensors": len(set(tensors) - matched),
    }
    return figures, info
