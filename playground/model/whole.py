"""A whole ONNX model against the layers: every node on its real input.

load (reading.load_model: checked, constants folded) → feeds → stream.run (ONNX Runtime, a segment of the model at a
time, every tensor of a segment a graph output, as Polygraphy's `--onnx-outputs mark all`) → each node opened as its
layer (as a single node is opened) as its tensors arrive → the layer's reference on the tensor the node really reads,
against ONNX Runtime's output of that node → TensorRT's ONNX parser builds the whole model: its engine layers and the
nodes each computes.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..base import budget
from ..base import precision as P
from ..base.errors import ValidationError
from ..onnx import opening, reading, runtime
from ..onnx.opened import SEED, Known
from . import stream
from .stream import for_runtime, mark_all, with_shapes

MODEL_WORK = 50  # a whole model's references together: this many times one node's work budget
MAX_ENGINE_NODES = 1_000  # nodes of a model TensorRT's parser builds whole (the model's own verdicts go on beyond)


def work_budget() -> int:
    """The multiply-adds the references of one model's nodes may take together, under the whole-model budget
    (`budget.whole_model`: PLAYGROUND_MODEL_MAX_MACS is one node's; a model is many)."""
    with budget.whole_model():
        return MODEL_WORK * budget.max_macs()


def inputs_of(model) -> list[tuple[str, tuple]]:
    """The graph inputs the model is fed (not those an initializer gives: IR 3 lists weights as inputs), with the
    shapes the model declares (a dimension a number, or a name)."""
    consts = {t.name for t in model.graph.initializer}
    out = []
    for v in model.graph.input:
        if v.name in consts:
            continue
        dims = v.type.tensor_type.shape.dim
        out.append((v.name, tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in dims)))
    return out


def feeds(model, given: dict[str, np.ndarray] | None = None) -> tuple[dict[str, np.ndarray], list[str]]:
    """Every input of the model: the array given for it (its shape the model's, but for a named batch dimension),
    or the seeded pattern a node's page opens with (uniform −4 … 4, seed SEED), N = 1 where the model names
    its batch. (feeds, notes); ValidationError naming --input and the rule."""
    from ..base.inputs import InputError, make_input

    given, notes, out = dict(given or {}), [], {}
    declared = inputs_of(model)
    types = _input_types(model)
    kinds = {n: np.dtype(t).kind for n, t in types.items()}
    unknown = sorted(set(given) - {n for n, _ in declared})
    if unknown:
        raise ValidationError(
            "model",
            "--input",
            f"the model has no input {unknown[0]!r}; its inputs are " + ", ".join(n for n, _ in declared),
        )
    for i, (name, shape) in enumerate(declared):
        if name in given:
            x = given[name]
            fits = x.ndim == len(shape) and all(isinstance(d, str) or d == n for d, n in zip(shape, x.shape))
            if not fits:
                raise ValidationError("model", "--input", f"{name} must have the model's shape {shape}, not {x.shape}")
            if kinds.get(name, "f") in "iub":  # indices, a mask: in the model's own type
                out[name] = np.ascontiguousarray(x, types[name])
                continue
            with np.errstate(over="ignore"):
                x32 = np.ascontiguousarray(x, np.float32)
            if (np.isinf(x32) & np.isfinite(x)).any():
                raise ValidationError(
                    "model",
                    "--input",
                    f"{name} holds values beyond float32's range (±3.4e38): the model computes in float32",
                )
            out[name] = x32
            continue
        static = tuple(1 if isinstance(d, str) and j == 0 else d for j, d in enumerate(shape))
        if not all(isinstance(d, int) and d > 0 for d in static):
            raise ValidationError(
                "model",
                "--input",
                f"{name} has a dimension that is not a number {shape}: give it (--input {name}=FILE.npy)",
            )
        if len(static) > 5:
            raise ValidationError(
                "model",
                "--input",
                f"{name} has rank {len(static)}: give it (--input "
                f"{name}=FILE.npy); the seeded pattern is drawn for ranks up to 5",
            )
        over = budget.over_elements(static, f"graph input {name!r}", f"its size (--input {name}=FILE.npy)")
        if over:
            raise ValidationError("model", "--input", over)
        if static != shape:
            notes.append(f"Input {name}: its batch dimension {shape[0]!r} is symbolic; N = 1.")
        # the page's pattern, drawn over the values in order: a lower rank is the same values with axes of 1 added
        lifted = static + (1,) * (4 - len(static))
        try:
            out[name] = make_input("random", lifted, seed=SEED + i).reshape(static)
        except InputError as exc:  # a side past the page's sliders: the model's input is given then
            raise ValidationError(
                "model", "--input", f"{name} {shape}: {exc}; give it (--input {name}=FILE.npy)"
            ) from None
        notes.append(f"Input {name}: the seeded random pattern (uniform −4 … 4, seed {SEED + i}).")
    # in the type the model declares (float64, float16; integers truncated): ONNX Runtime takes no other
    return {k: v.astype(types[k]) if k in types and v.dtype != types[k] else v for k, v in out.items()}, notes


