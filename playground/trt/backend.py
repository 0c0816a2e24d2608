"""Which TensorRT this machine has, and what it can do with it.

The first of `tensorrt`, `tensorrt_rtx` that imports and can make a builder, else NumPy only. Full
TensorRT imports on a machine without a usable GPU but cannot make a builder there; TensorRT for RTX
builds ahead of time on a CPU-only machine. Running needs a GPU that this TensorRT supports.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
from dataclasses import dataclass
from typing import Any

from . import runner

MODULES = ("tensorrt", "tensorrt_rtx")
# What TensorRT for RTX runs engines on, in its own words (1.7, on an unsupported GPU): "Supported compute
# capabilities: 8.0 8.6 8.9 12.0 12.1 >12.0". Stated here once; the exported script's hint is made from it.
RTX_COMPUTE_CAPABILITIES = ((8, 0), (8, 6), (8, 9))
RTX_FROM = (12, 0)  # and every later one
RTX_SUPPORTED = "compute capability 8.0, 8.6, 8.9 or 12.0 and later"
RTX_HINT = (
    f"TensorRT for RTX runs engines only on GPUs of {RTX_SUPPORTED}; other GPUs (the H100, 9.0, "
    "for one) need the full TensorRT (pip install tensorrt)."
)


def rtx_runs_on(compute_capability: tuple[int, int]) -> bool:
    return tuple(compute_capability) in RTX_COMPUTE_CAPABILITIES or tuple(compute_capability) >= RTX_FROM


TITLES = {"tensorrt": "TensorRT", "tensorrt_rtx": "TensorRT-RTX", "numpy": "NumPy"}


@dataclass(frozen=True)
class Backend:
    name: str  # tensorrt | tensorrt_rtx | numpy
    version: str | None
    trt: Any  # the imported module, or None
    gpu: runner.GpuInfo | None
    can_run: bool
    why_not_run: str
    passed_over: tuple[str, ...] = ()  # why each TensorRT ahead of this one is not used

    @property
    def can_build(self) -> bool:
        return self.trt is not None

    @property
    def title(self) -> str:
        """The builder's name as its documentation spells it (a badge a room reads: "TensorRT-RTX", not the module)."""
        return TITLES.get(self.name, self.name)

    @property
    def device(self) -> str:
        return (
            f"{self.gpu.name} (compute capability {self.gpu.compute_capability[0]}.{self.gpu.compute_capability[1]})"
            if self.gpu
            else "no GPU"
        )

    def describe(self) -> dict:
        return {
            "name": self.name,
            "version": self.version,
            "can_build": self.can_build,
            "can_run": self.can_run,
            "device": self.device,
            "passed_over": list(self.passed_over),
        }


def can_run_on(module_name: str, gpu: runner.GpuInfo | None) -> tuple[bool, str]:
    if gpu is None:
        return False, "no supported GPU: no CUDA GPU on this machine"
    if module_name == "tensorrt_rtx" and not rtx_runs_on(gpu.compute_capability):
        cc = ".".join(map(str, gpu.compute_capability))
        return False, (
            f"no supported GPU: TensorRT for RTX does not run on compute capability {cc} ({gpu.name}); "
            f"it runs on {RTX_SUPPORTED}"
        )
    return True, ""


def module_that_builds(name: str) -> tuple[Any, str]:
    """(the module, "") where `name` imports and makes a builder; (None, why not) where it is installed but
    cannot; (None, "") where it is not installed at all."""
    try:
        trt = importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - a broken install is worth a word; a missing one is not
        installed = importlib.util.find_spec(name) is not None
        return None, f"{name} is installed but does not import ({type(exc).__name__}: {exc})" if installed else ""
    version = getattr(trt, "__version__", "?")
    try:
        builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
    except Exception as exc:  # noqa: BLE001 - full TensorRT with no usable GPU: "factory function returned nullptr"
        return None, f"{name} {version} is installed but cannot make a builder here ({exc})"
    if builder is None:
        return None, f"{name} {version} is installed but cannot make a builder here"
    del builder
    return trt, ""


@functools.cache
def detect(prefer: str | None = None) -> Backend:
    """The active backend; PLAYGROUND_BACKEND=numpy|tensorrt|tensorrt_rtx picks one explicitly."""
    prefer = prefer or os.environ.get("PLAYGROUND_BACKEND") or None
    candidates = MODULES if prefer is None else ((prefer,) if prefer != "numpy" else ())
    passed_over = []
    gpu = runner.gpu_info()
    for name in candidates:
        trt, why = module_that_builds(name)
        if trt is None:
            passed_over += [why] if why else []
            continue
        ok, why_not_run = can_run_on(name, gpu)
        return Backend(name, getattr(trt, "__version__", "?"), trt, gpu, ok, why_not_run, tuple(passed_over))
    why = (
        "no TensorRT that can build here: NumPy reference only"
        if passed_over
        else "no TensorRT installed: NumPy reference only"
    )
    return Backend("numpy", None, None, gpu, False, why, tuple(passed_over))
