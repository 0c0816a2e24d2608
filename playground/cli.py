"""Command line: every subcommand of `python -m playground`.

    run LAYER [--set NAME=VALUE]... [--input [NAME=]IN.npy]... [--output OUT.npy] [--json] [--compare PRECISION]
    run LAYER+LAYER[+…] [--set KEY.NAME=VALUE]... [--input IN.npy] [--output OUT.npy] [--json] [--intermediates DIR]
        [--mark-intermediates]
    run --onnx MODEL.onnx [--node NAME] [--input [NAME=]IN.npy]... [--output OUT.npy] [--json]
    onnx MODEL.onnx [--json]
    model MODEL.onnx [--input NAME=FILE.npy]... [--output OUT.npy] [--no-engine] [--json]
    model MODEL.onnx --precision FP16|BF16|INT8|FP8 [--input NAME=FILE.npy]... [--atol A] [--rtol R]
        [--min-cosine C] [--plan-budget N] [--plan-model OUT.onnx] [--plan-exclude OUT.json] [--json]
    layers [LAYER]
    room --replicas N --port P [--bind ADDRESS] [--public-url URL]
    export LAYER [--preset NAME] [--set NAME=VALUE]... [--input IN.npy] [--format python|onnx] [--out FILE]
    export LAYER+LAYER[+…] [--set KEY.NAME=VALUE]... [--input IN.npy] [--format python|script|onnx] [--out FILE]
    snapshot --out DIR [--pages ...] [--presets ...] [--width W] [--height H] [--presenter]
             [--crop figures|stage|page] [--scale 1|2|3] [--background white|dark] [--query TEXT] [--cell PX]
             [--no-pick] [--base-url URL] [--model MODEL.onnx]   (--pages also takes chain and model)

Exit status (one path for all, `main`): 0 success, 2 invalid parameters, input or options (the message names
the parameter or option and the rule), 3 the backend's builder refused a configuration the layer's rules allow
(`run`: the reference is still printed and written, the refusal said), 1 any other failure.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import json
import math
import os
import re
import stat
import sys
from pathlib import Path

import numpy as np

from .base import budget
from .base.errors import PlaygroundError, ValidationError
from .base.params import jsonable
from .layers import LAYERS, get_layer
from .serve.protocol import ENGINE_STATUS


class UsageError(PlaygroundError):
    """An option that breaks its rule (exit 2); the message names the option."""


class Failure(PlaygroundError):
    """A command that could not do its work for a reason that is not the user's input (exit 1)."""


class Refused(PlaygroundError):
    """TensorRT's builder refused the configuration: an answer, not a failure (exit 3); the output is the
    reference."""


def parse_sets(layer_name: str, items: list[str]) -> dict:
    """`NAME=VALUE` pairs; `@FILE.npy` values are read as arrays (`read_npy`)."""
    raw = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValidationError(layer_name, item, "--set takes NAME=VALUE")
        name = name.strip()
        raw[name] = read_npy(value[1:], layer_name, name) if value.startswith("@") else value
    return raw


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def read_npy(path: str, layer: str, param: str) -> np.ndarray:
    """The float32 array in the .npy file `path`, or ValidationError naming `param` and the rule. Checked
    before anything is read: a regular file (not a fifo, not a device), no larger than an array the work
    budget allows, whose header declares real numbers and a shape within the budget; never a pickle."""
    fail = lambda rule: ValidationError(layer, param, f"{path}: {rule}")  # noqa: E731
    cap = budget.max_elements()
    try:
        info = os.stat(path)
    except OSError as exc:
        raise fail(exc.strerror or str(exc)) from None
    if not stat.S_ISREG(info.st_mode):
        raise fail("is not a regular file")
    if info.st_size > cap * 16 + 65536:  # complex128 values are the widest; the header is at most 64 KiB
        raise fail(f"is {info.st_size:,} bytes, more than any array within the budget of {cap:,} values")
    try:
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            read_header = {
                (1, 0): np.lib.format.read_array_header_1_0,
                (2, 0): np.lib.format.read_array_header_2_0,
            }.get(version)
            if read_header is None:
                raise fail(f"is a .npy file of version {version[0]}.{version[1]}; 1.0 and 2.0 are read")
            shape, _, dtype = read_header(f)
            if dtype.hasobject or dtype.kind not in "biuf":
                raise fail(f"must hold real numbers, not {dtype}")
            over = budget.over_elements(tuple(shape), "array", "its size")
            if over:
                raise fail(over)
            if info.st_size - f.tell() < math.prod(shape) * dtype.itemsize:
                raise fail("is shorter than its header says")
            f.seek(0)
            x = np.load(f, allow_pickle=False)
    except ValidationError:
        raise
    except OSError as exc:
        raise fail(exc.strerror or str(exc)) from None
    except ValueError as exc:
        raise fail(f"is not a readable .npy array ({exc})") from None
    finite = x[np.isfinite(x)] if np.issubdtype(x.dtype, np.floating) else x
    if finite.size and float(np.abs(finite).max()) > _FLOAT32_MAX:
        raise fail(f"holds values beyond float32's range (±{_FLOAT32_MAX:.4g}), which TensorRT computes in")
    return x.astype(np.float32)


def load_input(path: str) -> np.ndarray:
    return read_npy(path, "input", "--input")


def load_inputs(layer_name: str, given: list[str] | None):
    """The --input files of a layer: each `FILE.npy` in the layer's declared input order, or `NAME=FILE.npy`; the
    one array for a layer of one input, else {input name: array} (inputs not given take their examples); None where
    none is given."""
    if not given:
        return None
    layer = get_layer(layer_name)
    names = layer.input_names
    many = f"{layer_name} has {len(names)} input(s) ({', '.join(names)}); {len(given)} files given"
    named = {
        name: read_npy(path, "input", "--input" if not layer.several else f"--input {name}")
        for name, path in _named_paths(given, names, names, layer_name, many, "input").items()
    }
    return named if layer.several else named[names[0]]


