"""Export one configuration as a standalone Python script (no playground import).

`export_script(layer, raw_params, x)` resolves the parameters exactly as the playground does
and writes a script that defines the same input and parameters, copies the layer's own network
construction (`inspect.getsource(layer.build)`), builds with today's API
(a strongly typed `create_network`, `build_serialized_network`), prints TensorRT's inferred output shape as
`output shape: (…)`, and runs the engine with cuda-python (`cuda.bindings.runtime`,
`set_tensor_address`, `execute_async_v3`) where a GPU that this TensorRT supports is present.

`python -m playground export LAYER …` (playground.cli) writes one.
"""

from __future__ import annotations

import base64
import builtins
import dis
import inspect
import json
import re
import textwrap
import zlib
from pathlib import Path

import numpy as np

from ..base import precision
from ..base.errors import PlaygroundError
from ..base.layer import Layer
from ..base.memo import Memo
from ..base.params import same_params
from ..layers import get_layer
from ..trt.backend import RTX_HINT
from ..trt.engine import OUTPUT_NAME, BuildSettings, canonical, network_inputs
from . import script_runner

RUNNER_MARKER = "# -- MARKER: the exported script's text starts here --"
INLINE_LIMIT = 4096  # arrays with more values are embedded as base64 of their zlib-compressed bytes
CLI_ARRAY_LIMIT = 64  # longer arrays are shown as @NAME.npy in the playground command of the header
LINE = 100
# The only module-level names a build function may use; trt, network, x and p are its arguments.
BUILD_GLOBALS = frozenset({"np"})
# Copied into every script beside the layer's construction: the casts and Q/DQ pairs of its precision.
PRECISION_CODE = (precision.precision_input, precision.precision_output, precision.TypedNetwork)


class NotSelfContained(PlaygroundError):
    """A layer's build function uses module-level names a standalone script would not have."""


def build_source(layer: Layer) -> str:
    """The source of `layer.build`, checked to use nothing beyond trt, np, network, x and p."""
    fn = layer.build
    names = _global_names(fn.__code__) - BUILD_GLOBALS - set(dir(builtins))
    if names or fn.__code__.co_freevars:
        raise NotSelfContained(
            f"{layer.name}: build uses {', '.join(sorted(names | set(fn.__code__.co_freevars)))} from its module; "
            f"an exported script has only trt, np and the arguments (network, x, p)"
        )
    source = textwrap.dedent(inspect.getsource(fn))
    if not source.startswith("def "):
        raise NotSelfContained(f"{layer.name}: build must be a plain def (no decorators, no lambda)")
    return source


def _global_names(code) -> set[str]:
    names = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL")}
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _global_names(const)
    return names


# -- literals ----------------------------------------------------------------------------------
def _float(v) -> str:
    """A literal that reads back as exactly this float32 value."""
    v = np.float32(v)
    if np.isnan(v):
        return "np.nan"
    if np.isinf(v):
        return "np.inf" if v > 0 else "-np.inf"
    short = str(v)  # NumPy's shortest repr that identifies the float32
    if np.float32(float(short)).tobytes() == v.tobytes():
        return short
    return repr(float(v))  # the float32's exact value as a float64 repr: always reads back


def _wrap(items: list[str], row: int, indent: str) -> list[str]:
    """Lines of comma-separated items: one input row per line where it fits, else filled to LINE."""
    if 1 < row and len(", ".join(items[:row])) + len(indent) + 4 <= LINE:
        return [", ".join(items[i : i + row]) + "," for i in range(0, len(items), row)]
    lines, current = [], ""
    for item in items:
        if current and len(indent) + 4 + len(current) + len(item) + 2 > LINE:
            lines.append(current.rstrip())
            current = ""
        current += item + ", "
    return lines + ([current.rstrip()] if current else [])


