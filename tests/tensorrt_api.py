"""What of TensorRT's Python API the playground and its exported scripts use, and whether a TensorRT has it.

`python tests/tensorrt_api.py record USES.json` (with TensorRT for RTX installed) builds every layer with every
preset and every enum choice through an instrumented module and writes, as JSON, each use:
  ["module", NAME]                     trt.NAME
  ["member", CLASS, NAME]              trt.CLASS.NAME (enum members and class constants)
  ["call", CLASS, NAME, NPOS, KWARGS]  obj.NAME(…) on an object of CLASS, with NPOS positional arguments
  ["get" | "set", CLASS, NAME]         a property read or written
Code that runs only on a GPU (deserializing and running an engine, the engine inspector) cannot run here;
its uses are read from the source instead (`static_uses`): methods called on variables named `engine`,
`context`, `inspector` and on `trt.Runtime(…)` in those functions (the classes as Python names them).

`python tests/tensorrt_api.py check USES.json OUT.json` (with another TensorRT importable as `tensorrt`) writes
the TensorRT's version and the uses it lacks, each with the reason: a missing name, a method whose signatures take no such
arguments (read from the bindings' own signatures), a property that cannot be set.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The functions that run only where an engine is deserialized, and what their variables hold.
RUNTIME_FUNCTIONS = {
    "run_engine",
    "_run_with_context",
    "_execute",
    "engine_from_bytes",
    "layers_from_engine",
    "run_on_gpu",
    "execute",
}
RUNTIME_VARIABLES = {"engine": "ICudaEngine", "context": "IExecutionContext", "inspector": "EngineInspector"}


# -- recording ---------------------------------------------------------------------------------
def _instrument(trt, uses: set) -> None:
    """Wrap every method and property of the module's classes so that each use is recorded."""

    def owner(obj, cls):  # the TensorRT class, also for a Python subclass (a logger)
        return next((c.__name__ for c in type(obj).__mro__ if c.__module__ == cls.__module__), cls.__name__)

    def method(cls, name, fn):
        def wrapper(self, *args, **kwargs):
            uses.add(("call", owner(self, cls), name, len(args), tuple(sorted(kwargs))))
            return fn(self, *args, **kwargs)

        return wrapper

    def prop(cls, name, p):
        def get(self):
            uses.add(("get", owner(self, cls), name))
            return p.fget(self)

        def put(self, value):
            uses.add(("set", owner(self, cls), name))
            p.fset(self, value)

        return property(get, put if p.fset else None)

    for cls in [v for v in vars(trt).values() if isinstance(v, type) and v.__module__.startswith(trt.__name__)]:
        if hasattr(cls, "__members__"):
            continue  # enums are recorded through the module proxy
        for name, attr in list(vars(cls).items()):
            if name.startswith("_"):
                continue
            if type(attr) is property:  # not pybind11's static (class-level) properties
                setattr(cls, name, prop(cls, name, attr))
            elif type(attr).__name__ == "instancemethod":
                setattr(cls, name, method(cls, name, attr))


class _Enum:
    def __init__(self, enum, uses):
        self._enum, self._uses = enum, uses

    def __getattr__(self, name):
        value = getattr(self._enum, name)
        self._uses.add(("member", self._enum.__name__, name))
        return value


class _Module(types.ModuleType):
    """The TensorRT module as the code sees it, recording each name it takes."""

    def __init__(self, trt, uses):
        super().__init__(trt.__name__)
        self._trt, self._uses = trt, uses

    def __getattr__(self, name):
        value = getattr(self._trt, name)
        self._uses.add(("module", name))
        return _Enum(value, self._uses) if isinstance(value, type) and hasattr(value, "__members__") else value


def record() -> list:
    import contextlib
    import dataclasses
    import io
    import runpy
    import tempfile

    import numpy as np
    import tensorrt_rtx

    sys.path.insert(0, str(ROOT))
    from playground.base.params import Enum
    from playground.layers import LAYERS
    from playground.network import export, presets
    from playground.trt import engine
    from playground.trt.backend import detect

    uses: set = set()
    _instrument(tensorrt_rtx, uses)
    trt = _Module(tensorrt_rtx, uses)
    backend = dataclasses.replace(detect("tensorrt_rtx"), trt=trt)
    with tempfile.TemporaryDirectory() as tmp:
        for layer in LAYERS.values():
            configs = [({}, layer.example_shape)] + [(p.params, p.input_shape) for p in presets.PRESETS[layer.name]]
            configs += [
                ({param.name: c}, layer.example_shape)
                for param in layer.params
                if isinstance(param.of, Enum)
                for c in param.choices
            ]
            for raw, shape in configs:
                try:
                    params = layer.resolve(raw, shape)
                except Exception:  # noqa: BLE001 - a choice that needs other parameters to be valid
                    continue  # a choice that needs other parameters to be valid
                report = engine.build_engine(backend, layer, params, shape)
                assert report.status in ("built", "refused"), report.error
            # Full TensorRT alone keeps a timing cache; its calls are made here on a config of our own.
            with engine._builders_for(trt).builder() as builder:
                engine._load_timing_cache(builder.create_builder_config(), Path(tmp) / "timing.cache")
            script = Path(tmp) / f"{layer.name}.py"
            script.write_text(export.export_script(layer.name, {}, np.ones(layer.example_shape, np.float32)))
            sys.modules["tensorrt"] = trt  # the script imports `tensorrt` by name
            argv, sys.argv = sys.argv, [str(script)]
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # what it prints is not a use
                    runpy.run_path(str(script), run_name="__main__")
            except SystemExit as exit_:
                assert exit_.code == 0, f"{script.name} exited {exit_.code}"
            finally:
                sys.argv = argv
                del sys.modules["tensorrt"]
            uses |= static_uses(script.read_text())
    for path in sorted((ROOT / "playground").rglob("*.py")):
        uses |= static_uses(path.read_text())
    return sorted(uses, key=repr)