def _named_paths(items: list[str], known, order, param: str, too_many: str, kind: str) -> dict[str, str]:
    """--input's files by name: `NAME=FILE` (NAME one of `known`), or a plain path (which may hold "=") for the next
    of `order` not named yet; ValidationError naming `param` where more are given than `order` holds (`too_many`)
    or a `kind` is given twice."""
    named: dict[str, str] = {}
    for text in items:
        name, sep, path = text.partition("=")
        if not (sep and name in known):
            name, path = next((n for n in order if n not in named), None), text
            if name is None:
                raise ValidationError(param, "--input", too_many, text)
        if name in named:
            raise ValidationError(param, "--input", f"{kind} {name} is given twice", text)
        named[name] = path
    return named


def _one_input(given: list[str] | None, what: str) -> str | None:
    if given and len(given) > 1:
        raise UsageError(f"--input: {what} takes one input file, not {len(given)}")
    return given[0] if given else None


def output_path(path: str, option: str, suffix: str) -> str:
    """`path` if a file can be written there, checked before any work; ValidationError naming `option`."""
    fail = lambda rule: ValidationError("output", option, f"{path}: {rule}")  # noqa: E731
    if not path.endswith(suffix):
        raise fail(f"must name a {suffix} file")
    if os.path.isdir(path):
        raise fail("is a directory")
    parent = os.path.dirname(path) or "."
    if not os.path.isdir(parent):
        raise fail(f"its directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise fail(f"its directory {parent} is not writable")
    return path


@contextlib.contextmanager
def written(path: str, mode: str):
    """The file `path` opened for writing; a failure to write is a Failure that names the file."""
    try:
        with open(path, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
    except OSError as exc:
        raise Failure(f"could not write {path} ({exc.strerror or exc})") from None


def _finite(v):
    """`v` as JSON can hold it: ±inf and NaN (an FP16 overflow, shapes that differ) as the strings "inf", "nan",
    in nested dicts too."""
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_finite(x) for x in v]
    return str(v) if isinstance(v, float) and not math.isfinite(v) else v


def result_json(r) -> dict:
    return {
        "layer": r.layer,
        "params": {k: jsonable(v) for k, v in r.params.items()},
        "input_shape": list(r.input.shape),
        "input_shapes": {n: list(a.shape) for n, a in (r.inputs or {"x": r.input}).items()},  # each, by name
        "output_shape": list(r.output.shape),
        "output_source": r.output_source,
        "backend": r.backend.describe(),
        "engine": r.engine_summary(),
        "max_abs_diff": _finite(r.max_abs_diff),
        "compare": _finite(r.compare_summary()),  # --compare: the other precision and the difference
        "precision": _finite(r.error_summary()),  # below FP32: the error of the output shown against float64
        "latency_ms": r.latency_ms,
        "messages": r.messages,
        "error": r.error,
    }


def read_model(path: str) -> bytes:
    """The bytes of the model file `path`: a regular file within the model size cap, checked before reading."""
    from .onnx.reading import MAX_MODEL_BYTES

    fail = lambda rule: ValidationError("onnx", "MODEL", f"{path}: {rule}")  # noqa: E731
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise fail("is not a regular file")
        if info.st_size > MAX_MODEL_BYTES:
            raise fail(f"is {info.st_size:,} bytes; the cap is {MAX_MODEL_BYTES:,}")
        with open(path, "rb") as f:
            return f.read(MAX_MODEL_BYTES + 1)
    except OSError as exc:
        raise fail(exc.strerror or str(exc)) from None


def open_model(path: str):
    """The model file `path`, checked and its constants folded; its external data only from files beside it."""
    from .onnx import reading

    return reading.load_model(read_model(path), os.path.basename(path), os.path.dirname(os.path.abspath(path)))


def _opened_node(model, args):
    """(the node opened, its layer's input, {tensor: the input in ONNX's layout}, {tensor: where it came from}). The
    node reads its real tensors: a graph input the file given for it (--input, positional in the order of the
    graph inputs the node depends on, or NAME=FILE.npy) or the seeded pattern; a tensor the model computes from
    ONNX Runtime's run of the model on those inputs. Without --input, a node that reads only graph inputs opens on
    the seeded input its page opens with."""
    from .model import whole
    from .onnx.opening import open_node, seeded_input

    opened = open_node(model, args.node, os.path.basename(args.onnx))
    reads = opened.tensors_read  # none: a playground export, whose input is the model's
    inputs = [name for name, _ in whole.inputs_of(model)]
    if not reads and opened.shapes is not None:  # an export of a layer of several inputs: one file per input
        return _export_inputs(opened, args.input)
    if not reads or (not args.input and all(t in inputs for t in reads)):
        given = _one_input(args.input, "a playground export")
        x = load_input(given) if given else seeded_input(opened)
        if x.shape != opened.onnx_shape:
            raise ValidationError(
                "input", "--input", f"must have the node's input shape {opened.onnx_shape}, not {x.shape}"
            )
        xl = opened.to_layer(x)
        if opened.shapes is None:
            shown = {reads[0] if reads else "x": x}
        else:  # the page's patterns: the first input's and the others', each seeded by its place in the node
            shown = {t: xl[n].reshape(opened.onnx_shapes[n]) for n, t in zip(opened.layer.input_names, opened.tensors)}
            shown = {t: a for t, a in shown.items() if t in reads}
        source = "--input: the file given" if given else "the seeded pattern (uniform −4 … 4), as the node's page opens"
        sources = {t: source for t in shown}
        for t, (s, _, seed) in opened.more.items():  # a step's operand (a Sum's third): its own seeded pattern
            shown[t], sources[t] = opened.operand(t).reshape(s), f"the seeded pattern (seed {seed}), as the page opens"
        return opened, xl, shown, sources
    given = _node_files(model, opened, args.input or [], inputs)
    values, sources, notes = whole.node_values(model, opened, given)
    first = values[reads[0]]
    if first.shape != opened.onnx_shape:  # a named batch: the node opens with its input's N
        opened = open_node(model, opened.node, opened.model, batch=first.shape[0] if first.ndim else 1)
    want = opened.onnx_shapes or {opened.layer.input_names[0]: opened.onnx_shape}
    for n, t in zip(opened.layer.input_names, opened.tensors or reads):
        if n in want and n not in opened.constants and values[t].shape != tuple(want[n]):
            raise ValidationError(
                "input", "--input", f"{t} is {values[t].shape}; node {opened.node!r} opens on {tuple(want[n])}"
            )
    opened = dataclasses.replace(opened, values=values, notes=list(opened.notes) + notes)
    if any(t not in inputs for t in reads):
        opened.notes.append(
            f"Node {opened.node!r} reads tensors the model computes: each is fed its value from ONNX Runtime's run "
            "of the model's input(s) (`onnx.inputs` names each one's source)."
        )
    xl = whole.real_feed(opened, values)
    return opened, xl, values, sources


def _export_inputs(opened, items: list[str] | None):
    """`_opened_node`'s answer for a playground export of a layer of several inputs (the model's inputs are the
    layer's, by name): each --input file (in the layer's order, or NAME=FILE.npy) or the page's seeded pattern."""
    from .onnx.opening import seeded_input

    given = load_inputs(opened.layer.name, items) or {}
    xl = opened.to_layer(seeded_input(opened))
    for n, x in given.items():
        if n not in opened.shapes or x.shape != tuple(opened.shapes[n]):
            want = opened.shapes.get(n)
            raise ValidationError("input", f"--input {n}", f"must have the export's shape {want}, not {x.shape}")
    xl = {n: given.get(n, a) for n, a in xl.items()}
    sources = {n: "--input: the file given" if n in given else "the seeded pattern, as the page opens" for n in xl}
    return opened, xl, {n: a.reshape(opened.onnx_shapes[n]) for n, a in xl.items()}, sources


def _node_files(model, opened, items: list[str], inputs: list[str]) -> dict[str, np.ndarray]:
    """The --input files of a node of a model: NAME=FILE.npy for a graph input, or a plain path for the next graph
    input the node depends on, in the model's order."""
    from .model import whole

    needed = whole.depends_on(model, opened.tensors_read)
    many = (
        f"node {opened.node!r} depends on {len(needed)} graph input(s) ({', '.join(needed) or 'none'}); "
        f"{len(items)} files given"
    )
    paths = _named_paths(items, inputs, needed, "input", many, "graph input")
    given = {name: read_npy(path, "input", f"--input {name}") for name, path in paths.items()}
    return given


def _whole_model(model, args) -> bool:
    """`run --onnx` of a model of several nodes without --node (and not an export of this playground): ONNX
    Runtime's output of the whole model, labelled as such; True where that was the answer."""
    from .model import whole
    from .onnx.opening import own_configuration
    from .onnx.reading import graph_nodes

    nodes = graph_nodes(model)
    if args.node is not None or len(nodes) < 2 or own_configuration(model, args.onnx) is not None:
        return False
    inputs = [name for name, _ in whole.inputs_of(model)]
    given = _one_input(args.input, "a whole model run by run --onnx")
    if given is not None and len(inputs) != 1:
        raise ValidationError(
            "input",
            "--input",
            f"the model has {len(inputs)} inputs; give each with `model MODEL --input NAME=FILE.npy`",
        )
    feeds, notes = whole.feeds(model, {inputs[0]: load_input(given)} if given else None)
    try:
        outputs = whole.run_model(model, feeds)
    except ValidationError:  # a node past the run's memory cap
        raise
    except Exception as exc:  # noqa: BLE001 - ONNX Runtime refused the model: its words
        from .onnx.runtime import ort_words

        raise Failure(f"ONNX Runtime could not run {os.path.basename(args.onnx)}: {ort_words(exc)}") from None
    name, y = next(iter(outputs.items()))
    label = f"ONNX Runtime: the whole model ({len(nodes)} nodes); no layer of this playground computed it"
    notes.append(
        f"{os.path.basename(args.onnx)} has {len(nodes)} nodes: run one with --node NAME ("
        + ", ".join(n.name for n in nodes[:12])
        + (" …" if len(nodes) > 12 else "")
        + "), or every one against ONNX Runtime with `python -m playground model`."
    )
    if args.output:
        with written(args.output, "wb") as f:
            np.save(f, np.asarray(y, np.float32), allow_pickle=False)
    if args.json:
        print(
            json.dumps(
                _finite(
                    {
                        "model": os.path.basename(args.onnx),
                        "output_source": label,
                        "output_name": name,
                        "inputs": {k: list(v.shape) for k, v in feeds.items()},
                        "output_shape": list(y.shape),
                        "nodes": [n.name for n in nodes],
                        "notes": notes,
                    }
                ),
                allow_nan=False,
                default=str,
            )
        )
    else:
        np.set_printoptions(precision=8, linewidth=200, suppress=True)
        for k, v in feeds.items():
            print(f"input {k}: {v.shape}")
        print(f"output {name}: {y.shape}  [{label}]", y, sep="\n")
        for m in notes:
            print("note:", m)
    return True


def cmd_run(args) -> int:
    from .network.core import evaluate  # TensorRT is imported only by commands that build

    if args.layer is not None and "+" in args.layer:
        return cmd_run_chain(args)
    if args.intermediates is not None or args.mark_intermediates:
        raise UsageError("--intermediates and --mark-intermediates: only with a chain (LAYER+LAYER…)")
    if args.output:
        output_path(args.output, "--output", ".npy")
    if (args.layer is None) == (args.onnx is None):
        raise UsageError("run: give a LAYER or --onnx MODEL.onnx (one of the two)")
    if args.node is not None and args.onnx is None:
        raise UsageError("--node: only with --onnx")
    opened = None
    if args.onnx is not None:
        if args.set or args.compare:
            raise UsageError("--set and --compare: not with --onnx (the node's attributes are its parameters)")
        model = open_model(args.onnx)
        if _whole_model(model, args):
            return 0
        opened, x, shown_inputs, sources = _opened_node(model, args)
        layer_name, raw = opened.layer.name, opened.raw
    else:
        layer_name, raw = args.layer, parse_sets(args.layer, args.set)
        x = load_inputs(args.layer, args.input)
    choices = get_layer(layer_name).param("precision").choices
    if args.compare is not None and args.compare not in choices:
        raise ValidationError(layer_name, "--compare", "must be one of " + ", ".join(choices), args.compare)
    result = evaluate(layer_name, raw, x, compare=args.compare)
    shown = opened.to_onnx(opened.finish(result.output)) if opened else result.output  # after Gemm's SUM with C
    if args.output:
        with written(args.output, "wb") as f:  # exactly this name (np.save of a name would add .npy)
            np.save(f, shown.astype(np.float32), allow_pickle=False)
    if args.json:
        out = result_json(result)
        if opened is not None:
            out["onnx"] = opened.describe() | {
                "output_shape": list(shown.shape),
                "inputs": [
                    {"tensor": t, "shape": list(a.shape), "source": sources[t]} for t, a in shown_inputs.items()
                ],
            }
        out |= _second_opinions(result, opened)
        print(json.dumps(_finite(out), allow_nan=False, default=str))
    else:
        np.set_printoptions(precision=8, linewidth=200, suppress=True)
        if opened is not None:
            print(f"node    : {opened.node} ({opened.op}) of {opened.model} as {opened.layer.name}")
        if opened is not None:
            for t, a in shown_inputs.items():
                print(f"input {t} ({sources[t]}):", a.shape, a, sep="\n")
        else:
            for i, a in enumerate((result.inputs or {"x": result.input}).values()):
                print(f"inputH{i} :", a.shape, a, sep="\n")
        print(f"outputH0: {shown.shape}  [{result.source_label}]", shown, sep="\n")
        if result.compared is not None:
            other, d = result.compared, result.difference
            print(
                f"compared: {other.params['precision']} {other.output.shape}  [{other.source_label}]",
                other.output,
                sep="\n",
            )
            if d is not None:
                print(f"max |{d['precision']}| {d['max_abs_error']:.6g}, max relative {d['max_rel_error']:.6g}")
        s = result.engine_summary()
        print(
            f"engine: {s['status']}, {s['bytes']} bytes, build {s['build_ms']} ms, "
            f"TensorRT output shape {s['output_shape']}, {len(s['layers'])} layer(s)"
        )
        for m in result.messages + (opened.notes + [f"ONNX differs: {d}" for d in opened.differs] if opened else []):
            print("note:", m)
    if result.engine_status == "refused":
        raise Refused(result.error)
    if result.error:
        raise Failure(result.error)
    return 0


def intermediates_dir(path: str) -> Path:
    """The directory --intermediates writes to (made if missing; its parent must exist), checked before any work."""
    d = Path(path)
    fail = lambda rule: ValidationError("output", "--intermediates", f"{path}: {rule}")  # noqa: E731
    if d.exists() and not d.is_dir():
        raise fail("is a file; it must name a directory")
    if not d.exists():
        if not d.parent.is_dir():
            raise fail(f"its parent {d.parent} does not exist")
        try:
            d.mkdir()
        except OSError as exc:
            raise fail(exc.strerror or str(exc)) from None
    if not os.access(d, os.W_OK):
        raise fail("is not writable")
    return d


def cmd_run_chain(args) -> int:
    """`run A+B+…`: the chain's every tensor from the references and its engine built as one network, each engine
    layer with the chain layers it computes (`fuses`)."""
    from .network import chain as C

    if args.compare is not None or args.onnx is not None or args.node is not None:
        raise UsageError("--compare, --onnx and --node: not with a chain")
    if args.output:
        output_path(args.output, "--output", ".npy")
    folder = intermediates_dir(args.intermediates) if args.intermediates else None
    names = C.parse_names(args.layer)
    raw = parse_sets(C.CHAIN, args.set)
    given = _one_input(args.input, "a chain (its first layer's input)")
    x = read_npy(given, C.CHAIN, "--input") if given else None
    result = C.evaluate(names, raw, x)
    if args.output:
        with written(args.output, "wb") as f:
            np.save(f, result.output.astype(np.float32), allow_pickle=False)
    if folder is not None:
        for key, t in result.tensors.items():
            with written(str(folder / f"{key}.npy"), "wb") as f:
                np.save(f, t.astype(np.float32), allow_pickle=False)
    engine = result.engine
    marked = C.build(result.chain, marked=True) if args.mark_intermediates else None
    if args.json:
        from .onnx.chain import opinions
        from .trt.backend import detect

        out = result.to_json() | {"backend": detect().describe()} | opinions(result)
        if marked is not None:
            out["engine_marked"] = marked.summary()
        print(json.dumps(_finite(out), allow_nan=False, default=str))
    else:
        np.set_printoptions(precision=8, linewidth=200, suppress=True)
        print(f"chain   : {' → '.join(result.chain.keys)}")
        print("inputH0 :", result.tensors[C.INPUT].shape, result.tensors[C.INPUT], sep="\n")
        print(f"outputH0: {result.output.shape}  [NumPy references]", result.output, sep="\n")
        s = engine.summary()
        when = ENGINE_STATUS.get(s["status"], s["status"])
        print(
            f"engine: {when}, by {s['builder']}, {s['bytes']} bytes, build {s['build_ms']} ms, "
            f"{len(s['layers'])} engine layer(s), not run here"
        )
        for i, layer in enumerate(s["layers"]):
            what = ", ".join(layer["fuses"]) if layer["fuses"] else layer["role"]
            print(f"  [{i}] {layer['name']} ({layer['type']}, {layer['tactic']}): {what}")
        if marked is not None and marked.status in ("built", "cached"):
            print(
                f"with every intermediate marked as an output (a debugging build): {len(marked.layers)} engine layer(s)"
            )
            for i, layer in enumerate(marked.layers):
                print(f"  [{i}] {layer['name']} ({layer['type']}): {', '.join(layer['fuses']) or layer['role']}")
        for m in result.messages:
            print("note:", m)
    if engine.status == "refused":
        raise Refused(engine.report.error)
    if engine.status == "failed":
        raise Failure(engine.report.error)
    return 0


def _second_opinions(result, opened) -> dict:
    """ONNX Runtime's and TensorRT's ONNX parser's opinions; where either library is missing, the reason."""
    layer = get_layer(result.layer)
    if layer.onnx is None:  # a layer with no ONNX mapping has no second opinion
        return {"onnxruntime": {"status": "no ONNX export of this layer yet"}, "onnx_parser": None}
    try:
        from .onnx.opinions import second_opinions
    except ImportError as exc:
        return {"onnxruntime": {"status": f"not installed ({exc.name})"}, "onnx_parser": None}
    return second_opinions(result, opened)


NAME_COLUMN = 48  # the widest a listing's name column gets: a longer name is cut (--json has it whole)


def _name_width(nodes: list[dict]) -> int:
    return min(NAME_COLUMN, max(len(n["name"]) for n in nodes))


def _cut(text: str, width: int) -> str:
    """`text` in a column of `width` characters: padded, or cut with "…" (a model's names are its author's: a line
    padded to the longest of them made a 1 MB model print gigabytes)."""
    return f"{text:<{width}}" if len(text) <= width else text[: width - 1] + "…"


def cmd_onnx(args) -> int:
    from .base.onnx_map import opens_as
    from .onnx.opening import list_nodes

    nodes = list_nodes(open_model(args.model))
    if args.json:
        print(json.dumps({"model": os.path.basename(args.model), "nodes": nodes}))
        return 0
    width = _name_width(nodes)
    for n in nodes:
        opens = f"→ {opens_as(n['layer'], n.get('identity'))}" if n["layer"] else f"✗ {n['reason']}"
        print(f"{_cut(n['name'], width)}  {_cut(n['op_type'], 18)} {opens}")
        for d in n.get("differs") or []:
            print(f"{'':<{width}}  {'':<18}   ONNX differs: {d}")
    return 0


def cmd_model(args) -> int:
    """Every node of the model on its real input against ONNX Runtime, its output, and the parser's engine; kept
    per model digest in the engine cache's store (model.kept), so a second open reads the answer."""
    from .base.onnx_map import opens_as
    from .model import kept, whole
    from .onnx import reading
    from .onnx.runtime import worst_text

    given = {}
    for item in args.input:
        name, sep, path = item.partition("=")  # a file path may hold "=" too
        if not sep or not name or not path:
            raise UsageError(f"--input {item}: takes NAME=FILE.npy (NAME a graph input of the model)")
        if name in given:
            raise ValidationError("model", "--input", f"input {name} is given twice", item)
        given[name] = read_npy(path, "model", f"--input {name}")
    if args.output:
        output_path(args.output, "--output", ".npy")
    if args.precision or any(getattr(args, o) is not None for o in PRECISION_OPTIONS):
        return _model_precision(args, given)
    if args.node_data:
        output_path(args.node_data, "--node-data", ".json")
    outputs, data, name = {}, read_model(args.model), os.path.basename(args.model)
    folder = os.path.dirname(os.path.abspath(args.model))
    load = lambda: reading.load_model(data, name, folder)  # noqa: E731 - only where the answer is not kept
    wanted = outputs if args.output else None
    if b"location" in data:  # external data may be named (its key): those bytes are not the model's digest
        from .model import whole

        answer = whole.analyze(load(), name, given, engine=not args.no_engine, outputs=outputs)
        answer["notes"].append("Not kept in the cache: the model may read external data, which its digest omits.")
    else:
        digest = hashlib.sha256(data).hexdigest()
        answer = kept.analysis(digest, name, load, given, engine=not args.no_engine, outputs=wanted)
    if args.output and outputs:
        with written(args.output, "wb") as f:  # the model's first output, as ONNX Runtime computed it
            np.save(f, np.asarray(next(iter(outputs.values()))), allow_pickle=False)
    if args.node_data:
        from .model.node_data import node_data

        with written(args.node_data, "w") as f:
            json.dump(node_data(answer), f, allow_nan=False)
    unwritten = None
    if args.output and not outputs:  # the answer is still printed; the exit status says the file is not there
        why = answer.get("onnxruntime_error") or "the model has no tensor output (a sequence is none)"
        unwritten = Failure(f"--output {args.output}: not written: ONNX Runtime gave no output ({why})")
    if args.json:
        print(json.dumps(_finite(answer), allow_nan=False, default=str))
        if unwritten:
            raise unwritten
        return _refused(answer)
    nodes = answer["nodes"]
    width = _name_width(nodes)
    for n in nodes:
        if n["layer"] is None:
            verdict = f"✗ {n['reason']}"
        elif n.get("agrees") is None:
            verdict = f"→ {opens_as(n['layer'], n.get('identity'))}" + (
                f": not compared ({n['why']})" if n.get("why") else ""
            )
        else:
            verdict = (
                f"→ {opens_as(n['layer'], n.get('identity'))}: {'agrees' if n['agrees'] else 'DIFFERS'} with ONNX Runtime, "
                "max |diff| "
                f"{n['max_abs_diff'] if n.get('max_abs_diff') is not None else n.get('why')}"
            )
            if n.get("worst") and not n["agrees"]:
                verdict += f"; {worst_text(n)}"
            if n.get("rule"):
                verdict += f" (rule: {n['rule']})"
            if n.get("masked"):
                verdict += f"; {n['masked']['cells']} undefined cell(s) not compared"
        print(f"{_cut(n['name'], width)}  {_cut(n['op_type'], 18)} {verdict}")
    for name, o in answer.get("output", {}).items():
        print(f"output {name}: {tuple(o['shape'])} min {o['min']} max {o['max']}  [{answer['output_source']}]")
    if "onnxruntime_error" in answer:
        print(f"ONNX Runtime could not run the model: {answer['onnxruntime_error']}")
    engine = answer.get("engine")
    if engine:
        print(
            f"engine: {engine['status']} by {engine.get('parser', '')}, {len(engine.get('layers', []))} layer(s)"
            + (f": {engine['error'] or engine.get('why')}" if engine["status"] not in ("built", "cached") else "")
        )
        for layer in engine.get("layers", []):
            print(
                f"  {layer['name']} ({layer['type']})" + (f" ← {', '.join(layer['fuses'])}" if layer["fuses"] else "")
            )
        for note in engine.get("notes", []):
            print(f"  note: {note}")
    c = answer["counts"]
    print(
        f"{c['nodes']} nodes"
        + (f" ({c['folded']} constant nodes folded)" if c.get("folded") else "")
        + f", {c['opened']} opened as layers, {c['agreeing']} agreeing with ONNX Runtime"
        + whole.engine_words(answer)
        + f"; {answer['seconds']} s"
        + (
            f" (kept in the cache: its first analysis took {answer['cache']['first_seconds']} s)"
            if answer.get("cache", {}).get("status") == "cached"
            else ""
        )
    )
    for m in answer.get("cache", {}).get("notes", []):
        print("note:", m)
    for m in answer["notes"]:
        print("note:", m)
    if unwritten:
        raise unwritten
    return _refused(answer)


def _refused(answer: dict) -> int:
    """2 where the model is refused (an opset ONNX Runtime has no kernel for, which no conversion mends), said on
    stderr after its nodes are listed; else 0."""
    if answer.get("refused"):
        print(f"error: {answer['refused']}", file=sys.stderr)
        return 2
    return 0


PRECISION_OPTIONS = ("atol", "rtol", "min_cosine", "plan_budget", "plan_model", "plan_exclude")


def _model_precision(args, given: dict) -> int:
    """`model --precision P`: playground.model.precision_model's answer, the plan written where asked."""
    from .model import precision_model as pm
    from .model import precision_plan as pp
    from .onnx import reading

    if not args.precision:
        used = next(o for o in PRECISION_OPTIONS if getattr(args, o) is not None)
        raise UsageError(f"--{used.replace('_', '-')}: needs --precision FP16|BF16|INT8|FP8")
    for option, low, high in (("atol", 0, math.inf), ("rtol", 0, math.inf), ("min_cosine", -1, 1)):
        v = getattr(args, option)
        if v is not None and not (math.isfinite(v) and low <= v <= high):
            raise UsageError(f"--{option.replace('_', '-')} {v}: must be a finite number in [{low}, {high}]")
    if args.plan_budget is not None and not 0 <= args.plan_budget <= 1000:
        raise UsageError(f"--plan-budget {args.plan_budget}: must be 0 … 1000 composed evaluations")
    if args.output:
        raise UsageError("--output: the model's output is ONNX Runtime's; with --precision its figures are in --json")
    if args.plan_model:
        output_path(args.plan_model, "--plan-model", ".onnx")
    if args.plan_exclude:
        output_path(args.plan_exclude, "--plan-exclude", ".json")
    policy = pm.Policy(pm.MIN_COSINE if args.min_cosine is None else args.min_cosine, args.atol, args.rtol)
    budget = pm.PLAN_BUDGET if args.plan_budget is None else args.plan_budget
    model = open_model(args.model)
    if args.plan_model:
        pp.written_opset(model, args.precision)  # refused before the analysis where it cannot be written
    answer, c = pm.study(model, os.path.basename(args.model), given, args.precision, policy, budget)
    p = answer["precision"]
    p["autocast"] = pp.nodes_to_exclude(p["keep_fp32"], args.precision)
    if args.plan_exclude:
        with written(args.plan_exclude, "w") as f:
            json.dump(p["autocast"]["nodes_to_exclude"], f)
    if args.plan_model:
        source = reading.library().load_model_from_string(read_model(args.model))
        reading.named(source)  # the names the analysis gave its nodes
        external = any(t.data_location == 1 for t in source.graph.initializer)  # EXTERNAL: the folded model then
        planned = pp.plan_model(c, args.precision, p["keep_fp32"], None if external else source).SerializeToString()
        with written(args.plan_model, "wb") as f:
            f.write(planned)
        p["plan"]["reopened"] = pm.reopened(planned, os.path.basename(args.plan_model), c, policy)
    if args.json:
        print(json.dumps(_finite(answer), allow_nan=False, default=str))
    else:
        print("\n".join(pm.lines(answer)))
    return 0


def cmd_layers(args) -> int:
    for layer in [get_layer(args.layer)] if args.layer else LAYERS.values():
        print(f"{layer.name}: {layer.summary}")
        if layer.several:  # the order --input takes them in
            print("  inputs: " + "; ".join(f"{i.name} ({i.help})" if i.help else i.name for i in layer.inputs))
        for p in layer.params:
            bounds = f" [{p.low}, {p.high}]" if p.low is not None or p.high is not None else ""
            extra = f" one of {', '.join(p.choices)}" if p.choices else ""
            extra += f"; presets: {', '.join(p.presets)}" if p.presets else ""
            print(f"  {p.name} ({p.kind}{bounds}{extra}): {p.help}")
    return 0


def cmd_export(args) -> int:
    from .network import presets
    from .network.export import export_script

    if "+" in args.layer:
        return cmd_export_chain(args)
    suffix = ".onnx" if args.format == "onnx" else ".py"
    if args.format == "onnx" and not args.out:
        raise UsageError("--format onnx: needs --out FILE.onnx (a model is binary)")
    if args.out:
        output_path(args.out, "--out", suffix)
    raw, x = {}, None
    if args.preset:
        try:
            preset = presets.find(args.layer, args.preset)
        except KeyError as exc:
            raise ValidationError(args.layer, "--preset", exc.args[0]) from None
        raw, x = dict(preset.params), presets.input_for(preset)
    raw.update(parse_sets(args.layer, args.set))
    if args.input:
        x = load_inputs(args.layer, args.input)
    if args.format == "onnx":
        from .base.precision import with_data_scale
        from .onnx.writing import export_model

        layer = get_layer(args.layer)
        if layer.onnx is None:
            raise ValidationError(args.layer, "--format", "onnx: this layer has no ONNX export yet", "onnx")
        xs = layer.feed(x)
        shape = {n: a.shape for n, a in xs.items()}
        params = with_data_scale(layer.resolve(raw, shape), xs if layer.several else xs[layer.input_names[0]])
        model = export_model(layer, params, shape)  # quantize_scale 0 is the input's amax/127 (or /448) in it
        with written(args.out, "wb") as f:
            f.write(model.SerializeToString())
        print(
            f"wrote {args.out}: {len(model.graph.node)} node(s), opset {model.opset_import[0].version}; reopen it "
            f"with `python -m playground run --onnx {args.out}`"
        )
        return 0
    return _script_out(export_script(args.layer, raw, x), args.out)


def cmd_export_chain(args) -> int:
    """`export A+B+… [--format python|script|onnx]`: the chain as a standalone script, or as an ONNX model."""
    from .network import chain as C
    from .network.chain_export import export_chain_script

    if args.preset:
        raise UsageError("--preset: not with a chain (its layers and --set KEY.NAME=VALUE say it)")
    if args.format == "onnx" and not args.out:
        raise UsageError("--format onnx: needs --out FILE.onnx (a model is binary)")
    if args.out:
        output_path(args.out, "--out", ".onnx" if args.format == "onnx" else ".py")
    given = _one_input(args.input, "a chain (its first layer's input)")
    x = read_npy(given, C.CHAIN, "--input") if given else None
    if args.format == "onnx":
        from .onnx.chain import export_chain_model

        chain = C.resolve(C.parse_names(args.layer), parse_sets(C.CHAIN, args.set), None if x is None else x.shape)
        model = export_chain_model(chain)
        with written(args.out, "wb") as f:
            f.write(model.SerializeToString())
        print(
            f"wrote {args.out}: {len(model.graph.node)} node(s), opset {model.opset_import[0].version} (the chain "
            "in FP32)"
        )
        return 0
    return _script_out(export_chain_script(C.parse_names(args.layer), parse_sets(C.CHAIN, args.set), x), args.out)


def _script_out(script: str, out: str | None) -> int:
    """An exported script to `out`, or to standard output without one."""
    if not out:
        sys.stdout.write(script)
        return 0
    with written(out, "w") as f:
        f.write(script)
    print(f"wrote {out}: run it with `python {out}`")
    return 0


def cmd_room(args) -> int:
    from .serve.room import RoomError, run

    if not 1 <= args.replicas <= 64:
        raise UsageError(f"--replicas {args.replicas}: must be between 1 and 64")
    if not 1 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: must be a TCP port (1 … 65535)")
    try:
        return run(args.replicas, args.port, args.bind, args.first_port, args.cache, args.public_url)
    except RoomError as exc:
        raise Failure(str(exc)) from None


def cmd_snapshot(args) -> int:
    from .chromium.snapshot import shots_from, take  # Playwright, only for this command
    from .serve import protocol

    pages = args.pages if args.pages is not None else (["home", *LAYERS] if not args.presets else [])
    if args.out.exists() and not args.out.is_dir():
        raise UsageError(f"--out {args.out}: is a file; it must name a directory (made if missing)")
    if args.width is not None and not 320 <= args.width <= 7680:
        raise UsageError(f"--width {args.width}: must be 320 to 7680 px")
    if args.base_url and not re.match(r"^https?://[^\s]+$", args.base_url):
        raise UsageError(f"--base-url {args.base_url!r}: must be an http:// or https:// address")
    model = None
    if args.model is not None:
        from .base.errors import ValidationError
        from .onnx import reading

        try:
            data = args.model.read_bytes()
            model = (reading.remember(data, args.model.name)[0], args.model.name[:80])  # the server reads it from there
        except OSError as exc:
            raise UsageError(f"--model {args.model}: cannot be read ({exc.strerror})") from None
        except ValidationError as exc:
            raise UsageError(f"--model {args.model}: {exc}") from None
    try:
        shots = shots_from(pages, args.presets, model)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        take(
            shots,
            args.out,
            height=args.height,
            picture_width=args.width,
            pick=not args.no_pick,
            base_url=args.base_url.rstrip("/"),
            presenter=args.presenter,
            crop="page" if args.full_page else args.crop,
            scale=args.scale,
            background=args.background,
            query="&".join(t for t in (args.query, f"{protocol.VIEW_CELL}={args.cell}" if args.cell else "") if t),
            badges=args.badges,
        )
    except (RuntimeError, TimeoutError) as exc:  # the app or the browser failed
        raise Failure(str(exc)) from None
    return 0


class _LayersOrChain(list):
    """`run`'s choices: a layer's name, or a chain of them joined by "+" (checked by playground.network.chain)."""

    def __contains__(self, value) -> bool:
        return super().__contains__(value) or (isinstance(value, str) and "+" in value)


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m playground", description="TensorRT Layer Playground")
    sub = parser.add_subparsers(dest="command", required=True)
    sets = dict(
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a parameter: number, comma list, enum member, true/false, preset, or @FILE.npy",
    )

    run = sub.add_parser("run", help="build (and where possible run) one layer configuration, or an ONNX node")
    run.add_argument("layer", nargs="?", choices=_LayersOrChain(LAYERS), metavar="LAYER[+LAYER…]")
    run.add_argument("--onnx", metavar="MODEL.onnx", help="run a node of this ONNX model as its layer")
    run.add_argument("--node", help="with --onnx: the node's name (default: the only node, or the first that opens)")
    run.add_argument("--set", **sets)
    run.add_argument(
        "--input",
        action="append",
        metavar="[NAME=]IN.npy",
        help="input tensor (.npy); default: the layer's spec example. A layer of several inputs takes "
        "one --input per input, in its declared order, or NAME=IN.npy; with --onnx, one per graph input the node "
        "depends on, in the model's order, or NAME=IN.npy (NAME a graph input)",
    )
    run.add_argument("--output", help="write the shown output tensor here (.npy, float32)")
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.add_argument(
        "--intermediates",
        metavar="DIR",
        help="a chain: write every tensor along it here (input.npy, KEY.npy for each layer)",
    )
    run.add_argument(
        "--mark-intermediates",
        action="store_true",
        help="a chain: also build it with every "
        "intermediate marked as an output, as a debugging build does (--json: engine_marked), to see "
        "how that changes what TensorRT fuses",
    )
    run.add_argument(
        "--compare",
        metavar="PRECISION",
        help="also compute the configuration in this precision and report the difference between the two outputs",
    )
    run.set_defaults(func=cmd_run)

    onnx = sub.add_parser("onnx", help="list an ONNX model's nodes and the layer each opens as (or why not)")
    onnx.add_argument("model", metavar="MODEL.onnx")
    onnx.add_argument("--json", action="store_true", help="print one JSON object")
    onnx.set_defaults(func=cmd_onnx)

    model = sub.add_parser(
        "model",
        help="every node of an ONNX model as its layer, on its real input, against "
        "ONNX Runtime; the model's output; TensorRT's ONNX parser's engine layers",
    )
    model.add_argument("model", metavar="MODEL.onnx")
    model.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=FILE.npy",
        help="a graph input's tensor (default: the seeded random pattern, N = 1)",
    )
    model.add_argument("--output", help="write the model's first output here (.npy), as ONNX Runtime computed it")
    model.add_argument("--no-engine", action="store_true", help="skip TensorRT's parser build")
    model.add_argument(
        "--node-data",
        metavar="FILE.json",
        help="write each node's max |diff| as Model Explorer's node data (its node data provider's JSON)",
    )
    model.add_argument(
        "--precision",
        choices=["FP16", "BF16", "INT8", "FP8"],
        help="every node in this precision: its local and accumulated error, the first divergence, a keep-FP32 plan",
    )
    model.add_argument("--atol", type=float, help="--precision: a cell diverges beyond atol + rtol·|FP32| (l0 > 0)")
    model.add_argument("--rtol", type=float, help="--precision: with --atol (each 1e-5 where only one is given)")
    model.add_argument("--min-cosine", type=float, help="--precision: the least cosine similarity (default 0.997)")
    model.add_argument("--plan-budget", type=int, help="--precision: composed evaluations for the plan (default 12)")
    model.add_argument("--plan-model", metavar="OUT.onnx", help="--precision: write the model with the plan placed")
    model.add_argument("--plan-exclude", metavar="OUT.json", help="--precision: write ModelOpt's nodes_to_exclude")
    model.add_argument("--json", action="store_true", help="print one JSON object")
    model.set_defaults(func=cmd_model)

    layers = sub.add_parser("layers", help="list layers and their parameters")
    layers.add_argument("layer", nargs="?", choices=list(LAYERS))
    layers.set_defaults(func=cmd_layers)

    export = sub.add_parser(
        "export",
        help="write a standalone Python script that builds (and where possible runs) one configuration",
        description="Write a standalone Python script (no playground import) for one layer configuration.",
    )
    export.add_argument("layer", choices=_LayersOrChain(LAYERS), metavar="LAYER[+LAYER…]")
    export.add_argument(
        "--preset",
        help="start from one of the spec's examples or lessons (playground.network.presets); --set and --input override it",
    )
    export.add_argument("--set", **sets)
    export.add_argument(
        "--input",
        action="append",
        metavar="[NAME=]IN.npy",
        help="input tensor (.npy); default: the preset's or the layer's spec example (several inputs: as for run)",
    )
    export.add_argument(
        "--format",
        choices=("python", "script", "onnx"),
        default="python",
        help="python (or script): a standalone script; onnx: the configuration as an ONNX model",
    )
    export.add_argument("--out", help="write the script (or model) here (default for a script: standard output)")
    export.set_defaults(func=cmd_export)

    room = sub.add_parser("room", help="N app processes behind HAProxy with one engine cache: a workshop's room")
    room.add_argument("--replicas", type=int, default=4, help="app processes (one Python each; about one per core)")
    room.add_argument("--port", type=int, default=8080, help="where the room connects (HAProxy)")
    room.add_argument("--bind", default="0.0.0.0", help="the proxy's address (0.0.0.0: every interface)")
    room.add_argument(
        "--first-port", type=int, default=None, help="the replicas' first local port (default: free ones)"
    )
    room.add_argument("--cache", default=None, help="the shared engine cache directory (default: engine_cache/)")
    room.add_argument(
        "--public-url",
        default=None,
        help="the address a room opens, for the pages' Copy link and "
        "QR code (e.g. http://10.0.0.5:8080); default: the address each page was opened under",
    )
    room.set_defaults(func=cmd_room)

    snapshot = sub.add_parser("snapshot", help="screenshots of pages/presets in headless Chromium, with index.md")
    snapshot.add_argument("--out", required=True, type=Path)
    snapshot.add_argument("--pages", nargs="*", default=None, help="home and/or layer names (default: all pages)")
    snapshot.add_argument("--presets", nargs="*", default=[], help="LAYER:PRESET, LAYER:all or all")
    snapshot.add_argument(
        "--width",
        type=int,
        default=None,
        metavar="PX",
        help="every picture this wide (a layer's figures laid out in it, wrapping; a page's content laid out in it); "
        "default: the window 1920 px wide, each picture cropped to its content",
    )
    snapshot.add_argument("--height", type=int, default=1080, help="the window's height")
    snapshot.add_argument(
        "--no-pick", action="store_true", help="leave out the picked cell's and its windows' outlines"
    )
    snapshot.add_argument("--base-url", default="", help="the gallery's links absolute, under this address")
    snapshot.add_argument(
        "--model", type=Path, default=None, help="the ONNX model the model page (--pages model) shows"
    )
    snapshot.add_argument("--presenter", action="store_true", help="presenter mode (large fonts, high contrast)")
    snapshot.add_argument(
        "--badges",
        action="store_true",
        help="keep the machine's badges (which engine, built or cached) in the pictures",
    )
    snapshot.add_argument(
        "--crop",
        choices=("figures", "stage", "page"),
        default="figures",
        help="figures: the heatmaps, shapes and badge; stage: with the controls; page: all of it",
    )
    snapshot.add_argument("--full-page", action="store_true", help="the old spelling of --crop page")
    snapshot.add_argument("--scale", type=int, choices=(1, 2, 3), default=1, help="device pixel ratio")
    snapshot.add_argument("--background", choices=("white", "dark"), default="white", help="opaque background")
    snapshot.add_argument(
        "--cell",
        type=int,
        choices=range(8, 161),
        metavar="PX",
        default=None,
        help="one cell size in px for every figure of the gallery (view.cell)",
    )
    snapshot.add_argument("--query", default="", help="more URL parameters for every page, e.g. 'hide=kernel,bias'")
    snapshot.set_defaults(func=cmd_snapshot)
    return parser


# Control and direction characters other than a line's end or a tab: a model's node names, a file's name and the
# messages that quote them are any string, and an escape sequence in one would drive the terminal, not be read.
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


class _Plain:
    """A text stream that writes every unsafe character as its escape (`\\x1b`), the rest as given."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(_UNSAFE.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), text))

    def __getattr__(self, name):  # flush, fileno, isatty, encoding: the stream's own
        return getattr(self._stream, name)


def main(argv: list[str] | None = None) -> int:
    with contextlib.redirect_stdout(_Plain(sys.stdout)), contextlib.redirect_stderr(_Plain(sys.stderr)):
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValidationError, UsageError) as exc:
        stricter = getattr(exc, "stricter", None)  # a rule TensorRT's builder does not make: why the playground does
        print(f"error: {exc}" + (f" ({stricter})" if stricter else ""), file=sys.stderr)
        return 2
    except Refused as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 3
    except PlaygroundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
