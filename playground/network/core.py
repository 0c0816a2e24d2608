"""One configuration in, one verdict out: resolve → reference → build (or cache) → run.

`evaluate` is what the CLI and the pages call for a layer. It raises `ValidationError` for parameters
that break a layer's rule; everything TensorRT or the GPU says is reported in the result. `evaluate_network`
evaluates a network of resolved layers with named sources (a chain): every tensor's reference and the engine
of the whole network. Both build through `build_network`: one network builder, one report, one cache key.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import weakref
from dataclasses import dataclass, field

import numpy as np

from ..base import chunks
from ..base import precision as P
from ..base.errors import ValidationError
from ..base.memo import Memo
from ..base.reference import max_abs_diff
from ..layers import get_layer
from ..trt import engine as eng
from ..trt.backend import Backend, detect
from ..trt.cache import EngineCache, cache_key
from ..trt.engine import canonical

TIMING_RUNS = 20


@dataclass
class Evaluation:
    layer: str
    params: dict
    input: np.ndarray
    reference: np.ndarray
    output: np.ndarray  # what is shown: TensorRT's output where it ran, else the reference
    output_source: str  # tensorrt | reference
    backend: Backend
    engine_status: str  # built | cached | not_built | pending (build=False) | refused (the builder's answer) | failed
    report: eng.BuildReport | None = None
    cache_key: str | None = None
    max_abs_diff: float | None = None
    latency_ms: float | None = None
    messages: list[str] = field(default_factory=list)
    error: str | None = None
    truth: np.ndarray | None = None  # below FP32: the layer in float64, what the precision's error is measured from
    precision_error: dict | None = None  # precision.errors of the output shown against the truth
    compared: Evaluation | None = None  # compare mode: the same configuration in another precision
    difference: dict | None = None  # precision.errors of this output against the compared one's
    output_key: str | None = None  # the reference memo's key of the output shown while it is the emulation
    inputs: dict = field(default_factory=dict)  # the feed dict by input name (`input` is the first of them)
    digests: dict = field(default_factory=dict)  # `digest` of each of `inputs`, by name: the cache keys' and the ids'

    @property
    def shapes(self):
        """The input's shape, or {input name: shape} where the layer has several inputs (what its rules read)."""
        if len(self.inputs) > 1:
            return {n: tuple(a.shape) for n, a in self.inputs.items()}
        return tuple(self.input.shape)

    def compare_summary(self) -> dict | None:
        """Compare mode's figures (JSON-friendly): the other precision, its own error, and the difference."""
        if self.compared is None or self.difference is None:
            return None
        return {
            "precision": self.compared.params["precision"],
            "error": self.compared.error_summary(),
            "max_abs_difference": self.difference["max_abs_error"],
            "max_rel_difference": self.difference["max_rel_error"],
        }

    def error_summary(self) -> dict | None:
        """The precision's error figures (JSON-friendly; the error tensor itself left out)."""
        if self.precision_error is None:
            return None
        return {k: v for k, v in self.precision_error.items() if k not in ("error", "log_error", "exact_at")} | {
            "source": self.output_source,
            "gpu_crosscheck": self.gpu_agreement,
        }

    @property
    def gpu_agreement(self) -> str | None:
        """Where the output is the emulation: how close it came to a GPU's arithmetic (bench/gpu_crosscheck.py)."""
        if self.output_source == "tensorrt":
            return None
        return P.gpu_agreement(self.layer, self.params.get("precision", "FP32"))

    @property
    def source_label(self) -> str:
        if self.output_source == "tensorrt":
            return f"TensorRT on {self.backend.device}"
        precision = self.params.get("precision", "FP32")
        what = "NumPy reference" if precision == "FP32" else f"NumPy emulation of {precision}"
        return f"{what}: {self.backend.why_not_run}"

    def engine_summary(self) -> dict:
        r = self.report
        return {
            "status": self.engine_status,
            "refusal": self.error if self.engine_status == "refused" else None,
            "build_ms": r.build_ms if r else None,
            "bytes": r.bytes if r else 0,
            "output_shape": r.output_shape if r else None,
            "cache_key": self.cache_key,
            "layers": r.layers if r else [],
            "log": r.warnings if r else [],
        }


_default_cache: EngineCache | None = None
_cache_guard = threading.Lock()


def default_cache() -> EngineCache:
    global _default_cache
    with _cache_guard:
        if _default_cache is None:
            _default_cache = EngineCache()
        return _default_cache


