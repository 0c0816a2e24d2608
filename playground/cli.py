"""Command line: `python -m playground run LAYER [--set NAME=VALUE]... [--input IN.npy] [--output OUT.npy] [--json]`.

Exit status: 0 success, 2 invalid parameters or input (the message names the parameter and
the rule), 1 any other failure (TensorRT's refusal included).
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from .errors import PlaygroundError, ValidationError
from .layers import LAYERS, get_layer
from .params import jsonable


def parse_sets(layer_name: str, items: list[str]) -> dict:
    """`NAME=VALUE` pairs; `@FILE.npy` values are loaded as arrays (never pickles)."""
    raw = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValidationError(layer_name, item, "--set takes NAME=VALUE")
        name = name.strip()
        if value.startswith("@"):
            try:
                value = np.load(value[1:], allow_pickle=False)
            except (OSError, ValueError) as exc:
                raise ValidationError(layer_name, name, f"could not read the array file {value[1:]} ({exc})") from None
        raw[name] = value
    return raw


def load_input(path: str) -> np.ndarray:
    try:
        x = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ValidationError("input", "--input", f"could not read {path} as a .npy array ({exc})") from None
    if not np.issubdtype(x.dtype, np.number):
        raise ValidationError("input", "--input", f"must hold numbers, not {x.dtype}")
    return x.astype(np.float32)


def result_json(r) -> dict:
    return {
        "layer": r.layer,
        "params": {k: jsonable(v) for k, v in r.params.items()},
        "input_shape": list(r.input.shape),
        "output_shape": list(r.output.shape),
        "output_source": r.output_source,
        "backend": r.backend.describe(),
        "engine": r.engine_summary(),
        "max_abs_diff": r.max_abs_diff,
        "latency_ms": r.latency_ms,
        "messages": r.messages,
        "error": r.error,
    }


def cmd_run(args) -> int:
    from .core import evaluate  # TensorRT is imported only by commands that build

    try:
        raw = parse_sets(args.layer, args.set)
        x = load_input(args.input) if args.input else None
        result = evaluate(args.layer, raw, x)
    except ValidationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except PlaygroundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.output:
        np.save(args.output, result.output.astype(np.float32))
    if args.json:
        print(json.dumps(result_json(result), allow_nan=False, default=str))
    else:
        np.set_printoptions(precision=8, linewidth=200, suppress=True)
        print("inputH0 :", result.input.shape, result.input, sep="\n")
        print(f"outputH0: {result.output.shape}  [{result.source_label}]", result.output, sep="\n")
        s = result.engine_summary()
        print(f"engine: {s['status']}, {s['bytes']} bytes, build {s['build_ms']} ms, "
              f"TensorRT output shape {s['output_shape']}, {len(s['layers'])} layer(s)")
        for m in result.messages:
            print("note:", m)
    if result.error:
        print(f"error: {result.error}", file=sys.stderr)
        return 1
    return 0


def cmd_layers(args) -> int:
    for layer in ([get_layer(args.layer)] if args.layer else LAYERS.values()):
        print(f"{layer.name}: {layer.summary}")
        for p in layer.params:
            bounds = f" [{p.low}, {p.high}]" if p.low is not None or p.high is not None else ""
            extra = f" one of {', '.join(p.choices)}" if p.choices else ""
            extra += f"; presets: {', '.join(p.presets)}" if p.presets else ""
            print(f"  {p.name} ({p.kind}{bounds}{extra}): {p.help}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m playground", description="TensorRT Layer Playground")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="build (and where possible run) one layer configuration")
    run.add_argument("layer", choices=list(LAYERS))
    run.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                     help="a parameter: number, comma list, enum member, true/false, preset, or @FILE.npy")
    run.add_argument("--input", help="input tensor (.npy); default: the layer's spec example")
    run.add_argument("--output", help="write the shown output tensor here (.npy, float32)")
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.set_defaults(func=cmd_run)
    layers = sub.add_parser("layers", help="list layers and their parameters")
    layers.add_argument("layer", nargs="?", choices=list(LAYERS))
    layers.set_defaults(func=cmd_layers)
    from .export import add_export_command
    from .snapshot import add_snapshot_command
    add_export_command(sub)
    add_snapshot_command(sub)
    args = parser.parse_args(argv)
    return args.func(args)
