"""One decision, one owner: a second place that spells a URL key, a badge's status or a drawn number fails here.
The owners: serve/protocol.py spells every key a page's link holds (the browser reads them from its describe) and
the engine's status words; stage/format.js spells the values the stage draws, numbers.py what the server writes."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import playground
from playground.serve import protocol

ROOT = Path(playground.__file__).parent
PROTOCOL = ROOT / "serve" / "protocol.py"


def _strings(path: Path):
    """(line, text) of every string constant of a module but its docstrings (f-strings give their literal parts)."""
    tree = ast.parse(path.read_text())
    docs = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            yield n.lineno, n.value


def _js_code():
    """(file, line, code) of the stage's modules, comments left out."""
    for f in sorted((ROOT / "stage").glob("*.js")):
        for i, line in enumerate(f.read_text().splitlines(), 1):
            yield f.name, i, line.split("//")[0]


def _python_hits(pattern: re.Pattern, owner: Path = PROTOCOL) -> list[str]:
    return [
        f"{f.relative_to(ROOT)}:{line}: {s!r}"
        for f in sorted(ROOT.rglob("*.py"))
        if f != owner
        for line, s in _strings(f)
        if pattern.search(s)
    ]


def test_the_url_keys_are_spelled_by_the_protocol_alone():
    # a view key ("view.cell"), or a key's part joined to a layer's name (f"{layer.name}.input.", ".compare"), or
    # to a key the server gave (c.key + ".set")
    python = _python_hits(re.compile(r"^view\.|^\.(input|compare|cell|extra)\.?$|\.(compare|input\.)$"))
    js = [
        f"{f}:{i}: {code.strip()}"
        for f, i, code in _js_code()
        if re.search(
            r"""["'`]view\.|\$\{[^}]*layer[^}]*\}\.|\.(compare|cell|extra|input)["'`]|["']preset["']\]|\+ *["'`]\.""",
            code,
        )
    ]
    assert python + js == []


def test_the_protocol_spells_every_key_a_link_holds():
    from playground.layers import get_layer

    layer, several = get_layer("convolution"), get_layer("elementwise")
    assert protocol.input_key(layer, "x", "H") == "convolution.input.H"
    assert protocol.input_key(several, "b", "kind") == "elementwise.input.b.kind"
    assert protocol.input_key(several, "b", "") == "elementwise.input."  # every input key's prefix
    assert (
        protocol.key(layer, "int8") == "convolution.int8"
        and protocol.key(layer, "stride_nd", "") == "convolution.stride_nd."
    )
    url = protocol.describe(layer, (1, 1, 4, 4))["url"]
    assert url["view"] == [protocol.VIEW_PRESENTER, protocol.VIEW_CELL, protocol.HIDE] and url["dropped"] == ["preset"]


def test_the_engine_status_is_worded_once():
    words = re.compile("|".join(re.escape(w) for w in protocol.ENGINE_STATUS.values() if " " in w))
    python = _python_hits(words, ROOT / "trt" / "engine.py")
    js = [
        f"{f}:{i}: {code.strip()}"
        for f, i, code in _js_code()
        if re.search(r"""["'`][^"'`]*(built now|from cache)""", code)
    ]
    assert python + js == []


def test_the_stage_spells_its_numbers_in_format_js_alone():
    spelled = [
        f"{f}:{i}: {code.strip()}"
        for f, i, code in _js_code()
        if f != "format.js" and re.search(r"\.(toPrecision|toExponential)\(|\bNumber\(.*toFixed", code)
    ]
    assert spelled == []


def test_a_parameters_control_is_its_kinds_one_decision():
    """Kind.widget decides the control of every form: the stage's controls.js draws each widget it names, and the
    chain page's controls are the same controls (never a kind's name)."""
    from playground.layers import LAYERS

    widgets = {p.of.widget(p) for layer in LAYERS.values() for p in layer.params}
    assert widgets == {"choice", "toggle", "slider", "named", "axes", "permutation", "text"}
    controls = (ROOT / "stage" / "controls.js").read_text()
    assert all(f'w === "{w}"' in controls for w in widgets - {"text"})  # text: what is left
    assert not re.search(r"c\.kind\s*===", controls)
    # the chain page's controls are the layer's own (serve/chainview.py asks protocol.controls, each layer renamed
    # to its key): neither it nor the page decides a control
    chain = (ROOT / "ui" / "chain.py").read_text() + (ROOT / "serve" / "chainview.py").read_text()
    assert "protocol.controls(" in chain and not re.search(r"p\.kind|of\.name|\.widget\(", chain)