def _input_types(model) -> dict:
    """The NumPy type of each graph input the model declares a tensor type for."""
    onnx = reading.library()
    out = {}
    for v in model.graph.input:
        elem = v.type.tensor_type.elem_type
        if elem:
            try:
                out[v.name] = onnx.helper.tensor_dtype_to_np_dtype(elem)
            except Exception:  # noqa: BLE001 - a type NumPy has no name for (bfloat16, float8): fed as float32
                continue
    return out


def run_all(model, inputs: dict[str, np.ndarray], notes: list | None = None, only=None) -> dict[str, np.ndarray]:
    """Every tensor of one ONNX Runtime run of the model (or those named `only`, and its outputs), by name (its inputs
    included); of an opset ONNX Runtime has no kernel for, its conversion's (`for_runtime`, its note added to
    `notes`). Every tensor at once (ONNX Runtime's arena caps them, PLAYGROUND_MODEL_MAX_MB): a whole model's
    analysis runs it a segment at a time instead (`stream.run`); the precision analysis keeps this one run, as its
    composition reads every tensor (`precision_model.Composer`)."""
    s = runtime.session(mark_all(for_runtime(model, notes), only).SerializeToString())
    names = [o.name for o in s.get_outputs()]
    try:
        return dict(inputs) | dict(zip(names, s.run(names, inputs)))
    except Exception as exc:  # noqa: BLE001 - a node past the run's memory cap is refused by name; else as raised
        raise runtime.over_memory(exc) or exc from None


