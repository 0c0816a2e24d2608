"""One renderer: every tensor on every page is drawn by the stage's heatmap (heatmap.js, through the stage or
ui.figures.tensors); Plotly draws line and bar charts only. Read from the source, so that a page that draws a
heatmap another way fails here before anyone sees a second colour scheme."""

import ast
from pathlib import Path

ROOT = Path(__file__).parents[1] / "playground"
CHARTS = {"transfer_curve_figure", "comparison_bar_figure"}  # what playground.base.plots may draw for a page


def _modules() -> dict[str, ast.Module]:
    return {p.relative_to(ROOT).as_posix(): ast.parse(p.read_text(encoding="utf-8")) for p in ROOT.rglob("*.py")}


def _imports_plotly(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "plotly" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "plotly":
            return True
    return False


def test_only_the_chart_builders_import_plotly():
    found = {name for name, tree in _modules().items() if _imports_plotly(tree)}
    assert found == {"base/plots.py"}, found  # ui/figures.py hands its figures to st.plotly_chart


def test_pages_and_layers_ask_plotly_for_charts_never_for_a_heatmap():
    """Every use of playground.base.plots outside itself is a line or bar chart, and no module names a Plotly heatmap
    (`tensor_figure`)."""
    for name, tree in _modules().items():
        if name == "base/plots.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "plots":
                assert node.attr in CHARTS, f"{name} asks playground.base.plots for {node.attr}"
            if isinstance(node, ast.Name | ast.alias):
                named = node.id if isinstance(node, ast.Name) else node.name
                assert named != "tensor_figure", f"{name} draws a Plotly heatmap"


def test_no_module_draws_a_heatmap_trace():
    for name, tree in _modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert node.value.lower() not in ("heatmap", "imshow"), f"{name}: a {node.value} trace"
            if isinstance(node, ast.Attribute):
                assert node.attr not in ("Heatmap", "imshow"), f"{name}: {node.attr}"