def array_literal(a: np.ndarray, indent: str = "") -> str:
    """`np.array([...], dtype=np.float32).reshape(shape)`, or `unpack("base64…", shape)` past INLINE_LIMIT."""
    a = np.array(a, dtype=np.float32, order="C")  # not ascontiguousarray: it makes 0-d arrays 1-d
    shape = tuple(int(d) for d in a.shape)
    if a.size > INLINE_LIMIT:
        text = base64.b64encode(zlib.compress(a.astype("<f4").tobytes(), 9)).decode("ascii")
        width = LINE - len(indent) - 6
        chunks = "\n".join(f'{indent}    "{text[i : i + width]}"' for i in range(0, len(text), width))
        return f"unpack(\n{chunks},\n{indent}    {shape!r},\n{indent})"
    items = [_float(v) for v in a.ravel()]
    lines = _wrap(items, shape[-1] if shape else 0, indent)
    body = (
        "[" + lines[0].rstrip(",") + "]"
        if len(lines) == 1
        else "[\n" + "".join(f"{indent}    {line}\n" for line in lines) + f"{indent}]"
    )
    reshape = "" if len(shape) == 1 else f".reshape({shape!r})" if not shape else f".reshape{shape!r}"
    return f"np.array({body}, dtype=np.float32){reshape}"


def value_literal(value, indent: str = "") -> str:
    if isinstance(value, np.ndarray):
        return array_literal(value, indent)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, tuple):
        return repr(tuple(v.item() if isinstance(v, np.generic) else v for v in value))
    if isinstance(value, float):
        return repr(value) if np.isfinite(value) else f"float({str(value)!r})"
    return repr(value)  # bool, int, str, None


# -- the script ----------------------------------------------------------------------------------
_UNPACK = '''

def unpack(text, shape):
    """float32 values embedded as base64 of their zlib-compressed little-endian bytes."""
    return np.frombuffer(zlib.decompress(base64.b64decode(text)), dtype="<f4").astype(np.float32).reshape(shape)
'''


def runner_source() -> str:
    """The script's tail: playground/network/script_runner.py from its marker line on."""
    text = Path(script_runner.__file__).read_text(encoding="utf-8")
    return text[text.index("\n", text.index(RUNNER_MARKER)) + 1 :]


def _param_text(param, value) -> str:
    if isinstance(value, np.ndarray):
        if value.size <= 12:
            return f"[{', '.join(_float(v) for v in value.ravel())}] (shape {tuple(value.shape)})"
        return f"array of shape {tuple(value.shape)}, {value.size} values (below)"
    return param.to_text(value)


# essential_params by configuration: a page that shows a configuration's command and offers its script asks twice,
# and each ask resolves the layer once per parameter.
_essential = Memo(256)


def essential_params(layer: Layer, params: dict, shape) -> dict:
    """The fewest of `params` that resolve to all of them (the rest are what defaults give anyway); `shape`: as
    `Layer.resolve` takes it."""
    shapes = {n: list(s) for n, s in layer.shapes_of(shape).items()}
    key = json.dumps([layer.name, {k: canonical(v) for k, v in params.items()}, shapes], sort_keys=True, default=str)
    return dict(_essential.get_or_make(key, lambda: _essential_params(layer, params, shape)))


def _essential_params(layer: Layer, params: dict, shape) -> dict:
    kept = dict(params)
    for name in layer.param_names:
        trial = {k: v for k, v in kept.items() if k != name}
        try:
            if same_params(layer.resolve(trial, shape), params):
                kept = trial
        except Exception:  # noqa: BLE001 - without it the configuration is invalid: it stays
            pass
    return kept


def config_name(layer: Layer, params: dict, shape: tuple) -> str:
    """A configuration as a file name: the layer and the parameters that differ from its defaults
    (convolution--stride_nd-2-2--padding_mode-SAME_UPPER); the layer's name alone where none does."""
    parts = [f"{k}-{layer.param(k).to_text(v)}" for k, v in essential_params(layer, params, shape).items()]
    words = "--".join(re.sub(r"[^A-Za-z0-9_.-]+", "-", part).strip("-")[:40] for part in parts)
    return f"{layer.name}--{words}"[:150] if words else layer.name


