"""Build TensorRT networks: a `Network` (a layer is a network of one; a chain, several layers with named sources)
→ network_from → engine_bytes_from_network → BuildReport.

Builders live for the process (a warm builder is what makes a rebuild fast), in a small pool: a
builder serves one build at a time, and builds of different configurations run side by side (TensorRT
releases the GIL while it builds). One logger per module files each message under its build's thread. TensorRT
objects are created and released inside the function that owns them.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..base import precision as P
from ..base.budget import env_number
from ..base.files import atomic_write
from ..base.layer import Layer
from .backend import Backend

INPUT_NAME, OUTPUT_NAME = "inputT0", "outputT0"  # the first input's; a layer's i-th input is "inputT{i}"


def network_inputs(layer: Layer) -> dict[str, str]:
    """{the layer's input name: its network input's name}, in declared order."""
    return {n: f"inputT{i}" for i, n in enumerate(layer.input_names)}


SEVERITIES = ("INTERNAL_ERROR", "ERROR", "WARNING", "INFO", "VERBOSE")
SHOWN_SEVERITIES = ("INTERNAL_ERROR", "ERROR", "WARNING")
# TensorRT's verbose words about fusion, kept in a build's log (as VERBOSE records) beside its warnings and errors.
FUSION_WORDS = re.compile(r"fusion|fusing|fused|ForeignNode|Removing|eliminat", re.IGNORECASE)


# An engine's status in words: the stage's badge and the page's Engine tab both say it so (one spelling).
ENGINE_STATUS = {
    "built": "built now",
    "cached": "from cache",
    "refused": "refused by its builder",
    "failed": "failed",
    "not_built": "not built",
    "pending": "not built yet",
}


def canonical(value):
    """A stable, JSON-able form of a parameter value; arrays by dtype, shape and content hash."""
    if isinstance(value, np.ndarray):
        a = np.ascontiguousarray(value)
        return {"dtype": str(a.dtype), "shape": list(a.shape), "sha256": hashlib.sha256(a.tobytes()).hexdigest()}
    if isinstance(value, tuple):
        return list(value)
    return value


@dataclass
class BuildReport:
    """What a build produced; everything but the engine bytes is JSON-friendly metadata."""

    status: str  # built | refused (the builder said no: an answer) | failed (no builder here)
    build_ms: float
    output_shape: list[int] | None  # TensorRT's own shape inference
    layers: list[dict] = field(default_factory=list)
    log: list[list[str]] = field(default_factory=list)  # [severity, message]: warnings, errors, fusion words
    error: str | None = None
    engine: bytes | None = field(default=None, repr=False)

    @property
    def bytes(self) -> int:
        return len(self.engine) if self.engine else 0

    @property
    def warnings(self) -> list[list[str]]:
        """The log's warnings and errors."""
        return [m for m in self.log if m[0] != "VERBOSE"]

    @property
    def fusion_log(self) -> list[str]:
        """TensorRT's verbose words about fusion (`FUSION_WORDS`)."""
        return [m for s, m in self.log if s == "VERBOSE"]

    def meta(self) -> dict:
        d = asdict(self)
        d.pop("engine")
        return d


@dataclass(frozen=True)
class BuildSettings:
    """Builder settings that matter for interactive rebuilds (part of the cache key)."""

    optimization_level: int = 0  # 0 builds fastest; TensorRT's own default is 3

    @staticmethod
    def from_env() -> BuildSettings:
        return BuildSettings(env_number("PLAYGROUND_OPT_LEVEL", 0, 0, 5))


@functools.cache
def logger_for(trt):
    """The one logger of a TensorRT module for this process. Full TensorRT keeps a single logger while any
    builder or runtime lives and ignores the one given to the next, so a logger per builder would mix
    builds' logs; this one files each message under the thread whose build (see `capture`) it belongs to."""

    class Log(trt.ILogger):
        def __init__(self):
            trt.ILogger.__init__(self)
            self.local = threading.local()

        def log(self, severity, msg):
            records = getattr(self.local, "records", None)
            if records is not None:  # messages outside a build (runtime, detection) are read by no one
                records.append((severity.name, msg))

    return Log()


@contextlib.contextmanager
def capture(trt, records: list):
    """Collect into `records` what TensorRT logs on this thread while the block runs."""
    local = logger_for(trt).local
    local.records = records
    try:
        yield records
    finally:
        local.records = None


def _new_builder(trt):
    return trt.Builder(logger_for(trt))


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
                b = _new_builder(self.trt)
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


