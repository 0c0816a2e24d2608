"""Build one-layer TensorRT networks: network_from_layer → engine_bytes_from_network → BuildReport.

Builders and their loggers live for the process (a warm builder is what makes a rebuild fast), in
a small pool: a builder serves one build at a time and captures that build's log, and builds of
different configurations run side by side (TensorRT releases the GIL while it builds). TensorRT
objects are created and released inside the function that owns them.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from .backend import Backend
from .layer import Layer

INPUT_NAME, OUTPUT_NAME = "inputT0", "outputT0"
SEVERITIES = ("INTERNAL_ERROR", "ERROR", "WARNING", "INFO", "VERBOSE")
SHOWN_SEVERITIES = ("INTERNAL_ERROR", "ERROR", "WARNING")
# TF32 (TensorRT's default: on) would make float32 convolutions miss the spec's tables on Ampere
# and later GPUs; the code export builds the same way.
TF32 = False


@dataclass
class BuildReport:
    """What a build produced; everything but the engine bytes is JSON-friendly metadata."""
    status: str  # built | failed
    build_ms: float
    output_shape: list[int] | None  # TensorRT's own shape inference
    layers: list[dict] = field(default_factory=list)
    log: list[list[str]] = field(default_factory=list)  # [severity, message], warnings and errors
    error: str | None = None
    engine: bytes | None = field(default=None, repr=False)

    @property
    def bytes(self) -> int:
        return len(self.engine) if self.engine else 0

    def meta(self) -> dict:
        d = asdict(self)
        d.pop("engine")
        return d


@dataclass(frozen=True)
class BuildSettings:
    """Builder settings that matter for interactive rebuilds (part of the cache key)."""
    optimization_level: int = 0  # 0 builds fastest; TensorRT's own default is 3

    @staticmethod
    def from_env() -> "BuildSettings":
        return BuildSettings(int(os.environ.get("PLAYGROUND_OPT_LEVEL", "0")))


def _logger(trt, keep: bool = True):
    """A logger that records what it is told (a build's log), or, with keep=False, nothing."""
    class Log(trt.ILogger):
        def __init__(self):
            trt.ILogger.__init__(self)
            self.records: list[tuple[str, str]] = []

        def log(self, severity, msg):
            if keep:
                self.records.append((severity.name, msg))

    return Log()


class _Builder:
    """A builder with a logger that records the one build it is doing."""

    def __init__(self, trt):
        self.logger = _logger(trt)
        self.builder = trt.Builder(self.logger)


class _BuilderPool:
    """Up to `size` builders of one TensorRT module, made when first needed; a build takes a free one
    or waits for one. Three constructions of a slider change build in ~120 ms side by side, ~200 in turn."""

    def __init__(self, trt, size: int):
        self.trt, self.size, self.free, self.made = trt, size, [], 0
        self.cond = threading.Condition()

    @contextlib.contextmanager
    def builder(self):
        with self.cond:
            self.cond.wait_for(lambda: self.free or self.made < self.size)
            b = self.free.pop() if self.free else None
            self.made += b is None
        if b is None:
            try:
                b = _Builder(self.trt)
            except BaseException:
                with self.cond:
                    self.made -= 1
                    self.cond.notify()
                raise
        try:
            yield b
        finally:
            with self.cond:
                self.free.append(b)
                self.cond.notify()


BUILDERS = max(1, min(4, os.cpu_count() or 1))  # each warm builder holds some memory; builds are CPU-bound


@functools.lru_cache(maxsize=None)
def _builders_for(trt) -> _BuilderPool:
    return _BuilderPool(trt, BUILDERS)


@functools.lru_cache(maxsize=None)
def _runtime_for(trt):
    # Its log is read by no one and it lives for the process: recording it would only grow.
    return trt.Runtime(_logger(trt, keep=False))


def network_from_layer(trt, builder, layer: Layer, params: dict, input_shape: tuple):
    """A network with one input, the layer's construction, and one marked output."""
    network = builder.create_network(0)
    x = network.add_input(INPUT_NAME, trt.DataType.FLOAT, tuple(input_shape))
    y = layer.build(trt, network, x, params)
    y.name = OUTPUT_NAME
    network.mark_output(y)
    return network


def engine_bytes_from_network(trt, builder, network, settings: BuildSettings,
                              timing_cache_path: Path | None = None) -> bytes | None:
    config = builder.create_builder_config()
    config.builder_optimization_level = settings.optimization_level
    # DETAILED makes the engine inspector (and the verbose build log) describe every layer.
    config.profiling_verbosity = trt.ProfilingVerbosity.DETAILED
    if not TF32 and hasattr(trt.BuilderFlag, "TF32"):
        config.clear_flag(trt.BuilderFlag.TF32)
    timing = _load_timing_cache(config, timing_cache_path)
    serialized = builder.build_serialized_network(network, config)
    if timing is not None and serialized is not None:
        _save_quietly(timing_cache_path, bytes(memoryview(timing.serialize())))
    return None if serialized is None else bytes(memoryview(serialized))


def _load_timing_cache(config, path: Path | None):
    """Full TensorRT only: TensorRT-RTX's timing cache queries a GPU and breaks CPU-only builds."""
    if path is None:
        return None
    try:
        data = path.read_bytes() if path.exists() else b""
    except OSError:
        data = b""
    cache = config.create_timing_cache(data)
    if cache is None:  # unreadable (e.g. another TensorRT version's): start afresh
        cache = config.create_timing_cache(b"")
    config.set_timing_cache(cache, ignore_mismatch=True)
    return cache


def atomic_write(path: Path, data: bytes) -> None:
    """Write via a temporary file and a rename, so readers never see half a file; OSError on failure,
    with no temporary file left behind."""
    tmp = None
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".tmp-", delete=False) as tmp:
            tmp.write(data)
        os.replace(tmp.name, path)
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp.name)
        raise


