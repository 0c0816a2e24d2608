"""Which node costs a model its accuracy in FP16, BF16, INT8 or FP8: every node that opens as a layer, in that
precision, on its real input (local error) and composed through the model (accumulated error), against the FP32
tensors ONNX Runtime computes; the first node whose accumulated error crosses an explicit policy; and a plan of
nodes to keep in FP32 so that the model's output meets it.

Composition: the nodes in the model's order (ONNX keeps it topological), each opened node's layer reference
(`precision.emulate`, as the layer pages compute it) on the tensors the nodes before it composed. A node no layer
computes (shape arithmetic, an op without a layer, a node past the work budget, a reference that fails) runs in
ONNX Runtime, alone, on the composed tensors it reads; where those are the FP32 run's own, its outputs are that
run's. A node's outputs after its first are the FP32 run's (no layer computes them) and are named.

INT8/FP8: each tensor a node reads is quantized per tensor with the scale from the FP32 run (amax/127 or amax/448 of
that tensor: max calibration), or the scale the model records for it (metadata `playground.quantize_scales`, JSON
{tensor: scale}, as a calibration table gives them); weights get their own scales, per output channel as TensorRT
quantizes weights (`precision.channel_scales`: a convolution's kernel along K, a matrix multiply's constant B along
its columns), not their input's (the layer page's single scale); any other constant a node reads, per tensor.

    analyze(model, name, inputs, "FP16") → {"nodes": [...], "precision": {...}, "output": {...}}
"""

from __future__ import annotations

import bisect
import json
import math
import time
from dataclasses import dataclass

import numpy as np

from ..base import precision as P
from ..base.errors import ValidationError
from ..onnx import opening, reading, runtime
from ..onnx.opened import Known
from . import precision_engine, whole

PRECISIONS = ("FP16", "BF16", "INT8", "FP8")
MIN_COSINE = 0.997  # Polygraphy's default for its cosine-similarity check
POLYGRAPHY_TOL = 1e-5  # Polygraphy's default atol and rtol
PLAN_BUDGET = 12  # composed evaluations the keep-FP32 plan may take
SCALES_KEY = "playground.quantize_scales"
# The layers whose reference quantizes its own kernel: the kernel's output-channel axis (K of K·C·R·S; a
# deconvolution's C·K·R·S), where TensorRT quantizes weights per channel
WEIGHTS = {"convolution": 0, "deconvolution": 1}


def page_params(precision: str) -> dict[str, str]:
    """A layer page's (or a chain layer's) parameters for a node in `precision` as the analysis computes it: under
    INT8/FP8 its scale from its data (quantize_scale 0: amax/127 or amax/448 of the tensor it reads, the analysis'
    max calibration, where the default 1 would be a step of 1 on any real tensor); its kernel at that one scale, as a
    layer page quantizes it (the analysis: per output channel)."""
    return {"precision": precision} | ({"quantize_scale": "0"} if precision in P.QUANTIZED else {})


def weight_axis(o, name: str) -> int | None:
    """The output-channel axis of a constant input of the opened layer `o`, in the layer's layout: a matrix
    multiply's constant B, its columns (its last axis; its rows where op1 transposes it); None for anything else (an
    elementwise constant, a vector operand), quantized per tensor."""
    if o.layer.name != "matrix_multiply" or name != "b" or o.params.get("op1") == "VECTOR":
        return None
    return -2 if o.params.get("op1") == "TRANSPOSE" else -1