@functools.cache
def _builders_for(trt) -> _BuilderPool:
    return _BuilderPool(trt, BUILDERS)


@functools.cache
def _runtime_for(trt):
    return trt.Runtime(logger_for(trt))


def network_flags(trt) -> int:
    """STRONGLY_TYPED where the flag exists: TensorRT 10.x networks are weakly typed without it (TensorRT could
    pick another precision than the network's types say); 11.x and TensorRT for RTX accept it and ignore it."""
    flag = getattr(trt.NetworkDefinitionCreationFlag, "STRONGLY_TYPED", None)
    return 0 if flag is None else 1 << int(flag)


@dataclass(frozen=True)
class Node:
    """One layer of a network: its key (what its network layers are named by), the layer, its resolved parameters
    and {input name: source}, a source being one of the network's inputs or an earlier node's key."""

    key: str
    layer: Layer
    params: dict
    sources: dict


@dataclass(frozen=True)
class Network:
    """A network as the playground builds it: its inputs {name: shape} (float32), named `names[name]` in the network,
    its nodes in order (anything with key, layer, params and sources: a chain's links are nodes), the last node's
    output the one output, `outputT0`; marked=True: every other node's output marked too (`KEY.output`), as a
    debugging build marks them, which changes what TensorRT fuses."""

    inputs: dict
    names: dict
    nodes: tuple
    marked: bool = False

    @staticmethod
    def of_layer(layer: Layer, params: dict, input_shape) -> Network:
        """The network of one layer: one input per input the configuration reads (`input_shape`: one shape, or a
        dict of shapes by input name), each named as `network_inputs` names it; the node keyed by the layer's name."""
        shapes, used = layer.shapes_of(input_shape), layer.used_inputs(params)
        names = {n: t for n, t in network_inputs(layer).items() if n in used}
        return Network({n: shapes[n] for n in names}, names, (Node(layer.name, layer, params, {n: n for n in names}),))

    def describe(self) -> dict:
        """What the engine is made of, JSON-able (the engine cache's key): inputs, nodes, marked outputs."""
        return {
            "inputs": {self.names[n]: {"shape": list(s), "dtype": "float32"} for n, s in self.inputs.items()},
            "nodes": [
                {
                    "key": node.key,
                    "layer": node.layer.name,
                    "params": {k: canonical(v) for k, v in node.params.items()},
                    # by the network's names: a layer's page and the chain of that one layer are one engine
                    "sources": {n: self.names.get(src, src) for n, src in node.sources.items()},
                }
                for node in self.nodes
            ],
            "marked": self.marked,
        }

    @property
    def tf32(self) -> bool:
        """The builder's TF32 flag: any node in TF32 (a flag of the whole build, not of a layer)."""
        return any(node.params["precision"] == "TF32" for node in self.nodes)


def metadata_of(key: str) -> str:
    return f"[{key}]"


def network_from(trt, builder, net: Network):
    """(network, arrays it reads at build time): `net`'s inputs, each node's construction in its own precision
    (casts for FP16/BF16, a Q/DQ pair on each data input for INT8/FP8; index inputs stay exact), its network
    layers named `KEY` (the last) and `KEY/1`, `KEY/2`, … (the rest), each with metadata `[KEY]` (TensorRT-RTX
    writes it beside each engine layer in its verbose layer dump: what an engine layer computes is read back from
    it); the last output marked, `outputT0`, float32 (and with `net.marked`, the others)."""
    network = builder.create_network(network_flags(trt))
    tensors = {n: network.add_input(net.names[n], trt.DataType.FLOAT, tuple(s)) for n, s in net.inputs.items()}
    kept = []
    for node in net.nodes:
        before, p = network.num_layers, node.params
        xs = {
            n: tensors[s]
            if n in node.layer.index_inputs
            else P.precision_input(trt, network, tensors[s], p["precision"], p["quantize_scale"])
            for n, s in node.sources.items()
        }
        typed = P.TypedNetwork(trt, network, p["precision"]) if p["precision"] in P.FLOAT_TYPES else None
        y = node.layer.construct(trt, typed or network, xs, p)
        y = P.precision_output(trt, network, y, p["precision"])
        kept += typed.kept if typed else []
        added = range(before, network.num_layers)
        for n, i in enumerate(added):
            layer = network.get_layer(i)
            layer.name = node.key if i == added[-1] else f"{node.key}/{n + 1}"
            if hasattr(layer, "metadata"):
                layer.metadata = metadata_of(node.key)
        y.name = f"{node.key}.output"
        tensors[node.key] = y
    y = tensors[net.nodes[-1].key]
    y.name = OUTPUT_NAME
    network.mark_output(y)
    if net.marked:
        for node in net.nodes[:-1]:
            network.mark_output(tensors[node.key])
    return network, kept


