"""The import graph of the playground has no cycle, and its folders are rooms in one order, each importing only
those below it: a module can be read, tested and changed from its imports down. grimp reads every import, those
inside functions too; the layers package's discovery (importlib, which no static reader sees) is added as the
edges it is."""

from __future__ import annotations

import pkgutil

import grimp
import pytest

import playground.layers


@pytest.fixture(scope="module")
def graph():
    g = grimp.build_graph("playground", include_external_packages=False)
    for m in pkgutil.iter_modules(playground.layers.__path__):  # LAYERS is found, not listed
        if playground.layers.is_layer(m.name):  # a helper (_window) is imported by the layers that use it
            g.add_import(importer="playground.layers", imported=f"playground.layers.{m.name}")
    return g


def cycles(g) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iteratively)."""
    adj = {m: sorted(g.find_modules_directly_imported_by(m)) for m in g.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found = []
    for root in sorted(adj):
        if root in index:
            continue
        work = [(root, iter(adj[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(adj[w])))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_the_cycle_finder_finds_a_cycle(graph):
    g = grimp.ImportGraph()
    for a, b in [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d")]:
        g.add_import(importer=a, imported=b)
    assert cycles(g) == [["p.a", "p.b", "p.c"]]


def test_no_import_cycle(graph):
    assert len(graph.modules) > 40  # the whole package was read
    assert cycles(graph) == []


# The rooms, lowest first: a module imports from its own room and the rooms below it, never above. "" is the
# package's own modules (the command line and `python -m playground`), the top.
ROOMS = (
    "base",  # the leaves and the vocabulary a layer is declared in (Layer, Param, reference, precision, onnx_map)
    "layers",  # one file a layer
    "trt",  # TensorRT and the GPU
    "network",  # layers and chains evaluated, built, exported as scripts
    "onnx",  # a layer's configuration as ONNX, in and out
    "model",  # a whole model judged on its real inputs
    "serve",  # the server: the stage's view model (protocol), the chain page's address, route, assets, what's shared
    "ui",  # Streamlit
    "chromium",  # the app driven in Chromium
    "",  # cli, __main__
)
# Imports that run up, each with why it is still there: none. The test fails when one comes or a listed one goes, so
# the list stays true.
UPWARD: dict[tuple[str, str], str] = {}


def room(g, module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (len(parts) > 2 or g.find_children(module)) else ""


def test_every_folder_is_a_room(graph):
    assert {room(graph, m) for m in graph.modules} <= set(ROOMS)


def test_no_import_runs_up(graph):
    rank = {r: i for i, r in enumerate(ROOMS)}
    up = {
        (m, i)
        for m in graph.modules
        for i in graph.find_modules_directly_imported_by(m)
        if rank[room(graph, i)] > rank[room(graph, m)]
    }
    assert up == set(UPWARD)


def test_no_loop_of_folders(graph):
    """The rooms as one graph (a module's imports are its room's), the listed exceptions left out, hold no loop."""
    g = grimp.ImportGraph()
    for m in graph.modules:
        for i in graph.find_modules_directly_imported_by(m):
            a, b = room(graph, m) or "playground", room(graph, i) or "playground"
            if a != b and (m, i) not in UPWARD:
                g.add_import(importer=f"rooms.{a}", imported=f"rooms.{b}")
    assert len(g.modules) == len(ROOMS) and cycles(g) == []


def test_the_rooms_test_finds_an_upward_import():
    g = grimp.ImportGraph()
    for a, b in [("playground.trt.engine", "playground.base.layer"), ("playground.base.layer", "playground.ui.page")]:
        g.add_import(importer=a, imported=b)
    rank = {r: i for i, r in enumerate(ROOMS)}
    up = [
        (m, i) for m in g.modules for i in g.find_modules_directly_imported_by(m) if rank[room(g, i)] > rank[room(g, m)]
    ]
    assert up == [("playground.base.layer", "playground.ui.page")]


def test_a_layer_imports_no_core(graph):
    """core imports every layer (through discovery): a layer's file reaches the engine through its section's
    context instead."""
    for m in pkgutil.iter_modules(playground.layers.__path__):
        chain = graph.find_shortest_chain(importer=f"playground.layers.{m.name}", imported="playground.network.core")
        assert chain is None, chain


def test_one_vocabulary_for_a_parameters_kind():
    """Readers ask a parameter's kind object (`Param.of`: `isinstance(p.of, Enum)`, `p.of.number`), never compare
    its name: the kinds' behaviour lives in params.py alone. The tests, benchmarks and scripts ask it too."""
    import re
    from pathlib import Path

    root = Path(playground.__file__).parent.parent
    files = [f for d in ("playground", "tests", "bench", "scripts", "app_pages") for f in (root / d).rglob("*.py")]
    switches = [
        f"{f.relative_to(root)}:{n}"
        for f in files + sorted(root.glob("*.py"))
        if f.relative_to(root).as_posix() not in ("playground/base/params.py", "tests/test_imports.py")
        for n, line in enumerate(f.read_text().splitlines(), 1)
        if re.search(r"\.kind (==|in|!=)", line) and "dtype.kind" not in line
    ]
    assert switches == []


def test_discovery_takes_every_layer_and_no_helper():
    """A module of playground/layers/ is a layer's (it defines LAYER, and discovery finds it) or a helper's (its
    name starts with "_", and discovery leaves it to the layers that import it)."""
    import importlib

    from playground.layers import LAYERS, is_layer

    names = [m.name for m in pkgutil.iter_modules(playground.layers.__path__)]
    assert "_window" in names and not is_layer("_window")
    declared = {importlib.import_module(f"playground.layers.{n}").LAYER.name for n in names if is_layer(n)}
    assert declared == set(LAYERS)


def test_onnx_inside_its_package_is_the_library():
    """playground/onnx/ and playground/model/ hold the playground's ONNX modules; `import onnx` in them is still the
    onnx library (imports are absolute), and none of them is named as a standard module is (run as a script, it would
    stand in for it)."""
    import sys

    import onnx

    import playground.onnx
    from playground.onnx import reading

    assert reading.library() is onnx is not playground.onnx and hasattr(onnx, "checker")
    names = {m.name for m in pkgutil.iter_modules(playground.onnx.__path__)}
    assert {"reading", "opening", "writing", "runtime"} <= names and not names & sys.stdlib_module_names
    import playground.model  # the whole model's modules import the onnx library too

    names = {m.name for m in pkgutil.iter_modules(playground.model.__path__)}
    assert {"whole", "kept"} <= names and not names & sys.stdlib_module_names