# -- metrics and the policy --------------------------------------------------------------------------------------
def metrics(y, ref, atol: float = POLYGRAPHY_TOL, rtol: float = POLYGRAPHY_TOL, sqnr: bool = False) -> dict:
    """`y` against the FP32 `ref`: max |diff|, max relative diff (where ref ≠ 0), cosine similarity, Polygraphy's
    elementwise check (every cell |y − ref| ≤ atol + rtol·|ref|) and trtexec's l0 (the fraction of cells outside it),
    the cells non-finite in `y` where `ref` is finite, and SQNR in dB (INT8/FP8). Sums in float64, without BLAS (a
    dot product of a few vectors is not worth its threads)."""
    y = np.asarray(y).ravel()
    r = np.asarray(ref).ravel()
    if y.shape != r.shape:
        return {"shape_differs": True, "nonfinite": 0, "cosine": None}
    finite_y, finite_r = np.isfinite(y), np.isfinite(r)
    lost = int(np.count_nonzero(finite_r & ~finite_y))
    if not (finite_y.all() and finite_r.all()):
        both = finite_r & finite_y
        y, r = y[both], r[both]
    y, r = y.astype(np.float64), r.astype(np.float64)
    d = np.abs(y - r)
    ar = np.abs(r)
    outside = int(np.count_nonzero(d > atol + rtol * ar)) + lost
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.divide(d, ar, out=np.zeros_like(d), where=ar != 0)
    yy, rr, yr = (float(np.einsum("i,i->", a, b)) for a, b in ((y, y), (r, r), (y, r)))
    if lost:
        cosine = None  # not a number where a cell is lost
    elif yy == 0 and rr == 0:
        cosine = 1.0
    elif yy == 0 or rr == 0:
        cosine = 0.0
    else:
        cosine = yr / math.sqrt(yy * rr)
    out = {
        "max_abs": float(d.max()) if d.size else 0.0,
        "max_rel": float(rel.max()) if rel.size else 0.0,
        "cosine": cosine,
        "elementwise": outside == 0,
        "l0": outside / max(np.size(ref), 1),
        "nonfinite": lost,
    }
    if sqnr:
        noise = float(np.einsum("i,i->", d, d))
        out["sqnr_db"] = math.inf if noise == 0 else 10 * math.log10(max(rr, 1e-300) / noise)
    return out


@dataclass(frozen=True)
class Policy:
    """Where a node's output has diverged: a non-finite cell where FP32 is finite, always; cosine similarity below
    `min_cosine`; and, where atol or rtol is set, any cell outside atol + rtol·|FP32| (l0 > 0)."""

    min_cosine: float = MIN_COSINE
    atol: float | None = None
    rtol: float | None = None

    @property
    def elementwise(self) -> bool:
        return self.atol is not None or self.rtol is not None

    @property
    def tolerances(self) -> tuple[float, float]:
        return (
            POLYGRAPHY_TOL if self.atol is None else self.atol,
            POLYGRAPHY_TOL if self.rtol is None else self.rtol,
        )

    def crosses(self, m: dict | None) -> str | None:
        """The metric that trips (`nonfinite`, `cosine`, `l0`), or None."""
        if m is None or "error" in m:  # not computed: said where it is listed
            return None
        if m.get("shape_differs"):
            return "shape"
        if m["nonfinite"]:
            return "nonfinite"
        if m["cosine"] is not None and m["cosine"] < self.min_cosine:
            return "cosine"
        if self.elementwise and m["l0"] > 0:
            return "l0"
        return None

    def json(self) -> dict:
        atol, rtol = self.tolerances
        return {
            "min_cosine": self.min_cosine,
            "nonfinite": "a non-finite value where FP32 is finite diverges",
            "l0": {"atol": atol, "rtol": rtol, "max_l0": 0} if self.elementwise else None,
            "metrics_atol": atol,
            "metrics_rtol": rtol,
        }


# -- the model as composition sees it ------------------------------------------------------------------------------
@dataclass
class Step:
    index: int
    name: str
    node: object
    opened: object | None  # None: ONNX Runtime computes it (`why`)
    why: str | None = None


