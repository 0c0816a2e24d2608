"""Which TensorRT this machine has, and what it can do with it.

`tensorrt` if importable, else `tensorrt_rtx`, else NumPy only. Building needs only the
module (TensorRT-RTX builds ahead of time on a CPU-only machine); running needs a GPU that
this TensorRT supports.
"""
from __future__ import annotations

import functools
import importlib
import os
from dataclasses import dataclass
from typing import Any

from . import runner

MODULES = ("tensorrt", "tensorrt_rtx")
# TensorRT for RTX runs engines on Ampere, Ada and Blackwell consumer/workstation parts only.
RTX_RUNNABLE = {(8, 0), (8, 6), (8, 9)}


@dataclass(frozen=True)
class Backend:
    name: str  # tensorrt | tensorrt_rtx | numpy
    version: str | None
    trt: Any  # the imported module, or None
    gpu: runner.GpuInfo | None
    can_run: bool
    why_not_run: str

    @property
    def can_build(self) -> bool:
        return self.trt is not None

    @property
    def device(self) -> str:
        return f"{self.gpu.name} (compute capability {self.gpu.compute_capability[0]}.{self.gpu.compute_capability[1]})" if self.gpu else "no GPU"

    def describe(self) -> dict:
        return {"name": self.name, "version": self.version, "can_build": self.can_build,
                "can_run": self.can_run, "device": self.device}


def can_run_on(module_name: str, gpu: runner.GpuInfo | None) -> tuple[bool, str]:
    if gpu is None:
        return False, "no supported GPU: no CUDA GPU on this machine"
    if module_name == "tensorrt_rtx" and gpu.compute_capability not in RTX_RUNNABLE and gpu.compute_capability[0] != 12:
        cc = ".".join(map(str, gpu.compute_capability))
        return False, f"no supported GPU: TensorRT for RTX does not run on compute capability {cc} ({gpu.name})"
    return True, ""


@functools.lru_cache(maxsize=None)
def detect(prefer: str | None = None) -> Backend:
    """The active backend; PLAYGROUND_BACKEND=numpy|tensorrt|tensorrt_rtx picks one explicitly."""
    prefer = prefer or os.environ.get("PLAYGROUND_BACKEND") or None
    candidates = MODULES if prefer is None else ((prefer,) if prefer != "numpy" else ())
    for name in candidates:
        try:
            trt = importlib.import_module(name)
        except Exception:  # a missing or broken install both mean "not this one"
            continue
        gpu = runner.gpu_info()
        ok, why = can_run_on(name, gpu)
        return Backend(name, getattr(trt, "__version__", "?"), trt, gpu, ok, why)
    return Backend("numpy", None, None, runner.gpu_info(), False, "no TensorRT installed: NumPy reference only")