def _save_quietly(path: Path, data: bytes) -> None:
    with contextlib.suppress(OSError):  # a timing or runtime cache that cannot be saved only costs time
        atomic_write(path, data)


def runtime_config_for(trt, engine, path: Path | None):
    """TensorRT-RTX where it runs: a runtime config whose runtime cache (JIT kernels) persists in `path`."""
    if path is None or not hasattr(engine, "create_runtime_config"):
        return None, lambda: None
    config = engine.create_runtime_config()
    cache = config.create_runtime_cache()
    if path.exists():
        cache.deserialize(path.read_bytes())
    config.set_runtime_cache(cache)
    return config, lambda: _save_quietly(path, bytes(memoryview(cache.serialize())))


def build_engine(backend: Backend, layer: Layer, params: dict, input_shape: tuple,
                 settings: BuildSettings | None = None, cache_dir: Path | None = None) -> BuildReport:
    """Build the engine for one configuration and report on it; never raises for TensorRT's refusals."""
    trt = backend.trt
    settings = settings or BuildSettings.from_env()
    with _builders_for(trt).builder() as b:
        b.logger.records = []
        start = time.perf_counter()
        output_shape, engine, error = None, None, None
        try:
            network = network_from_layer(trt, b.builder, layer, params, input_shape)
            output_shape = [int(d) for d in network.get_output(0).shape]
            timing_path = cache_dir / "timing.cache" if cache_dir and backend.name == "tensorrt" else None
            engine = engine_bytes_from_network(trt, b.builder, network, settings, timing_path)
        except Exception as exc:  # TensorRT's Python API raises for networks it rejects
            error = str(exc) or type(exc).__name__
        build_ms = (time.perf_counter() - start) * 1e3
        records = b.logger.records
    errors = [m for s, m in records if s in ("ERROR", "INTERNAL_ERROR")]
    if engine is None:
        error = "TensorRT rejected the network: " + ("; ".join(errors) or error or "the build returned no engine")
    return BuildReport(
        status="built" if engine else "failed", build_ms=round(build_ms, 3), output_shape=output_shape,
        layers=layers_from_log(records), log=[[s, m] for s, m in records if s in SHOWN_SEVERITIES],
        error=error, engine=engine)


# -- the engine's layers ----------------------------------------------------------------------
_TENSOR = re.compile(r"\{ Name: (?P<name>[^,]*), Dimensions: \[(?P<dims>[^\]]*)\].*?Datatype: (?P<dtype>\w+), "
                     r"Format: (?P<format>[^}]*?) \}")
_SECTION = re.compile(r"(Inputs|Constants|Outputs): \[(.*?)\](?=, (?:Constants|Outputs|TacticName|Metadata)|$)")


def layers_from_log(records) -> list[dict]:
    """The built engine's layers from the builder's verbose 'Layers:' message (no GPU needed)."""
    text = next((m for _, m in records if m.startswith("Layers:")), "")
    layers = []
    for line in text.splitlines():
        if not line.startswith("Name:"):
            continue
        fields = dict(re.findall(r"(Name|LayerType|TacticName): ([^,]*)", line.split("Inputs:")[0] + line[line.find("TacticName"):]))
        sections = {k: [_tensor(m) for m in _TENSOR.finditer(v)] for k, v in _SECTION.findall(line)}
        layers.append({"name": fields.get("Name", "?"), "type": fields.get("LayerType", "?"),
                       "inputs": sections.get("Inputs", []), "outputs": sections.get("Outputs", []),
                       "tactic": fields.get("TacticName", "")})
    return layers


def _tensor(m) -> dict:
    dims = [int(d) for d in m["dims"].split(",") if d.strip().lstrip("-").isdigit()]
    return {"name": m["name"], "shape": dims, "format": f"{m['dtype']} {m['format']}"}


def engine_from_bytes(trt, data: bytes):
    """Deserialize an engine (needs a GPU this TensorRT supports); the caller owns the result."""
    engine = _runtime_for(trt).deserialize_cuda_engine(data)
    if engine is None:
        raise RuntimeError("TensorRT could not deserialize the engine")
    return engine


def layers_from_engine(trt, engine) -> list[dict]:
    """The engine's layers from the engine inspector (DETAILED profiling verbosity)."""
    inspector = engine.create_engine_inspector()
    info = json.loads(inspector.get_engine_information(trt.LayerInformationFormat.JSON))
    layers = []
    for item in info.get("Layers", []):
        if isinstance(item, str):  # verbosity too low: names only
            layers.append({"name": item, "type": "?", "inputs": [], "outputs": [], "tactic": ""})
            continue
        io = lambda key: [{"name": t.get("Name", "?"), "shape": t.get("Dimensions", []),  # noqa: E731
                           "format": t.get("Format/Datatype", "")} for t in item.get(key, [])]
        layers.append({"name": item.get("Name", "?"), "type": item.get("LayerType", "?"),
                       "inputs": io("Inputs"), "outputs": io("Outputs"), "tactic": item.get("TacticName", "")})
    return layers
