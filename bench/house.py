"""The house in figures: modules, the import edges between them, cycles, lines per package, the largest modules.

The import graph is read as tests/test_imports.py reads it (grimp: imports inside functions too, and the layers
package's discovery added as the edges it is); a cycle is looked for by the standard library's topological sort.

    python bench/house.py
"""

from __future__ import annotations

import graphlib
import importlib
import pkgutil
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SOURCES = ("*.py", "*.js", "*.css")  # a package's lines: its Python, and the browser side it serves
VENDORED = {"dagre.esm.js"}  # a library shipped as is, not the house's own lines


def graph() -> grimp.ImportGraph:
    g = grimp.build_graph("playground", include_external_packages=False)
    layers = importlib.import_module("playground.layers")
    for m in pkgutil.iter_modules(layers.__path__):
        if not m.name.startswith("_"):  # what discovery imports: every module but a layer's helper
            g.add_import(importer="playground.layers", imported=f"playground.layers.{m.name}")
    return g


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def main() -> None:
    g = graph()
    edges = {m: g.find_modules_directly_imported_by(m) for m in g.modules}
    try:
        tuple(graphlib.TopologicalSorter(edges).static_order())
        cycle = "0"
    except graphlib.CycleError as exc:
        cycle = "at least 1: " + " → ".join(exc.args[1])
    print(f"modules                {len(g.modules)}")
    print(f"import edges           {sum(map(len, edges.values()))}")
    print(f"cycles                 {cycle}")

    top = ROOT / "playground"
    files = [p for pattern in SOURCES for p in top.rglob(pattern) if p.name not in VENDORED]
    files = [p for p in files if "__pycache__" not in p.parts]
    print("lines per package (its own folder, subpackages apart):")
    print(f"  {'playground (all)':30} {sum(map(lines, files)):6}")
    for folder in sorted({p.parent for p in files}):
        own = [p for p in files if p.parent == folder]
        name = folder.relative_to(ROOT).as_posix()
        print(f"  {name:30} {sum(map(lines, own)):6}  ({len(own)} files)")
    print("largest modules:")
    for p in sorted((p for p in files if p.suffix == ".py"), key=lines, reverse=True)[:10]:
        print(f"  {p.relative_to(ROOT).as_posix():42} {lines(p):5}")


if __name__ == "__main__":
    main()