def network_from_layer(trt, builder, layer: Layer, params: dict, input_shape):
    """The network of one layer (`Network.of_layer`)."""
    return network_from(trt, builder, Network.of_layer(layer, params, input_shape))


def engine_bytes_from_network(
    trt, builder, network, settings: BuildSettings, timing_cache_path: Path | None = None, tf32: bool = False
) -> bytes | None:
    config = builder.create_builder_config()
    config.builder_optimization_level = settings.optimization_level
    # DETAILED makes the engine inspector (and the verbose build log) describe every layer.
    config.profiling_verbosity = trt.ProfilingVerbosity.DETAILED
    # TF32 is TensorRT's default; FP32 means exact float32 multiplies (the spec's tables on Ampere and later).
    if tf32:
        config.set_flag(trt.BuilderFlag.TF32)
    elif hasattr(trt.BuilderFlag, "TF32"):
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


def _save_quietly(path: Path, data: bytes) -> None:
    with contextlib.suppress(OSError):  # a timing or runtime cache that cannot be saved only costs time
        atomic_write(path, data)


def runtime_config_for(trt, engine, path: Path | None):
    """TensorRT-RTX where it runs: a runtime config whose runtime cache (JIT kernels) persists in `path`.
    Full TensorRT 11 has runtime configs too, but no runtime cache: the guard is on what is called."""
    if path is None or not hasattr(getattr(trt, "IRuntimeConfig", None), "create_runtime_cache"):
        return None, lambda: None
    config = engine.create_runtime_config()
    cache = config.create_runtime_cache()
    if path.exists():
        cache.deserialize(path.read_bytes())
    config.set_runtime_cache(cache)
    return config, lambda: _save_quietly(path, bytes(memoryview(cache.serialize())))


def build_engine(
    backend: Backend,
    layer: Layer,
    params: dict,
    input_shape,
    settings: BuildSettings | None = None,
    cache_dir: Path | None = None,
) -> BuildReport:
    """Build the engine for one configuration and report on it; never raises for TensorRT's refusals."""
    return build_network(backend, Network.of_layer(layer, params, input_shape), settings, cache_dir)


def build_network(
    backend: Backend, net: Network, settings: BuildSettings | None = None, cache_dir: Path | None = None
) -> BuildReport:
    """Build `net` and report on it; never raises for TensorRT's refusals."""
    return _build(backend, lambda trt, builder: network_from(trt, builder, net), settings, cache_dir, tf32=net.tf32)


def build_onnx(
    backend: Backend, model: bytes, settings: BuildSettings | None = None, prepare: Callable | None = None
) -> BuildReport:
    """Build an ONNX model through TensorRT's own ONNX parser (OnnxParser), reported as `build_engine` reports:
    the parser's refusal is the builder's. `prepare(trt, network)`: called on the parsed network before the build."""

    def network(trt, builder):
        net = builder.create_network(network_flags(trt))
        parser = trt.OnnxParser(net, logger_for(trt))
        if not parser.parse(model):
            raise ValueError(
                "; ".join(str(parser.get_error(i).desc()) for i in range(parser.num_errors))
                or "the parser refused the model"
            )
        if prepare is not None:
            prepare(trt, net)
        return net, parser  # the parser owns the weights the network reads: alive until the build ends

    return _build(backend, network, settings, None, tf32=False)


def _build(
    backend: Backend, make_network: Callable, settings: BuildSettings | None, cache_dir: Path | None, tf32: bool
) -> BuildReport:
    trt = backend.trt
    settings = settings or BuildSettings.from_env()
    start = time.perf_counter()
    output_shape, engine, error, refused, records = None, None, None, None, []
    try:
        with _builders_for(trt).builder() as builder, capture(trt, records):
            try:
                network, _kept = make_network(trt, builder)  # (network, what it reads): alive until built
                output_shape = [int(d) for d in network.get_output(0).shape]
                timing_path = cache_dir / "timing.cache" if cache_dir and backend.name == "tensorrt" else None
                engine = engine_bytes_from_network(trt, builder, network, settings, timing_path, tf32=tf32)
            except Exception as exc:  # noqa: BLE001 - TensorRT's Python API raises for networks it rejects
                refused = str(exc) or type(exc).__name__
    except Exception as exc:  # noqa: BLE001 - no builder: full TensorRT on a machine whose GPU it cannot use
        error = f"{backend.name} {backend.version} could not make a builder here: {exc}"
    build_ms = (time.perf_counter() - start) * 1e3
    if engine is None and error is None:
        errors = [m for s, m in records if s in ("ERROR", "INTERNAL_ERROR")]
        refused = f"{backend.name} {backend.version} refused the network: " + (
            "; ".join(errors) or refused or "the build returned no engine"
        )
    words = [["VERBOSE", m] for s, m in records if s == "VERBOSE" and len(m) < 300 and FUSION_WORDS.search(m)]
    return BuildReport(
        status="built" if engine else "refused" if refused else "failed",
        build_ms=round(build_ms, 3),
        output_shape=output_shape,
        layers=layers_from_log(records),
        log=[[s, m] for s, m in records if s in SHOWN_SEVERITIES] + (words if engine else []),
        error=error or refused,
        engine=engine,
    )