# The digests of read-only arrays (the references, the error maps, a layer's examples: never written after they
# are made) by identity, while the array lives: a revisited configuration's tensors are not hashed again.
_digested: dict[int, tuple] = {}
_digested_lock = threading.RLock()  # a collection inside it may call `_forget_digest` on the same thread


def digest(a: np.ndarray) -> bytes:
    """SHA-256 of an array's bytes in C order (where the CPU has SHA instructions, 3-5× BLAKE2b's speed): the
    values in the reference memo's keys and, with the shape, the id the stage names a tensor by. One pass over
    an input of the element budget is 32 MB: a caller that holds an array's digest passes it on (a page's seat
    makes its input's once, `evaluate`'s `digests`)."""
    fixed, b = isinstance(a, np.ndarray) and not a.flags.writeable, getattr(a, "base", None)
    while fixed and b is not None:  # a view: the memory it shows must be read-only all the way down
        fixed, b = isinstance(b, np.ndarray) and not b.flags.writeable, getattr(b, "base", None)
    if fixed:
        with _digested_lock:
            ref, known = _digested.get(id(a), (None, None))
        if ref is not None and ref() is a:
            return known
    c = np.ascontiguousarray(a).reshape(-1)
    h = hashlib.sha256(memoryview(c).cast("B") if c.size else b"").digest()
    if fixed:
        key = id(a)
        entry = (weakref.ref(a, lambda _, key=key: _forget_digest(key)), h)
        with _digested_lock:
            _digested[key] = entry
    return h


def _forget_digest(key: int) -> None:
    with _digested_lock:
        entry = _digested.get(key)
        if entry is not None and entry[0]() is None:
            del _digested[key]


class _Engines(Memo):
    """Deserialized engines by cache key, so a revisit on a GPU does not deserialize again."""

    def __init__(self, size: int = 16):
        super().__init__(size)

    def get(self, trt, key: str, data: bytes):
        return self.get_or_make(key, lambda: eng.engine_from_bytes(trt, data))


_engines = _Engines()


class _References(Memo):
    """Reference outputs by (layer, parameters, input values), so a revisited configuration does not recompute
    a large convolution on every change. The arrays are shared, so they are made read-only."""

    def __init__(self, max_bytes: int = 256 << 20):
        super().__init__(max_bytes, weight=lambda a: a.nbytes)

    @staticmethod
    def key(layer: str, params: dict, x, values: bytes | None = None) -> str:
        """`x`: the one input, or the feed dict (every input's name, shape and values are part of the key);
        `values`: their `digest`s one after another, where the caller has them."""
        xs = x if isinstance(x, dict) else {"": x}
        h = hashlib.blake2b(
            json.dumps(
                {
                    "layer": layer,
                    "params": {k: canonical(v) for k, v in params.items()},
                    "shape": list(x.shape) if not isinstance(x, dict) else {n: list(a.shape) for n, a in xs.items()},
                },
                sort_keys=True,
            ).encode(),
            digest_size=20,
        )
        h.update(values or b"".join(map(digest, x.values() if isinstance(x, dict) else [x])))
        return h.hexdigest()

    def get(self, layer, params: dict, x, key: str | None = None) -> np.ndarray:
        """The layer's output on `x` (an array, or the feed dict) in params["precision"] (emulated below FP32;
        float64 for precision.TRUTH); `key`: this configuration's `key`, where the caller has it."""

        def compute() -> np.ndarray:
            with np.errstate(all="ignore"):  # NaN/Inf in the input are data to show, not warnings
                out = P.emulate(layer, x, params)
            if any(np.shares_memory(out, a) for a in (x.values() if isinstance(x, dict) else [x])):
                out = out.copy()  # never make the caller's input read-only
            out.setflags(write=False)
            return out

        return self.get_or_make(key or self.key(layer.name, params, x), compute)


_references = _References()


class _Measures(Memo):
    """precision.errors of one emulated output against another (its truth, or compare mode's other output), by
    their reference keys: a revisited configuration shows its error map without a pass over both tensors
    (0.75 s at the element budget). Where TensorRT's output is measured there is no key, and no memo."""

    def __init__(self, max_bytes: int = 128 << 20):
        super().__init__(max_bytes, weight=lambda e: e["error"].nbytes + e["log_error"].nbytes)

    def get(self, keys: tuple, y: np.ndarray, truth: np.ndarray, precision: str, scale: float) -> dict:
        def compute() -> dict:
            e = P.errors(y, truth, precision, scale)
            e["error"].setflags(write=False)  # shared between sessions
            e["log_error"].setflags(write=False)
            return e

        return compute() if None in keys else self.get_or_make((*keys, precision, scale), compute)