def real_values(model, tensors: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The tensors (a node's `Opened.tensors_read`) when the model runs on its seeded inputs (`feeds`): what the
    model page's link opens the node's stage with, by name."""
    inputs, _ = feeds(model)
    values = run_all(model, inputs, only=set(tensors)) if any(t not in inputs for t in tensors) else inputs
    missing = [t for t in tensors if t not in values]
    if missing:
        raise ValidationError("model", "node", f"the model has no tensor {missing[0]!r}")
    return {t: np.asarray(values[t], np.float32) for t in tensors}


def depends_on(model, tensors) -> list[str]:
    """The graph inputs (`inputs_of`) the tensors are computed from, in the model's input order."""
    fed = [n for n, _ in inputs_of(model)]
    made_by = {o: node for node in model.graph.node for o in node.output if o}
    seen, todo = set(), list(tensors)
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        seen.add(t)
        if t in made_by:
            todo.extend(i for i in made_by[t].input if i)
    return [n for n in fed if n in seen]


def node_values(model, opened, given: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict[str, str], list]:
    """Every tensor the node reads (`Opened.tensors_read`), real: a graph input the array `given` for it (or the
    seeded pattern, `feeds`), a tensor the model computes from ONNX Runtime's run of the model on those inputs.
    ({tensor: array}, {tensor: where it came from}, notes); ValidationError naming --input and the rule."""
    fed, notes = feeds(model, given)
    reads = opened.tensors_read
    computed = [t for t in reads if t not in fed]
    values = run_all(model, fed, only=set(computed)) if computed else fed
    sources = {}
    for t in reads:
        if t in given:
            sources[t] = f"--input {t}: the file given"
        elif t in fed:
            sources[t] = f"graph input {t}: the seeded pattern (uniform −4 … 4)"
        else:
            sources[t] = "ONNX Runtime's run of the model on " + ", ".join(
                f"{n} ({'the file given' if n in given else 'seeded'})" for n in depends_on(model, [t])
            )
    return {t: np.asarray(values[t], np.float32) for t in reads}, sources, notes


def run_model(model, inputs: dict[str, np.ndarray], notes: list | None = None) -> dict[str, np.ndarray]:
    """The model's own outputs from ONNX Runtime, by name (`for_runtime`)."""
    s = runtime.session(for_runtime(model, notes).SerializeToString())
    names = [o.name for o in s.get_outputs()]
    try:
        return dict(zip(names, s.run(names, inputs)))
    except Exception as exc:  # noqa: BLE001 - a node past the run's memory cap is refused by name; else as raised
        raise runtime.over_memory(exc) or exc from None


def node_verdict(known, node, name: str, model_name: str, values: dict | None, spent: list | None = None) -> dict:
    """One node: its op, the layer it opens as (or why not) and, where it opens and `values` holds its tensors,
    the layer's reference on its real input against ONNX Runtime's output of it. `spent`: [multiply-adds so far], the
    model's work (`work_budget`), counted here; a node past the budget is listed, not computed."""
    entry = {
        "name": name,
        "op_type": node.op_type,
        "layer": None,
        "reason": None,
        "reads": [i for i in node.input if i and i not in known.consts],
        "writes": [o for o in node.output if o],
        "attributes": key_attributes(node, known.consts),
    }
    outs = [values[o] for o in node.output if o and values and o in values]
    held = [values[t] for t in (*node.input, *node.output) if t and values and t in values]
    if any(not isinstance(v, np.ndarray) for v in held):  # ONNX Runtime hands a sequence back as a list
        return entry | {"reason": "reads or writes an ONNX sequence (a list of tensors): no layer computes one"}
    entry["shapes"] = [list(np.shape(o)) for o in outs]  # the model's run's, output by output (the graph's edges)
    # integers are shape arithmetic; a BOOL (a comparison, Not, IsNaN) a layer computes, as 0 and 1, unless it is
    # of integers (a comparison of shapes)
    ins = [values[t] for t in node.input if t and t not in known.consts and values and t in values]
    kinds = {np.asarray(o).dtype.kind for o in outs}
    if outs and "f" not in kinds and (kinds != {"b"} or any(np.asarray(v).dtype.kind in "iu" for v in ins)):
        return entry | {"reason": f"computes {outs[0].dtype} values (shape arithmetic), not a tensor a layer computes"}
    # before the node opens (its batch is its data's): the first tensor it reads that the model computes
    data = next((i for i in node.input if i and i not in known.consts), node.input[0] if node.input else None)
    x = values.get(data) if values and data else None
    try:
        batch = x.shape[0] if x is not None and x.ndim else 1
        opened = opening.open_known(known, node, name, model_name, batch, alone=False)
    except ValidationError as exc:
        return entry | {"reason": str(exc)}
    data = opened.data  # the tensor the layer's first input reads (a commuted Add's second operand)
    entry |= {
        "layer": opened.layer.name,
        "identity": opened.identity,
        "differs": opened.differs,
        "input": data,
        "input_shape": list(opened.onnx_shape),
    }
    reads = opened.tensors_read  # every tensor it reads, not a constant (an Embedding's indices, not its table)
    if not reads or not values or any(t not in values for t in reads) or not outs:
        return entry
    want = {data: opened.onnx_shape}  # a layer of several inputs: each input's
    if opened.shapes is not None:
        want = {t: tuple(opened.onnx_shapes[n]) for n, t in zip(opened.layer.input_names, opened.tensors) if t in reads}
    for t, shape in want.items():
        if np.shape(values[t]) != shape:
            return entry | {
                "agrees": False,
                "why": f"ONNX Runtime's tensor {t!r} is {np.shape(values[t])}; the node opens on {shape}",
            }
    layer, params = opened.layer, opened.params
    if spent is not None:
        shape = getattr(opened, "shapes", None) or opened.shape  # a layer of several inputs: its shapes by name
        spent[0] += layer.cost(params, shape)[1] if layer.cost else math.prod(opened.shape)
        if spent[0] > work_budget():
            return entry | {
                "agrees": None,
                "why": f"the model's work budget of {work_budget():,} multiply-adds "
                f"({MODEL_WORK} × PLAYGROUND_MODEL_MAX_MACS) is spent by the nodes before",
            }
    xl = real_feed(opened, values)
    try:
        with np.errstate(all="ignore"):
            reference = opened.to_onnx(opened.finish(P.emulate(layer, xl, params), values))
            undefined = opened.to_onnx(layer.undefined(xl, params)) if layer.undefined and not opened.then else None
    except Exception as exc:  # noqa: BLE001 - one node's reference failing is that node's answer, not the model's
        return entry | {"agrees": None, "why": f"the layer's reference failed ({type(exc).__name__}: {exc})"}
    verdict = runtime.compare(
        np.asarray(outs[0]),
        reference,
        lambda: runtime.terms(layer, xl, params),
        opened.differs,
        undefined,
        runtime.undefined_rule(layer),
    )
    return entry | verdict


KEY_ATTRIBUTES = ("kernel_shape", "strides", "dilations", "group", "axis", "axes", "perm")


def key_attributes(node, consts: dict) -> dict:
    """The attributes a node's box names beside its op (a window's kernel and stride, an axis), those the node sets;
    a convolution's kernel, where it sets none, its weight's (ONNX infers it so)."""
    onnx = reading.library()
    out = {}
    for a in node.attribute:
        if a.name in KEY_ATTRIBUTES and a.type in (onnx.AttributeProto.INT, onnx.AttributeProto.INTS):
            out[a.name] = int(a.i) if a.type == onnx.AttributeProto.INT else [int(v) for v in a.ints]
    weight = node.input[1] if node.op_type in ("Conv", "ConvTranspose") and len(node.input) > 1 else None
    if "kernel_shape" not in out and weight in consts:
        out = {"kernel_shape": [int(d) for d in np.shape(consts[weight])[2:]]} | out
    return out


def real_feed(opened, values: dict):
    """The layer's input from the tensors of the model's run: the tensor its first input reads (`Opened.data`) in
    the layer's layout; for a layer of several inputs (`Opened.shapes`), the feed dict by input name, each the tensor
    the node reads (`Opened.tensors`) or the constant the model gives."""
    shapes = getattr(opened, "shapes", None)
    if shapes is None:
        return opened.to_layer(np.asarray(values[opened.data], np.float32))
    return {
        n: opened.constants[n] if n in opened.constants else np.asarray(values[t], np.float32).reshape(shapes[n])
        for n, t in zip(opened.layer.input_names, opened.tensors)
    }


def analyze(
    model,
    model_name: str,
    given: dict[str, np.ndarray] | None = None,
    engine: bool = True,
    outputs: dict | None = None,
    progress=None,
    tensors=None,
) -> dict:
    """The `model` command's answer: every node's verdict, the model's output, and TensorRT's parser's engine.
    `outputs`: a dict that takes the model's output arrays by name (the answer summarizes them); `tensors`: a function
    handed ONNX Runtime's tensors as each segment of the run makes them (the cache keeps them); `progress(step,
    done)` is told each step as it starts, and while the nodes are judged the fraction done (the model page shows it
    while the person waits).
    Under the whole-model budget (`budget.whole_model`): each node is held to one node's, not to a stage's."""
    with budget.whole_model():
        return _analyze(model, model_name, given, engine, outputs, progress or (lambda step, done=None: None), tensors)


def _analyze(model, model_name, given, engine, outputs, progress, tensors) -> dict:
    start = time.perf_counter()
    inputs, notes = feeds(model, given)
    progress("ONNX Runtime runs the model a segment at a time, every tensor marked as an output")
    known, spent, nodes, every = Known(model), [0], [], reading.graph_nodes(model)
    step = "Each node's layer reference on its real input, against ONNX Runtime"
    values, error, refused = None, None, None
    segments = stream.run(model, inputs, notes)
    while True:
        try:
            ready, values, made = next(segments)
        except StopIteration:
            break
        except ValidationError as exc:  # no opset ONNX Runtime runs, or a node past the run's memory cap: its nodes
            values, error, refused = None, exc.rule, str(exc)  # listed, the model refused (exit 2)
            break
        except Exception as exc:  # noqa: BLE001 - ONNX Runtime refused the model: its words, and the nodes still listed
            values, error = None, runtime.ort_words(exc)
            break
        if tensors is not None:
            tensors(made)
        del made
        while len(nodes) < ready:  # each node as its tensors arrive, in the model's order
            i = len(nodes)
            progress(step, i / len(every))
            nodes.append(node_verdict(known, every[i], reading.node_name(every[i], i), model_name, values, spent))
    if values is None:  # a run that failed judges no node (as one that never ran): each listed, opened or not
        spent, nodes = [0], []
    for i in range(len(nodes), len(every)):
        progress(step, i / len(every))
        nodes.append(node_verdict(known, every[i], reading.node_name(every[i], i), model_name, values, spent))
    out = {
        "model": model_name,
        "graph": model.graph.name,
        "inputs": {k: list(v.shape) for k, v in inputs.items()},
        "notes": notes,
        "nodes": nodes,
    }
    if values is not None:
        tensors = {o.name: values[o.name] for o in model.graph.output if isinstance(values.get(o.name), np.ndarray)}
        out["output"] = {name: _summary(y) for name, y in tensors.items()}  # a sequence output is none of them
        if outputs is not None:
            outputs.update(tensors)
        out["output_source"] = "onnxruntime: the whole model"
    else:
        out["onnxruntime_error"] = error
    if refused:
        out["refused"] = refused
    opened = [n for n in nodes if n["layer"]]
    out["counts"] = {
        "nodes": len(nodes),
        "folded": reading.folded_count(model),  # the nodes constant folding took out on loading (weights)
        "opened": len(opened),
        "agreeing": sum(1 for n in opened if n.get("agrees") is True),
        "disagreeing": sum(1 for n in opened if n.get("agrees") is False),
    }
    if engine:
        progress("TensorRT's ONNX parser builds the whole model (or finds its engine in the cache)")
        out["engine"] = engine_layers(
            with_shapes(model, {k: v.shape for k, v in inputs.items()}), [n["name"] for n in nodes]
        )
        out["counts"]["engine_layers"] = len(out["engine"].get("layers", []))
    out["seconds"] = round(time.perf_counter() - start, 3)
    return out


def engine_words(answer: dict) -> str:
    """ ", 24 engine layers" where the parser's engine was built (or found), ", engine not built" where it was not
    (no builder, a model past MAX_ENGINE_NODES: not an engine of no layers), "" where none was asked for."""
    engine = answer.get("engine")
    if not engine:
        return ""
    if engine.get("status") in ("built", "cached"):
        return f", {len(engine.get('layers', []))} engine layers"
    from ..trt.engine import ENGINE_STATUS

    return f", engine {ENGINE_STATUS['not_built']}"


def _summary(y: np.ndarray) -> dict:
    y = np.asarray(y)
    finite = y[np.isfinite(y)] if np.issubdtype(y.dtype, np.floating) else y
    return {
        "shape": list(y.shape),
        "dtype": str(y.dtype),
        "min": float(finite.min()) if finite.size else None,
        "max": float(finite.max()) if finite.size else None,
        "nonfinite": int(y.size - finite.size),
    }


def engine_layers(model, names: list[str]) -> dict:
    """TensorRT's own ONNX parser on the whole model, built (or found in the engine cache): its status and engine
    layers, each with `fuses`, the model's nodes it computes (from the ONNX node names the parser records with
    each layer, or, where a build records none, those its name holds), and the nodes no layer names."""
    from ..onnx.opinions import parser_build
    from ..trt.backend import detect

    backend = detect()
    if not backend.can_build:
        return {"status": "not_built", "why": backend.why_not_run}
    if len(names) > MAX_ENGINE_NODES:  # the parser's build grows faster than its nodes: 2,000 took 13 s, 10,000 minutes
        return {
            "status": "not_built",
            "why": f"the model has {len(names):,} nodes; TensorRT's parser builds whole models of at most "
            f"{MAX_ENGINE_NODES:,} here (1,000 take about 4 s); its engine is left out",
            "layers": [],
            "unnamed": names,
        }
    data, notes = model.SerializeToString(), []
    report, status = parser_build(backend, data, notes=notes)
    out = {
        "status": status if report.status == "built" else report.status,
        "parser": f"{backend.name} OnnxParser",
        "build_ms": report.build_ms,
        "output_shape": report.output_shape,
        "error": report.error,
    } | ({"notes": notes} if notes else {})
    known = set(names)
    layers = []
    for layer in report.layers:
        fuses = [n for n in layer.get("onnx_nodes") or [] if n in known] or named_in(layer.get("name", ""), known)
        layers.append({"name": layer.get("name"), "type": layer.get("type"), "fuses": fuses})
    named = {n for layer in layers for n in layer["fuses"]}
    return out | {"layers": layers, "unnamed": [n for n in names if n not in named]}


def named_in(layer_name: str, names: set[str]) -> list[str]:
    """The node names a TensorRT layer's name holds: full TensorRT joins a fusion's nodes with " + " (and may
    append a suffix in brackets); TensorRT for RTX appends "_myl<graph>_<index>" to one node's name."""
    import re

    parts = [p.strip() for p in re.split(r" \+ |\|\|", layer_name)]
    found = []
    for part in parts:
        for candidate in (part, re.sub(r"_myl\d+_\d+$", "", part), re.sub(r" \[.*\]$", "", part)):
            if candidate in names and candidate not in found:
                found.append(candidate)
                break
    return found


def first_difference(nodes: list[dict]) -> str | None:
    """The earliest node (in the model's order, which ONNX keeps topological) whose layer's reference and ONNX
    Runtime part ways: where a debugger starts, since every later difference may be its echo."""
    return next((n["name"] for n in nodes if n.get("layer") and n.get("agrees") is False), None)