def set_options(layer: Layer, params: dict, shapes: dict, key: str, prefix: str, files: dict | None = None) -> list:
    """`--set KEYNAME=VALUE` for each parameter that differs from what the defaults give (`essential_params`; `key`:
    "" for a layer's own run, "KEY." in a chain's); an array of more than CLI_ARRAY_LIMIT values as
    `@PREFIXNAME.npy`, the file's array put in `files` where given."""
    parts = []
    for name, value in essential_params(layer, params, shapes).items():
        if isinstance(value, np.ndarray) and value.size > CLI_ARRAY_LIMIT:
            if files is not None:
                files[f"{prefix}{name}.npy"] = value
            parts.append(f"--set {key}{name}=@{prefix}{name}.npy")
        else:
            parts.append(f"--set {key}{name}={layer.param(name).to_text(value)}")
    return parts


def playground_command(layer: Layer, params: dict, x, files: dict | None = None, stem: str = "") -> str:
    """The `python -m playground run` line for this configuration (parameters that differ from the defaults);
    `x`: the input, or the feed dict of a layer of several inputs. The arrays it names by file (`--input`,
    `--set NAME=@FILE.npy`) go into `files` (name → array), to be written beside it; `stem` prefixes their names
    (`STEM.input.npy`), so several commands share one folder."""
    files = {} if files is None else files
    prefix = f"{stem}." if stem else ""
    xs = layer.feed(x)
    shapes = {n: a.shape for n, a in xs.items()}
    xs = {n: xs[n] for n in layer.used_inputs(params)}
    parts = ["python -m playground run", layer.name, *set_options(layer, params, shapes, "", prefix, files)]
    for name, a in xs.items():
        example = layer.example_of(name)
        if a.shape != example.shape or not np.array_equal(a, example, equal_nan=True):
            file = f"{prefix}{name}.npy" if layer.several else f"{prefix}input.npy"
            files[file] = a
            parts.append(f"--input {name}={file}" if layer.several else f"--input {file}")
    return " ".join(parts)


def _describe_input(layer: Layer, name: str, x: np.ndarray) -> str:
    if np.array_equal(x, layer.example_of(name, x.shape), equal_nan=True):
        return "the layer's spec pattern" + ("" if x.shape == layer.input_shape(name) else " at this shape")
    return "given values"


def _script(
    header: list[str],
    what: str,
    doc: str,
    names: dict,
    index_inputs: tuple,
    command: str,
    embedded: bool,
    body: list[str],
) -> str:
    """One export's text, a layer's or a chain's: `header` (what it builds, its inputs and parameters), how to run
    it, the imports and constants every export has, `body` (the data, parameters, construction and `BUILD`), the
    precision code and the runner (`runner_source`). `what`: "configuration" or "chain"."""
    settings = BuildSettings.from_env()
    header = header + [
        "#",
        "# Run:    python THIS_SCRIPT.py [--output OUT.npy]   (--output saves the GPU output as .npy)",
        "# Needs:  numpy; tensorrt (10 or later) or tensorrt_rtx; ml_dtypes for BF16. Running the engine also needs cuda-python",
        "#         (cuda.bindings, 12.6 or later) and a GPU that TensorRT supports; without one the script",
        "#         builds the engine, prints the output shape and says why it cannot run it.",
        "# Exit:   0 built (and run where possible); 1 TensorRT refused the network or the run failed;",
        "#         3 no TensorRT here can build (none installed, or full TensorRT without a GPU it can use).",
        f"# The same {what} in the playground:",
        f"#   {command}",
    ]
    imports = (
        ["import argparse"]
        + (["import base64"] if embedded else [])
        + ["import importlib", "import sys"]
        + (["import zlib"] if embedded else [])
    )
    preamble = [
        f'"""{doc}"""',
        "",
        *imports,
        "",
        "import numpy as np",
        "",
        "trt = None  # tensorrt, or tensorrt_rtx (the same API under another name): main() picks the one that builds",
        f"RTX_HINT = {RTX_HINT!r}",
        f"INPUT_NAMES, OUTPUT_NAME = {names!r}, {OUTPUT_NAME!r}  # the inputs' names: the network's",
        f"INDEX_INPUTS = {tuple(index_inputs)!r}  # indices: no precision's cast or Q/DQ pair",
        f"OPTIMIZATION_LEVEL = {settings.optimization_level}  # the playground's builder setting "
        "(TensorRT's own default is 3)",
        f"PLAYGROUND_COMMAND = {command!r}",
        *([_UNPACK.rstrip("\n")] if embedded else []),
    ]
    tail = [
        "",
        "",
        f"# The {'layer' if what == 'configuration' else 'layers'}' precision, as the playground builds it "
        "(playground/base/precision.py).",
        *[textwrap.dedent(inspect.getsource(f)).rstrip("\n") + "\n\n" for f in PRECISION_CODE],
    ]
    script = "\n".join(header + preamble + body + tail) + "\n\n\n" + runner_source()
    compile(script, f"<export of a {what}>", "exec")  # a broken script is our bug: fail here, not later
    return script