_measures = _Measures()


def evaluate(
    layer_name: str,
    raw_params: dict | None = None,
    x=None,
    *,
    backend: Backend | None = None,
    cache: EngineCache | None = None,
    run: bool = True,
    compare: str | None = None,
    build: bool = True,
    digests: dict | None = None,
    fit: bool = False,
) -> Evaluation:
    """The configuration's verdict; `compare` names a second precision to evaluate the same configuration in
    (compare mode: `compared` and the `difference` between the two outputs). build=False: the reference only,
    at once, its engine "pending" (a stage being scrubbed where no engine runs; the engine is built after). `x`: the
    input array (a layer's first input), or the feed dict {input name: array}; an input not given is its example.
    `digests`: {input name: `digest`} of the arrays given, where the caller holds them (a page's seat): the inputs
    are not hashed again. `fit`: a page's evaluation, whose inputs the layer brings along where a choice reads them
    otherwise (`Layer.fit`: a matrix product's TRANSPOSE), a message saying so."""
    result = _evaluate(
        layer_name, raw_params, x, backend=backend, cache=cache, run=run, build=build, digests=digests, fit=fit
    )
    if compare is not None and compare != result.params["precision"]:
        other = _evaluate(
            layer_name,
            {**(raw_params or {}), "precision": compare},
            result.inputs,
            backend=result.backend,
            cache=cache,
            run=run,
            build=build,
            digests=result.digests,
        )
        result.compared = other
        if other.output.shape == result.output.shape:
            label = f"{result.params['precision']} − {compare}"
            result.difference = _measures.get(
                (result.output_key, other.output_key),
                result.output,
                other.output,
                label,
                result.params["quantize_scale"],
            )
    return result


def _evaluate(
    layer_name: str,
    raw_params: dict | None,
    x,
    *,
    backend: Backend | None,
    cache: EngineCache | None,
    run: bool,
    build: bool = True,
    digests: dict | None = None,
    fit: bool = False,
) -> Evaluation:
    layer = get_layer(layer_name)
    raw_params = raw_params or {}
    xs = layer.feed(x)  # 0-d stays 0-d
    brought = None
    try:
        params = layer.resolve(raw_params, {n: a.shape for n, a in xs.items()})  # ValidationError before TensorRT
    except ValidationError:
        brought = layer.fitted(raw_params, {n: a.shape for n, a in xs.items()}) if fit else None
        if brought is None:
            raise
        (orders, params, _), digests = brought, {n: d for n, d in (digests or {}).items() if n not in brought[0]}
        xs = {n: np.ascontiguousarray(np.transpose(a, orders[n])) if n in orders else a for n, a in xs.items()}
    xs = {n: xs[n] for n in layer.used_inputs(params)}  # only the inputs this configuration reads go on
    params = P.with_data_scale(params, {n: a for n, a in xs.items() if n not in layer.index_inputs})
    backend = backend or detect()
    digests = {n: (digests or {}).get(n) or digest(a) for n, a in xs.items()}  # one pass over each input, at most
    values = b"".join(digests.values())
    key = _References.key(layer.name, params, xs, values)
    truth_key = truth = None
    if params["precision"] != "FP32":  # the float64 truth is made beside the output, on another core where large
        truth_params = {**params, "precision": P.TRUTH}
        truth_key = _References.key(layer.name, truth_params, xs, values)
        size = sum(a.size for a in xs.values())
        truth = chunks.beside(lambda: _references.get(layer, truth_params, xs, truth_key), size)
    reference = _references.get(layer, params, xs, key)
    result = Evaluation(
        layer.name,
        params,
        xs[layer.inputs[0].name],
        reference,
        reference,
        "reference",
        backend,
        "not_built",
        messages=layer.notes_for(raw_params, params) + ([brought[2]] if brought else []),
        output_key=key,
        inputs=xs,
        digests=digests,
    )
    if truth is not None:
        result.truth = truth()
    if not backend.can_build:
        result.messages += [f"Not used: {why}." for why in backend.passed_over]
        result.messages.append(f"No engine was built ({backend.why_not_run}).")
        return _measured(result, truth_key)
    if not build:
        result.engine_status = "pending"
        return _measured(result, truth_key)
    cache = cache or default_cache()
    report = _build(result, cache)
    if report is None:
        return _measured(result, truth_key)
    if run and backend.can_run:
        _run_on_gpu(result, report, cache.path)
    return _measured(result, truth_key)