class Composer:
    """A model's nodes composed: `evaluate` computes every node in the precision `of(step)` gives it, from the
    tensors before it (an earlier evaluation's, up to `start`)."""

    def __init__(self, model, values: dict, inputs: dict):
        self.model, self.values, self.inputs = model, values, inputs
        self.known = Known(model)
        self.steps: list[Step] = []
        self.sessions: dict = {}
        self.fp32_taken: set[str] = set()  # tensors composition takes from the FP32 run, named in the answer
        self.fallback: dict[str, str] = {}  # opened nodes ONNX Runtime computed in the composition instead, and why
        spent = [0]
        for i, node in enumerate(reading.graph_nodes(model)):
            name = reading.node_name(node, i)
            self.steps.append(self._step(i, name, node, spent))
        self.scales = self._scales()

    def _step(self, i, name, node, spent) -> Step:
        outs = [self.values.get(o) for o in node.output if o]
        if not outs or any(o is None for o in outs[:1]):
            return Step(i, name, node, None, "ONNX Runtime's run gives no output for it")
        if np.asarray(outs[0]).dtype.kind != "f":
            return Step(i, name, node, None, f"computes {np.asarray(outs[0]).dtype} values, not a layer's")
        data = next((t for t in node.input if t and t not in self.known.consts), None)
        x = self.values.get(data) if data else None
        try:
            opened = opening.open_known(
                self.known, node, name, "", x.shape[0] if x is not None and x.ndim else 1, False
            )
        except ValidationError as exc:
            return Step(i, name, node, None, str(exc))
        if opened.data is not None and np.shape(self.values.get(opened.data)) != opened.onnx_shape:
            return Step(i, name, node, None, "its input's shape is not the one it opens on")
        layer = opened.layer
        shape = opened.shapes or opened.shape
        spent[0] += layer.cost(opened.params, shape)[1] if layer.cost else math.prod(opened.shape)
        if spent[0] > whole.work_budget():
            return Step(i, name, node, None, f"past the model's work budget ({whole.work_budget():,} multiply-adds)")
        return Step(i, name, node, opened)

    def _scales(self) -> dict[str, float]:
        """INT8's per-tensor scale by tensor: the model's own (metadata) or amax/127 of the FP32 tensor; FP8's is
        the same amax over 448 (`scale`)."""
        meta = {p.key: p.value for p in self.model.metadata_props}
        try:
            given = {str(k): float(v) for k, v in json.loads(meta.get(SCALES_KEY, "{}")).items()}
        except (ValueError, TypeError, AttributeError):
            raise ValidationError("model", SCALES_KEY, "must be a JSON object of tensor names and scales") from None
        bad = [k for k, v in given.items() if not (math.isfinite(v) and v > 0)]
        if bad:
            raise ValidationError("model", SCALES_KEY, f"the scale of {bad[0]!r} must be a finite number > 0")
        return given

    def scale(self, tensor: str, precision: str, value=None) -> float:
        if tensor in self.scales:
            s = self.scales[tensor]
            return s if precision == "INT8" else s * P.QUANT_MAX["INT8"] / P.QUANT_MAX["FP8"]
        return P.scale_from_data(self.values[tensor] if value is None else value, precision)

    # one node
    def compute(self, step: Step, env: dict, precision: str) -> np.ndarray:
        """The node's first output: its layer in `precision` on the tensors of `env`, in ONNX's layout."""
        o = step.opened
        layer, params = o.layer, o.params
        x = whole.real_feed(o, env)
        if precision in P.QUANTIZED:
            x, params = self._quantized(o, x, precision), dict(params, precision="FP32")
            if layer.name in WEIGHTS:
                params["kernel"] = P.fake_quantize_weights(params["kernel"], precision, WEIGHTS[layer.name])
        elif precision != "FP32":
            params = dict(params, precision=precision)
        with np.errstate(all="ignore"):
            y = o.to_onnx(o.finish(P.emulate(layer, x, params), env))
        return np.asarray(y, np.float32)

    def _quantized(self, o, x, precision: str):
        if not isinstance(x, dict):
            return P.fake_quantize(x, self.scale(o.data, precision), precision)
        out = {}
        for n, t in zip(o.layer.input_names, o.tensors):
            if n not in x or n in o.layer.index_inputs:
                out[n] = x.get(n) if n in x else None
            elif n in o.constants:  # weights: per output channel where the layer has one (`weight_axis`)
                out[n] = P.fake_quantize_weights(x[n], precision, weight_axis(o, n))
            else:
                out[n] = P.fake_quantize(x[n], self.scale(t, precision), precision)
        return {n: v for n, v in out.items() if v is not None}

    def by_onnxruntime(self, step: Step, env: dict) -> list:
        """The node run alone by ONNX Runtime on the composed tensors it reads (the FP32 run's outputs where they are
        the FP32 run's own tensors: the same computation)."""
        node = step.node
        reads = [t for t in node.input if t and t not in self.known.consts]
        if all(env.get(t) is self.values.get(t) for t in reads) and all(o in self.values for o in node.output if o):
            return [self.values.get(o) for o in node.output]
        try:
            s = self.sessions.get(step.index)
            if s is None:
                s = self.sessions[step.index] = runtime.session(self._alone(node, reads, env))
            outs = s.run(None, {t: env[t] for t in dict.fromkeys(reads)})
            return list(outs) + [self.values.get(o) for o in node.output[len(outs) :]]
        except Exception:  # noqa: BLE001 - ONNX Runtime cannot run it alone: the FP32 run's tensors, named
            self.fp32_taken.update(o for o in node.output if o in self.known.read)
            return [self.values.get(o) for o in node.output]

    def _alone(self, node, reads, env) -> bytes:
        onnx = reading.library()
        h = onnx.helper
        inputs = [
            h.make_tensor_value_info(t, onnx.helper.np_dtype_to_tensor_dtype(np.asarray(env[t]).dtype), None)
            for t in dict.fromkeys(reads)
        ]
        inits = [onnx.numpy_helper.from_array(self.known.consts[t], t) for t in node.input if t in self.known.consts]
        opsets = list(self.model.opset_import)
        model = h.make_model(h.make_graph([node], "node", inputs, [], inits), opset_imports=opsets)
        model.ir_version = self.model.ir_version
        # an output NumPy cannot take (bfloat16) comes back cast to float32: the same values, exactly
        types = {
            v.name: v.type.tensor_type.elem_type for v in onnx.shape_inference.infer_shapes(model).graph.value_info
        }
        casts, outputs = [], []
        for o in (o for o in node.output if o):
            if types.get(o) == onnx.TensorProto.BFLOAT16:
                casts.append(h.make_node("Cast", [o], [f"{o}__float"], to=onnx.TensorProto.FLOAT))
                o = f"{o}__float"
            outputs.append(h.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None))
        model.graph.node.extend(casts)
        model.graph.output.extend(outputs)
        return model.SerializeToString()

    # the whole model
    def evaluate(self, of, base: dict | None = None, start: int = 0) -> dict:
        """Every tensor composed, each opened node in the precision `of(step)` returns; the tensors the nodes before
        `start` wrote are `base`'s (an earlier evaluation whose nodes before `start` had the same precisions)."""
        env = dict(base) if base is not None and start > 0 else dict(self.inputs)
        if base is None or start == 0:
            start = 0
        for step in self.steps[start:]:
            node = step.node
            outs = None
            if step.opened is not None:
                fp32 = np.asarray(self.values[node.output[0]])
                try:
                    y = self.compute(step, env, of(step))
                    if y.shape == fp32.shape:
                        outs = [y.astype(fp32.dtype, copy=False)] + [self.values.get(o) for o in node.output[1:]]
                        self.fp32_taken.update(o for o in node.output[1:] if o in self.known.read)
                    else:
                        self.fallback[step.name] = f"the layer gives {y.shape}, the model {fp32.shape}"
                except Exception as exc:  # noqa: BLE001 - the layer's reference failed: ONNX Runtime computes it
                    self.fallback[step.name] = f"the layer's reference failed ({type(exc).__name__}: {exc})"
            if outs is None:
                outs = self.by_onnxruntime(step, env)
            for name, v in zip(node.output, outs):
                if name:
                    env[name] = v
        return env