# -- the engine's layers ----------------------------------------------------------------------
# Where the engine cannot be deserialized (no GPU this TensorRT runs on), its layers come from the verbose
# build log, which TensorRT for RTX and full TensorRT word differently:
#   RTX:     "Layers:\nName: …, LayerType: …, Inputs: [ { Name: …, Dimensions: […], …, Datatype: Float, Format: … }], …"
#   8.x/10.x "Engine Layer Information:\nLayer(CaskConvolution): NAME, Tactic: 0x…, IN[Float(1,1,6,9)] -> OUT[Float(…)]"
#   later:   the same with tensors written "IN (Float[1,1,6,9])".
_RTX_TENSOR = re.compile(
    r"\{ Name: (?P<name>[^,]*), Dimensions: \[(?P<dims>[^\]]*)\].*?Datatype: (?P<dtype>\w+), "
    r"Format: (?P<format>[^}]*?) \}"
)
_RTX_SECTION = re.compile(r"(Inputs|Constants|Outputs): \[(.*?)\](?=, (?:Constants|Outputs|TacticName|Metadata)|$)")
_ONNX_LAYER = re.compile(r"\[ONNX Layer: ([^\x1f]*?)\](?=\x1f|$)")
_TRT_LAYER = re.compile(r"^Layer\((?P<type>[^)]*)\): (?P<rest>.*)$")
_TRT_TENSOR = re.compile(
    r"(?:^|, )(?P<name>.+?)(?:\[(?P<dtype>\w+)\((?P<dims>[^)]*)\)\]"
    r"| \((?P<dtype2>\w+)\[(?P<dims2>[^\]]*)\]\))(?=, |$)"
)


def layers_from_log(records) -> list[dict]:
    """The built engine's layers from the builder's verbose layer dump, in either wording (no GPU needed)."""
    for _, message in records:
        if message.startswith("Layers:"):
            return _layers_from_rtx_dump(message)
        if message.startswith("Engine Layer Information:"):
            return _layers_from_trt_dump(message)
    return []


def _layers_from_rtx_dump(text: str) -> list[dict]:
    layers = []
    for line in text.splitlines():
        if not line.startswith("Name:"):
            continue
        fields = dict(
            re.findall(
                r"(Name|LayerType|TacticName): ([^,]*)", line.split("Inputs:")[0] + line[line.find("TacticName") :]
            )
        )
        sections = {
            k: [_layer_tensor(m["name"], m["dims"], m["dtype"], m["format"]) for m in _RTX_TENSOR.finditer(v)]
            for k, v in _RTX_SECTION.findall(line)
        }
        layers.append(
            {
                "name": fields.get("Name", "?"),
                "type": fields.get("LayerType", "?"),
                "inputs": sections.get("Inputs", []),
                "outputs": sections.get("Outputs", []),
                "tactic": fields.get("TacticName", ""),
                # what the network layers it computes carry: `[KEY]` (network_from), or the parser's ONNX nodes
                "metadata": line.partition(", Metadata: ")[2].strip(),
                # the ONNX nodes the layer computes, as the parser recorded them ("[ONNX Layer: n0]\x1f…")
                "onnx_nodes": _ONNX_LAYER.findall(line.partition(", Metadata: ")[2]),
            }
        )
    return layers