def _build(result: Evaluation, cache: EngineCache) -> eng.BuildReport | None:
    """Build `result`'s engine (or find it in the cache) and record the verdict on it; its report where it built."""
    layer, params, backend = get_layer(result.layer), result.params, result.backend
    known = layer.limits(params, backend.name) if layer.limits else None
    if known:  # said before the build; the build still runs, and its own words are the verdict
        result.messages.append(f"Expected refusal: {known}.")
    shapes = {n: a.shape for n, a in result.inputs.items()}
    built = build_network(eng.Network.of_layer(layer, params, shapes), backend, cache)
    report, result.cache_key = built.report, built.cache_key
    result.report, result.engine_status = report, built.status
    result.messages += built.notes
    if report.status != "built":
        result.error = report.error + (f" ({known})" if known and report.status == "refused" else "")
        if params["precision"] != "FP32":
            result.error += (
                f" ({layer.name} in {params['precision']}: the output shown is the NumPy emulation of "
                f"{params['precision']})"
            )
        return None
    if report.output_shape and tuple(report.output_shape) != result.reference.shape:
        result.messages.append(
            f"TensorRT inferred output shape {tuple(report.output_shape)} but the reference "
            f"computed {result.reference.shape}."
        )
    return report


# -- networks: a layer is a network of one; a chain, several layers with named sources ----------------------------
@dataclass
class NetworkBuild:
    """A network's engine: TensorRT's report, its layers with `fuses` (the nodes each computes) and `role`, and the
    nodes that no engine layer names (their work went into data movement, or TensorRT removed it)."""

    report: eng.BuildReport | None
    status: str  # built | cached | refused | failed | not_built | pending (build=False)
    builder: str  # which TensorRT made it
    layers: list[dict] = field(default_factory=list)
    absorbed: list[str] = field(default_factory=list)
    fusion_log: list[str] = field(default_factory=list)
    cache_key: str | None = None
    marked: bool = False  # a second, labelled build: every intermediate marked as an output (not for deployment)
    notes: list[str] = field(default_factory=list)  # what the engine cache said (a file it could not read)

    def kernels_of(self, key: str) -> list[int]:
        """The indices of the engine layers that compute node `key`."""
        return [i for i, layer in enumerate(self.layers) if key in layer["fuses"]]

    def summary(self) -> dict:
        r = self.report
        return {
            "status": self.status,
            "builder": self.builder,
            "ran": False,
            "marked_intermediates": self.marked,
            "refusal": r.error if r and r.status != "built" else None,
            "build_ms": r.build_ms if r else None,
            "bytes": r.bytes if r else 0,
            "output_shape": r.output_shape if r else None,
            "cache_key": self.cache_key,
            "layers": self.layers,
            "absorbed": self.absorbed,
            "fusion_log": self.fusion_log,
            "log": r.warnings if r else [],
        }


def build_network(net: eng.Network, backend: Backend | None = None, cache: EngineCache | None = None) -> NetworkBuild:
    """`net`'s engine, from the engine cache (keyed by `net.describe()`) where it was built before, each engine layer
    mapped onto the nodes it computes."""
    backend = backend or detect()
    who = f"{backend.name} {backend.version}" if backend.can_build else "none"
    if not backend.can_build:
        return NetworkBuild(None, "not_built", who, marked=net.marked)
    cache = cache or default_cache()
    settings = eng.BuildSettings.from_env()
    key = cache_key(net.describe(), backend, settings)
    report, status, notes = cache.get_or_build(key, lambda: eng.build_network(backend, net, settings, cache.path))
    out = NetworkBuild(
        report,
        status if report.status == "built" else report.status,
        who,
        cache_key=key,
        marked=net.marked,
        notes=cache.warnings + notes,
    )
    if report.status != "built":
        return out
    keys = tuple(node.key for node in net.nodes)
    for layer in report.layers:
        entry = {k: layer.get(k) for k in ("name", "type", "tactic", "inputs", "outputs")}
        entry["fuses"] = eng.fuses_of(layer, keys)
        entry["role"] = eng.role_of(entry)
        out.layers.append(entry)
    out.absorbed = [k for k in keys if not out.kernels_of(k)]
    out.fusion_log = report.fusion_log
    return out


def _data_scaled(node, xs: dict):
    """`node` with the quantize scale its data inputs give, where its parameters ask for one from the data."""
    params = P.with_data_scale(node.params, {n: a for n, a in xs.items() if n not in node.layer.index_inputs})
    return node if params is node.params else dataclasses.replace(node, params=params)