# -- the analysis -------------------------------------------------------------------------------------------------
def analyze(model, model_name: str, given: dict | None, precision: str, **options) -> dict:
    """The `model --precision` answer (`study`'s, without the composer)."""
    return study(model, model_name, given, precision, **options)[0]


def study(
    model,
    model_name: str,
    given: dict | None,
    precision: str,
    policy: Policy | None = None,
    plan_budget: int = PLAN_BUDGET,
    progress=None,
    engine_tensors=None,
):
    """(the `model --precision` answer, its Composer): each opened node's local and accumulated error, the
    composed FP32 output against ONNX Runtime, the first divergence and the keep-FP32 plan; where a TensorRT engine
    runs, each node's engine tensor too (`precision_engine`; `engine_tensors(model, feeds)` stands in for it)."""
    if precision not in PRECISIONS:
        raise ValidationError("model", "--precision", f"must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    policy = policy or Policy()
    progress = progress or (lambda step: None)
    start = time.perf_counter()
    inputs, notes = whole.feeds(model, given)
    progress("ONNX Runtime runs the model, every tensor marked as an output")
    try:
        values = whole.run_all(model, inputs)
    except Exception as exc:  # noqa: BLE001 - ONNX Runtime refused the model: nothing to compare with
        raise ValidationError("model", "MODEL.onnx", f"ONNX Runtime cannot run it: {runtime.ort_words(exc)}") from None
    c = Composer(model, values, inputs)
    atol, rtol = policy.tolerances
    quantized = precision in P.QUANTIZED
    measure = lambda y, ref: metrics(y, ref, atol, rtol, quantized)  # noqa: E731
    outputs = [o.name for o in model.graph.output if o.name in values]

    progress("Every node in FP32 composed, against ONNX Runtime's output")
    fp32 = c.evaluate(lambda s: "FP32")
    agreement = {o: metrics(fp32[o], values[o]) for o in outputs}

    progress(f"Each node in {precision} on its real input (local error)")
    local = {}
    for s in c.steps:
        if s.opened is not None:
            try:
                local[s.index] = measure(c.compute(s, values, precision), values[s.node.output[0]])
            except Exception as exc:  # noqa: BLE001 - the reference failed: said for that node
                local[s.index] = {"error": f"{type(exc).__name__}: {exc}"}

    progress(f"Every node in {precision} composed (accumulated error)")
    in_precision = lambda s: precision  # noqa: E731
    composed = c.evaluate(in_precision)
    accumulated = {s.index: measure(composed[s.node.output[0]], values[s.node.output[0]]) for s in c.steps if s.opened}
    # a node's composed value depends only on the nodes before it: the evaluation with the first k nodes in the
    # precision and the rest in FP32 agrees with this one up to node k, so "a node among the first k crosses" is
    # monotone in k and the bisection over it reads this evaluation's verdicts (1 composed evaluation)
    opened = [s for s in c.steps if s.opened]
    crossed = [policy.crosses(accumulated[s.index]) is not None for s in opened]
    prefix = np.cumsum(crossed) > 0
    k = bisect.bisect_left(list(prefix), True) if len(prefix) else 0
    first = None
    if k < len(opened):
        s = opened[k]
        first = {
            "node": s.name,
            "op_type": s.node.op_type,
            "metric": policy.crosses(accumulated[s.index]),
            "local_explains": policy.crosses(local.get(s.index)) is not None,
            "local_metric": policy.crosses(local.get(s.index)),
        }
    without = {o: measure(composed[o], values[o]) for o in outputs}

    progress(f"The model in {precision} as a TensorRT engine, its unfused tensors read as debug tensors")
    engine, engine_info = precision_engine.run(c, precision, inputs, measure, engine_tensors)

    progress("The keep-FP32 plan: greedy, each round measured by a composed evaluation")
    plan = keep_plan(c, values, outputs, precision, policy, measure, composed, local, plan_budget)

    nodes = []
    for s in c.steps:
        entry = {"name": s.name, "op_type": s.node.op_type, "layer": s.opened.layer.name if s.opened else None}
        if s.opened:
            entry["precision"] = {"local": local.get(s.index), "accumulated": accumulated.get(s.index)}
            if engine_info["ran"]:
                entry["precision"]["engine"] = engine.get(s.index)
        else:
            entry["reason"] = s.why
        nodes.append(entry)
    output = {
        o: whole._summary(values[o]) | {"agrees": agreement[o]["elementwise"], "max_abs_diff": agreement[o]["max_abs"]}
        for o in outputs
    }
    by_ort = [s.name for s in c.steps if s.opened is None]
    return {
        "model": model_name,
        "inputs": {k: list(v.shape) for k, v in inputs.items()},
        "notes": notes,
        "nodes": nodes,
        "output": output,
        "output_source": "onnxruntime: the whole model; agrees: the playground's layers composed in FP32, "
        f"Polygraphy's elementwise check (atol = rtol = {POLYGRAPHY_TOL:g})",
        "precision": {
            "precision": precision,
            "policy": policy.json(),
            "first_divergence": first,
            "engine": engine_info,
            "evaluations": 1,
            "bisection_probes": math.ceil(math.log2(len(opened) + 1)) if opened else 0,
            "keep_fp32": plan["keep"],
            "plan": {k: v for k, v in plan.items() if k not in ("keep", "env")},
            "output": {
                "without_plan": without,
                "with_plan": plan["output"],
                "meets_without_plan": all(policy.crosses(m) is None for m in without.values()),
                "meets_with_plan": plan["meets"],
            },
            "onnxruntime_nodes": by_ort,
            "onnxruntime_instead": c.fallback,
            "fp32_taken": sorted(c.fp32_taken),
            "scales_given": dict(c.scales) if quantized else None,
        },
        "counts": {
            "nodes": len(nodes),
            "opened": len(opened),
            "diverging_local": sum(1 for s in opened if policy.crosses(local.get(s.index))),
            "diverging_accumulated": sum(crossed),
        },
        "seconds": round(time.perf_counter() - start, 3),
    }, c


def keep_plan(c: Composer, values, outputs, precision, policy, measure, composed, local, budget) -> dict:
    """Greedy by measured effect. First every node whose own local error crosses the policy is kept in FP32 (one
    composed evaluation); then, while the composed output still crosses it, of the first node whose accumulated
    error crosses (kept or not: a kept node inherits its input's error) and the nodes it reads from, directly or
    not, the one not kept whose local error is the worst (a lost cell first, then the lowest cosine; the later of
    equals): one evaluation a round, from that node on. Then each kept node
    whose local error loses no cell is tried without (the mildest first), left out where the output still meets
    the policy. `budget` composed evaluations at most; the set is the smallest this search found, not proven so."""
    order = {s.index: i for i, s in enumerate(c.steps)}
    producer = {o: s for s in c.steps for o in s.node.output if o}
    env, evaluations = composed, 0

    def meets(e):
        return all(policy.crosses(measure(e[o], values[o])) is None for o in outputs)

    def ancestors(step):
        seen, todo = set(), [step]
        while todo:
            s = todo.pop()
            if s.index not in seen:
                seen.add(s.index)
                todo.extend(producer[t] for t in s.node.input if t in producer)
        return seen

    def badness(i):
        m = local.get(i) or {}
        if not m or "error" in m:
            return -1.0
        return math.inf if m["nonfinite"] else 1.0 - (m["cosine"] if m["cosine"] is not None else 0.0)

    def run(kept, base, start):
        kept = set(kept)
        return c.evaluate(lambda s: "FP32" if s.index in kept else precision, base, start)

    ok = meets(env)
    keep = [s.index for s in c.steps if s.opened and policy.crosses(local.get(s.index))]
    if not ok and keep and evaluations < budget:
        env, evaluations = run(keep, env, order[keep[0]]), evaluations + 1
        ok = meets(env)
    elif ok:
        keep = []
    while not ok and evaluations < budget:
        first = next(
            (
                s
                for s in c.steps
                if s.opened and policy.crosses(measure(env[s.node.output[0]], values[s.node.output[0]]))
            ),
            None,
        )
        if first is None:
            break
        pool = [i for i in ancestors(first) if c.steps[i].opened and i not in keep]
        if not pool:
            break
        pick = max(pool, key=lambda i: (badness(i), i))  # equal: the latest, the crossing node itself
        keep.append(pick)
        env, evaluations = run(keep, env, order[pick]), evaluations + 1
        ok = meets(env)
    if ok:
        for i in sorted(keep, key=badness):
            if evaluations >= budget or badness(i) == math.inf:
                break
            trial = [j for j in keep if j != i]
            e, evaluations = run(trial, env, order[i]), evaluations + 1
            if meets(e):
                keep, env = trial, e
    keep.sort()
    return {
        "keep": [c.steps[i].name for i in keep],
        "meets": ok,
        "evaluations": evaluations,
        "budget": budget,
        "method": "greedy by measured effect: the nodes whose local error crosses the policy, then the worst local "
        "error among the nodes the first crossing node reads from, one a round; then pruned, the mildest first; "
        "the smallest set this search found, not proven the smallest",
        "output": {o: measure(env[o], values[o]) for o in outputs},
        "env": env,
    }


def reopened(data: bytes, name: str, c: Composer, policy) -> dict:
    """The written plan model opened here as any model (checked, folded), run by ONNX Runtime and composed by the
    layers at FP32 (its casts and Q/DQ run by ONNX Runtime, node by node): its output against the original model's
    FP32 output, under the policy."""
    try:
        model = reading.load_model(data, name)
        inputs, _ = whole.feeds(model, dict(c.inputs))
        again = Composer(model, whole.run_all(model, inputs), inputs)
        env = again.evaluate(lambda s: "FP32")
    except Exception as exc:  # noqa: BLE001 - the written model does not reopen: that is the answer
        words = str(exc) if isinstance(exc, ValidationError) else runtime.ort_words(exc)
        return {"meets": False, "error": f"it does not reopen: {words}"}
    atol, rtol = policy.tolerances
    outputs = {o: metrics(env[o], c.values[o], atol, rtol) for o in (v.name for v in c.model.graph.output)}
    return {
        "nodes": len(again.steps),
        "opened": sum(1 for s in again.steps if s.opened),
        "output": outputs,
        "meets": all(policy.crosses(m) is None for m in outputs.values()),
    }


def _figures(m: dict | None, sqnr: bool) -> str:
    if not m or "error" in m:
        return (m or {}).get("error", "—")
    if m.get("shape_differs"):
        return "shape differs"
    cos = "lost" if m["cosine"] is None else f"{m['cosine']:.6f}"
    out = f"cos {cos} max|d| {m['max_abs']:.3g} rel {m['max_rel']:.3g} l0 {m['l0']:.3f}"
    if m["nonfinite"]:
        out += f" nonfinite {m['nonfinite']}"
    if sqnr and "sqnr_db" in m:
        out += f" sqnr {m['sqnr_db']:.1f} dB"
    return out


def lines(answer: dict) -> list[str]:
    """The answer as the command prints it without --json: a line a node, then the verdicts."""
    p = answer["precision"]
    sqnr = p["precision"] in P.QUANTIZED
    width = max(len(n["name"]) for n in answer["nodes"])
    out = [f"{answer['model']} in {p['precision']}: node, local error | accumulated error (against the FP32 run)"]
    for n in answer["nodes"]:
        if n["layer"] is None:
            out.append(f"{n['name']:<{width}}  {n['op_type']:<14} ONNX Runtime computes it: {n['reason']}")
            continue
        e = n["precision"]
        out.append(
            f"{n['name']:<{width}}  {n['op_type']:<14} {_figures(e['local'], sqnr)} | {_figures(e['accumulated'], sqnr)}"
        )
    for name, o in answer["output"].items():
        out.append(
            f"output {name}: composed in FP32 {'agrees' if o['agrees'] else 'DIFFERS'} with ONNX Runtime, "
            f"max |diff| {o['max_abs_diff']:.3g}"
        )
    pol = p["policy"]
    rule = f"cosine ≥ {pol['min_cosine']}, no cell lost" + (
        f", every cell within atol {pol['l0']['atol']:g} + rtol {pol['l0']['rtol']:g}·|FP32|" if pol["l0"] else ""
    )
    f = p["first_divergence"]
    out.append(
        f"first divergence ({rule}): "
        + (
            f"{f['node']} ({f['op_type']}, {f['metric']}; "
            + ("its own local error crosses too" if f["local_explains"] else "inherited: its local error holds")
            + ")"
            if f
            else "none"
        )
        + f"; {p['evaluations']} composed evaluation(s)"
    )
    plan = p["plan"]
    out.append(
        f"keep in FP32 ({len(p['keep_fp32'])}): {', '.join(p['keep_fp32']) or 'nothing'}; the output "
        + ("meets" if p["output"]["meets_with_plan"] else "does NOT meet")
        + f" the policy with it ({plan['evaluations']} of {plan['budget']} evaluations)"
    )
    for name, m in p["output"]["with_plan"].items():
        out.append(f"  output {name} with the plan: {_figures(m, sqnr)}")
    for name, m in p["output"]["without_plan"].items():
        out.append(f"  output {name} without it : {_figures(m, sqnr)}")
    if plan.get("reopened"):
        r = plan["reopened"]
        out.append(
            f"  the written plan {r['error']}"
            if "error" in r
            else f"  the written plan reopens: {r['nodes']} nodes, " + ("meets" if r["meets"] else "does NOT meet")
        )
    for m in answer["notes"]:
        out.append(f"note: {m}")
    out.append(f"{answer['seconds']} s")
    return out