def _layers_from_trt_dump(text: str) -> list[dict]:
    layers = []
    for line in text.splitlines():
        m = _TRT_LAYER.match(line.strip())
        if not m or " -> " not in m["rest"]:
            continue
        head, outputs = m["rest"].rsplit(" -> ", 1)
        if ", Tactic: " in head:
            name, tail = head.split(", Tactic: ", 1)
            tactic, _, inputs = tail.partition(", ")
        else:
            (name, _, inputs), tactic = head.partition(", "), ""

        def tensors(part):
            return [
                _layer_tensor(t["name"], t["dims"] or t["dims2"] or "", t["dtype"] or t["dtype2"])
                for t in _TRT_TENSOR.finditer(part)
            ]

        layers.append(
            {"name": name, "type": m["type"], "inputs": tensors(inputs), "outputs": tensors(outputs), "tactic": tactic}
        )
    return layers


def _layer_tensor(name: str, dims: str, dtype: str, fmt: str = "") -> dict:
    shape = [int(d) for d in dims.split(",") if d.strip().lstrip("-").isdigit()]
    return {"name": name.strip(), "shape": shape, "format": f"{dtype} {fmt}".strip()}


def engine_from_bytes(trt, data: bytes):
    """Deserialize an engine (needs a GPU this TensorRT supports); the caller owns the result."""
    engine = _runtime_for(trt).deserialize_cuda_engine(data)
    if engine is None:
        raise RuntimeError("TensorRT could not deserialize the engine")
    return engine


def layers_from_engine(trt, engine) -> list[dict]:
    """The engine's layers from the engine inspector (DETAILED profiling verbosity)."""
    inspector = engine.create_engine_inspector()
    return layers_from_inspector_json(inspector.get_engine_information(trt.LayerInformationFormat.JSON))


def layers_from_inspector_json(text: str) -> list[dict]:
    """The inspector's JSON in every known spelling: TensorRT 10.x writes a tensor's "Format/Datatype" as one
    field; TensorRT 11 and TensorRT for RTX write "Datatype" and "Format" apart. Below DETAILED verbosity a
    layer is its name alone."""

    def tensor(t: dict) -> dict:
        fmt = t.get("Format/Datatype") or " ".join(str(t[k]) for k in ("Datatype", "Format") if t.get(k))
        return {"name": t.get("Name", "?"), "shape": list(t.get("Dimensions", [])), "format": fmt}

    layers = []
    for item in json.loads(text).get("Layers", []):
        if isinstance(item, str):
            layers.append({"name": item, "type": "?", "inputs": [], "outputs": [], "tactic": ""})
            continue
        layers.append(
            {
                "name": item.get("Name", "?"),
                "type": item.get("LayerType", "?"),
                "inputs": [tensor(t) for t in item.get("Inputs", [])],
                "outputs": [tensor(t) for t in item.get("Outputs", [])],
                "tactic": str(item.get("TacticName") or item.get("TacticValue") or ""),
            }
        )
    return layers


# -- which nodes an engine layer computes --------------------------------------------------------------------------
_METADATA = re.compile(r"\[([^\[\]]+)\]")
_FOREIGN = re.compile(r"ForeignNode\[(?P<first>[^\]]*?)\.\.\.(?P<last>[^\]]*)\]")
MOVES = ("Move", "Tran", "Copy", "Reformat", "Shuffle", "NoOp", "Reshape")


def fuses_of(engine_layer: dict, keys: tuple[str, ...]) -> list[str]:
    """The network's nodes this engine layer computes, in the network's order: from its metadata where TensorRT
    wrote it (`[KEY]`, `network_from`), else from its name (full TensorRT joins fused layers' names with "+"; a
    Myelin node is `{ForeignNode[FIRST...LAST]}`, every node from FIRST to LAST)."""
    named = set()
    meta = engine_layer.get("metadata") or ""
    for token in _METADATA.findall(meta):
        named.add(token)
    if not meta:
        name = engine_layer.get("name", "")
        for m in _FOREIGN.finditer(name):
            first, last = (t.split("/")[0] for t in (m["first"], m["last"]))
            if first in keys and last in keys:
                named.update(keys[keys.index(first) : keys.index(last) + 1])
        for part in re.split(r"\s*\+\s*", name):
            named.add(part.split("/")[0].strip())
    return [k for k in keys if k in named]


def role_of(engine_layer: dict) -> str:
    """compute | data movement (a Move, Transpose, Copy or reformat kernel: it changes where values lie, not them)."""
    if engine_layer.get("fuses"):
        return "compute"
    name, kind = engine_layer.get("name", ""), engine_layer.get("type", "")
    ops = re.match(r"__myl_([A-Za-z]+?)_", name)
    if kind.lower() in ("reformat", "shuffle", "noop") or (
        ops and all(any(op.startswith(m) for m in MOVES) for op in re.findall(r"[A-Z][a-z]*", ops[1]))
    ):
        return "data movement"
    return "compute"