def references(nodes, feed: dict) -> tuple[dict, tuple]:
    """({every input and every node's output by name}, the nodes with their data's quantize scales): each node's
    reference in its own precision (emulated below FP32) on its sources, from the references' memo the layer pages
    share (a node whose inputs are unchanged is not computed again). The arrays are read-only."""
    tensors = dict(feed)
    done = []
    for node in nodes:
        xs = {n: tensors[s] for n, s in node.sources.items()}
        node = _data_scaled(node, xs)
        tensors[node.key] = np.ascontiguousarray(_references.get(node.layer, node.params, xs), dtype=np.float32)
        done.append(node)
    return tensors, tuple(done)


@dataclass
class NetworkEvaluation:
    tensors: dict[str, np.ndarray]  # every input and every node's output, by name: the references
    nodes: tuple  # the nodes as built (the quantize scales their data gave)
    engine: NetworkBuild


def evaluate_network(
    net: eng.Network,
    feed: dict,
    *,
    backend: Backend | None = None,
    cache: EngineCache | None = None,
    build: bool = True,
) -> NetworkEvaluation:
    """A network of resolved nodes (key, layer, params, {input name: source}) on the feed dict of its inputs by name:
    every tensor's reference and the network's engine (build=False: "pending"), built with the quantize scales the
    data gives. Nothing runs the engine here."""
    tensors, nodes = references(net.nodes, feed)
    net = dataclasses.replace(net, nodes=nodes)
    engine = build_network(net, backend, cache) if build else NetworkBuild(None, "pending", "", marked=net.marked)
    return NetworkEvaluation(tensors, nodes, engine)


_completing = threading.Lock()


def complete(result: Evaluation, cache: EngineCache | None = None) -> Evaluation:
    """An evaluation made with build=False where no engine runs, its engine built now (or found in the engine
    cache): the same Evaluation completed in place, compare mode's too; its reference and measures stand (the
    output shown is the reference either way). The stage draws the reference first and the verdict follows,
    without the configuration being evaluated again."""
    for ev in (result, result.compared):
        if ev is None or ev.engine_status != "pending" or ev.backend.can_run:
            continue
        scratch = dataclasses.replace(ev, messages=[], error=None)
        _build(scratch, cache or default_cache())
        with _completing:  # two requests may complete it at once: the first verdict is recorded, once
            if ev.engine_status == "pending":
                ev.report, ev.engine_status, ev.cache_key, ev.error = (
                    scratch.report,
                    scratch.engine_status,
                    scratch.cache_key,
                    scratch.error,
                )
                ev.messages += scratch.messages
    return result


def _measured(result: Evaluation, truth_key: str | None) -> Evaluation:
    """The precision's error on the output shown (TensorRT's, or the emulation) against the layer in float64."""
    if result.truth is not None and result.truth.shape == result.output.shape:
        result.precision_error = _measures.get(
            (result.output_key, truth_key),
            result.output,
            result.truth,
            result.params["precision"],
            result.params["quantize_scale"],
        )
    return result


def _run_on_gpu(result: Evaluation, report: eng.BuildReport, cache_dir) -> None:
    from ..trt import runner  # the GPU path only

    trt = result.backend.trt
    try:
        engine = _engines.get(trt, result.cache_key, report.engine)
        runtime_cache = cache_dir / "runtime.cache" if cache_dir and result.backend.name == "tensorrt_rtx" else None
        config, save_runtime_cache = eng.runtime_config_for(trt, engine, runtime_cache)
        names = eng.network_inputs(get_layer(result.layer))
        outputs, latency = runner.run_engine(
            engine, {names[n]: a for n, a in result.inputs.items()}, timing_runs=TIMING_RUNS, runtime_config=config
        )
        save_runtime_cache()
        report.layers = eng.layers_from_engine(trt, engine) or report.layers
    except Exception as exc:  # noqa: BLE001 - a GPU failure leaves the reference on screen, and says why
        result.messages.append(f"Running the engine failed ({exc}); showing the NumPy reference.")
        return
    out = outputs[eng.OUTPUT_NAME].astype(np.float32)
    result.output, result.output_source, result.latency_ms = out, "tensorrt", latency
    result.output_key = None  # TensorRT's output is measured afresh
    if out.shape == result.reference.shape:
        result.max_abs_diff = max_abs_diff(out, result.reference)