def export_script(layer_name: str, raw_params: dict | None = None, x: np.ndarray | None = None) -> str:
    """A self-contained Python script that builds (and where it can, runs) exactly this configuration.

    Raises ValidationError for parameters the playground would refuse, and NotSelfContained if the
    layer's build function needs more than trt, np and its arguments.
    """
    layer = get_layer(layer_name)
    raw_params = raw_params or {}
    xs = layer.feed(x)  # every input by name; `data` in the script: the one array, or this dict
    params = layer.resolve(raw_params, {n: a.shape for n, a in xs.items()})
    xs = {n: xs[n] for n in layer.used_inputs(params)}  # the inputs this configuration reads
    params = precision.with_data_scale(params, {n: a for n, a in xs.items() if n not in layer.index_inputs})
    source = build_source(layer)
    unused = set(layer.unused(params))
    command = playground_command(layer, params, xs)
    names = {n: t for n, t in network_inputs(layer).items() if n in xs}

    width = max(len(p.name) for p in layer.params)
    header = [
        "#!/usr/bin/env python3",
        f"# TensorRT Layer Playground export: {layer.title} (`{layer.name}`)",
        f"# {layer.summary}",
    ]
    if layer.formula:
        header.append(f"# {layer.formula(params)}")
    header += [
        "#",
        "# Builds a one-layer TensorRT network with exactly this configuration, prints TensorRT's output",
        "# shape ('output shape: (...)'), and where a GPU that this TensorRT supports is present, runs the",
        "# engine and prints input and output the spec's way (inputH0 / outputH0).",
        "#",
        *[
            f"# Input '{names[n]}'{f' ({n})' if layer.several else ''}: float32 {tuple(a.shape)}, "
            f"{_describe_input(layer, n, a)}"
            for n, a in xs.items()
        ],
        "# Parameters:",
    ]
    for param in layer.params:
        flag = "   (not used by this configuration)" if param.name in unused else ""
        header.append(f"#   {param.name:<{width}} = {_param_text(param, params[param.name])}{flag}")
    embedded = any(a.size > INLINE_LIMIT for a in xs.values()) or any(
        isinstance(v, np.ndarray) and v.size > INLINE_LIMIT for v in params.values()
    )
    if layer.several:  # the runner's `data`: a dict by input name, or the one input's array (what BUILD's x is)
        body = ["", "", "data = {"] + [f"    {n!r}: {array_literal(a, '    ')}," for n, a in xs.items()] + ["}"]
    else:
        body = ["", "", f"data = {array_literal(xs[layer.input_names[0]])}"]
    body += ["", "p = {"]
    for param in layer.params:
        comment = "  # not used by this configuration" if param.name in unused else ""
        body.append(f"    {param.name!r}: {value_literal(params[param.name], '    ')},{comment}")
    body += [
        "}",
        "",
        "",
        f"# The network construction, copied from the playground's declaration of `{layer.name}`",
        f"# ({inspect.getsourcefile(layer.build).rsplit('/', 2)[-2]}/"
        f"{inspect.getsourcefile(layer.build).rsplit('/', 1)[-1]}).",
        source.rstrip("\n"),
        "",
        "",
        f"BUILD = {layer.build.__name__}",
    ]
    doc = (
        f"Build, and where a GPU allows run, one {layer.title} layer exactly as configured in the\n"
        "TensorRT Layer Playground."
    )
    return _script(header, "configuration", doc, names, layer.index_inputs, command, embedded, body)