def static_uses(source: str) -> set:
    """Uses read from the source: every `trt.A` and `trt.A.B`, and the runtime functions' method calls."""
    uses = set()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "trt":
            uses.add(("module", node.attr))
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Attribute)
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id == "trt"
        ):
            uses.add(("member", node.value.attr, node.attr))
    for fn in ast.walk(tree):
        if not (isinstance(fn, ast.FunctionDef) and fn.name in RUNTIME_FUNCTIONS):
            continue
        calls = {id(node.func): node for node in ast.walk(fn) if isinstance(node, ast.Call)}
        for node in ast.walk(fn):
            if not isinstance(node, ast.Attribute):
                continue
            target = node.value
            cls = RUNTIME_VARIABLES.get(target.id) if isinstance(target, ast.Name) else None
            if isinstance(target, ast.Call) and (
                getattr(target.func, "attr", "") == "Runtime" or getattr(target.func, "id", "") == "_runtime_for"
            ):
                cls = "Runtime"
            call = calls.get(id(node))
            if cls and call:
                uses.add(("call", cls, node.attr, len(call.args), tuple(sorted(k.arg for k in call.keywords))))
            elif cls and isinstance(node.ctx, ast.Load):
                uses.add(("get", cls, node.attr))
    return uses


# -- checking ----------------------------------------------------------------------------------
_SIGNATURE = re.compile(r"^(?:\d+\. )?(?P<name>\w+)\((?P<params>.*)\) -> ", re.M)


def _split(params: str) -> list[str]:
    """Top-level comma split of a pybind11 parameter list (types hold brackets and commas)."""
    parts, depth, current = [], 0, ""
    for ch in params:
        depth += ch in "[(" and 1 or (ch in "])" and -1 or 0)
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    return parts + ([current.strip()] if current.strip() else [])


def accepts(doc: str, name: str, npos: int, kwargs: tuple) -> bool:
    """Whether any of the method's signatures (pybind11 writes them in its docstring) takes these arguments."""
    signatures = [m["params"] for m in _SIGNATURE.finditer(doc or "") if m["name"] == name]
    if not signatures:
        return True  # no signature to read: existence is all that can be checked
    for params in signatures:
        declared = [p for p in _split(params) if not p.startswith(("self", "*"))]
        names = [p.split(":")[0].split("=")[0].strip() for p in declared]
        required = [n for n, p in zip(names, declared) if "=" not in p]
        if npos > len(names) or any(k not in names[npos:] for k in kwargs):
            continue
        if all(n in names[:npos] or n in kwargs for n in required):
            return True
    return False


def problems(trt, uses: list) -> list[str]:
    found = []
    for use in uses:
        kind, *rest = use
        if kind == "module":
            if not hasattr(trt, rest[0]):
                found.append(f"trt.{rest[0]} does not exist")
            continue
        cls = getattr(trt, rest[0], None)
        if cls is None:
            found.append(f"trt.{rest[0]} does not exist (used for {'.'.join(map(str, rest[:2]))})")
            continue
        attr = getattr(cls, rest[1], None)
        if attr is None:
            found.append(f"{rest[0]}.{rest[1]} does not exist")
        elif kind == "call" and not accepts(attr.__doc__, rest[1], rest[2], tuple(rest[3])):
            found.append(f"{rest[0]}.{rest[1]} takes no {rest[2]} positional arguments with keywords {list(rest[3])}")
        elif kind == "set" and not (isinstance(attr, property) and attr.fset is not None):
            found.append(f"{rest[0]}.{rest[1]} cannot be set")
    return found


if __name__ == "__main__":  # files, not stdout: TensorRT's own logger writes there
    if sys.argv[1] == "record":
        Path(sys.argv[2]).write_text(json.dumps(record()))
    else:
        import tensorrt

        found = problems(tensorrt, json.loads(Path(sys.argv[2]).read_text()))
        Path(sys.argv[3]).write_text(json.dumps({"version": tensorrt.__version__, "problems": found}))
