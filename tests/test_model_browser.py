"""The model page in the browser: an uploaded model's graph is laid out (the vendored dagre), each node coloured by
its verdict and named as typed (never markup); a node that opens is a link to its layer's stage with the node."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from playground.chromium import browser as B
from playground.ui.page import PRESENTER_FONT_PX

pytestmark = pytest.mark.browser
GRAPH = ".pg-graph"


def _open_model(browser, app, path, height=900, query="", drawn=3):
    """A fresh page of the model page with `path` uploaded and its `drawn` nodes drawn: (context, page)."""
    ctx = B.new_context(browser, viewport={"width": 1280, "height": height})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(app.rstrip("/") + "/model" + query)
    B.wait_until_idle(page)
    page.set_input_files('input[type="file"]', str(path))
    page.wait_for_selector(f"{GRAPH}[data-drawn='{drawn}']")
    return ctx, page


def test_model_page_draws_the_graph_and_links_a_node_to_its_stage(browser, app, tmp_path):
    g = helper.make_graph(
        [
            helper.make_node("Hardmax", ["x"], ["m"], name="<b>mul</b>"),
            helper.make_node("Relu", ["m"], ["r"], name="relu"),
            helper.make_node("Softmax", ["r"], ["y"], name="softmax", axis=1),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])],
    )
    path = tmp_path / "three.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    ctx, page = _open_model(browser, app, path)
    nodes = page.locator(f"{GRAPH} .pg-graph-node")
    assert nodes.count() == 3 and page.locator(f"{GRAPH} .pg-graph-edge").count() == 2
    assert page.locator(f"{GRAPH} b").count() == 0  # a name is text, never markup
    assert "<b>mul</b>" in page.inner_text(GRAPH)
    assert page.locator(f"{GRAPH} .pg-graph-agrees").count() == 2
    assert page.locator(f"{GRAPH} .pg-graph-none").count() == 1
    page.locator(f"{GRAPH} a .pg-graph-node[data-node='relu']").click()
    page.wait_for_selector(".pg-stage[data-drawn] [data-onnxruntime]")
    assert "/activation" in page.url and "node=relu" in page.url
    assert "relu (Relu)" in page.locator(".pg-stage [data-onnx-node]").inner_text()
    # its input figure names where the tensor comes from: the node before's output, by ONNX Runtime
    caption = page.locator(".pg-stage .pg-figure[data-figure='input'] figcaption b").inner_text()
    assert caption == "Input = <b>mul</b>'s output, by ONNX Runtime", caption
    ctx.close()


def test_the_model_page_honours_presenter_mode(browser, app):
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.goto(app.rstrip("/") + "/model?view.presenter=true")
    B.wait_until_idle(page)
    assert page.evaluate("getComputedStyle(document.documentElement).fontSize") == f"{PRESENTER_FONT_PX}px"
    ctx.close()


def _conv_relu_softmax(path):
    import numpy as np

    w = np.random.default_rng(2).uniform(-1, 1, (4, 2, 3, 3)).astype(np.float32)
    g = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["r"], name="relu"),
            helper.make_node("Softmax", ["r"], ["y"], name="softmax", axis=1),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])],
        [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.ravel())],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
def test_the_graph_is_first_and_the_first_screens_height_on_a_1280_by_720_projector(browser, app, tmp_path, presenter):
    """The model's line, then the graph, as high as the window leaves; the title, the upload, the legend and the
    model's notes come after it."""
    path = tmp_path / "crs.onnx"
    _conv_relu_softmax(path)
    ctx, page = _open_model(browser, app, path, height=720, query="?view.presenter=true" if presenter else "")
    B.wait_until_idle(page)
    assert page.evaluate("scrollY") == 0
    view = page.locator(f"{GRAPH} .pg-graph-view").bounding_box()
    assert view["y"] <= 200 and view["y"] + view["height"] <= 720 and view["height"] >= 500, view
    upload = page.locator('[data-testid="stFileUploader"]').bounding_box()
    assert upload["y"] >= view["y"] + view["height"], upload  # the upload under the graph
    ctx.close()


def test_a_model_uploaded_on_the_home_page_links_to_its_model_page(browser, app, tmp_path):
    path = tmp_path / "crs.onnx"
    _conv_relu_softmax(path)
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(app.rstrip("/") + "/")
    B.wait_until_idle(page)
    # one size in one unit: the label's MiB, not Streamlit's own "68MB per file" beside it
    upload = page.locator('[data-testid="stFileUploader"]')
    assert "at most 64 MiB" in upload.inner_text() and "MB per file" not in upload.inner_text()
    page.set_input_files('input[type="file"]', str(path))
    link = page.locator('[data-testid="stMain"] a[href*="model?onnx="]')
    link.wait_for()
    assert "model=crs.onnx" in link.get_attribute("href")
    link.click()
    page.wait_for_selector(f"{GRAPH}[data-drawn='3']")
    assert "/model?onnx=" in page.url
    assert page.locator(f"{GRAPH} .pg-graph-node").count() == 3  # the same model, drawn
    ctx.close()


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
def test_the_graphs_names_grow_with_presenter_modes_type(browser, app, tmp_path, presenter):
    """A node's name and detail are rem-sized as the page's other text (12 and 11 px at the root's 16 px, 15 and
    13.75 px in presenter mode), its box grows with them, and each name fits in its box."""
    path = tmp_path / "crs.onnx"
    _conv_relu_softmax(path)
    ctx, page = _open_model(browser, app, path, height=720, query="?view.presenter=true" if presenter else "")
    root = PRESENTER_FONT_PX if presenter else 16
    sizes = page.evaluate(
        """g => [...document.querySelectorAll(g + ' .pg-graph-node')].map(n => ({
            label: parseFloat(getComputedStyle(n.querySelector('.pg-graph-label')).fontSize),
            detail: parseFloat(getComputedStyle(n.querySelector('.pg-graph-detail')).fontSize),
            box: +n.querySelector('rect').getAttribute('width'),
            text: Math.max(n.querySelector('.pg-graph-label').getBBox().width,
                           n.querySelector('.pg-graph-detail').getBBox().width)}))""",
        GRAPH,
    )
    assert len(sizes) == 3
    for s in sizes:
        assert s["label"] == 12 * root / 16 and s["detail"] == 11 * root / 16, s
        assert s["box"] == pytest.approx(190 * root / 16) and s["text"] < s["box"], s
    ctx.close()


def _zoom(page) -> float:
    return float(page.get_attribute(GRAPH, "data-zoom"))


def test_the_graph_pans_zooms_finds_a_node_and_opens_a_run_as_a_chain(browser, app, tmp_path):
    path = tmp_path / "crs.onnx"
    _conv_relu_softmax(path)
    ctx, page = _open_model(browser, app, path)
    B.wait_until_idle(page)
    world = page.locator(f"{GRAPH} .pg-graph-world")
    # the wheel alone scrolls the page; with Ctrl it zooms about the pointer; Fit shows the whole graph again
    fitted = _zoom(page)
    assert fitted > 1  # a small graph is drawn larger than life, its names legible on a projector
    page.locator(f"{GRAPH} .pg-graph-view").scroll_into_view_if_needed()
    view = page.locator(f"{GRAPH} .pg-graph-view").bounding_box()
    page.mouse.move(view["x"] + view["width"] / 2, view["y"] + view["height"] / 2)
    page.mouse.wheel(0, -400)
    page.wait_for_selector(f"{GRAPH} .pg-graph-hint:not([hidden])")  # it says how to zoom
    assert _zoom(page) == fitted
    page.keyboard.down("Control")
    page.mouse.wheel(0, -400)
    page.keyboard.up("Control")
    page.wait_for_function(f"() => +document.querySelector('{GRAPH}').dataset.zoom > {fitted}")
    page.click(f"{GRAPH} .pg-graph-fit")
    assert _zoom(page) == fitted
    # after a click into the graph the wheel is the graph's; a click outside gives it back to the page
    page.mouse.click(view["x"] + 5, view["y"] + 5)
    page.mouse.wheel(0, -400)
    page.wait_for_function(f"() => +document.querySelector('{GRAPH}').dataset.zoom > {fitted}")
    page.click(f"{GRAPH} .pg-graph-fit")
    page.wait_for_selector(f"{GRAPH} .pg-graph-hint", state="hidden")  # the first wheel's hint gone
    page.mouse.move(view["x"] + view["width"] / 2, view["y"] + view["height"] / 2)
    page.mouse.wheel(0, -400)
    page.wait_for_selector(f"{GRAPH} .pg-graph-hint:not([hidden])")
    assert _zoom(page) == fitted
    # a drag pans and follows no link
    before = world.get_attribute("transform")
    page.mouse.move(view["x"] + 20, view["y"] + 20)
    page.mouse.down()
    page.mouse.move(view["x"] + 140, view["y"] + 90, steps=5)
    page.mouse.up()
    assert world.get_attribute("transform") != before and "/model" in page.url
    # a name is found and centred
    page.fill(f"{GRAPH} .pg-graph-search", "SOFT")
    page.press(f"{GRAPH} .pg-graph-search", "Enter")
    assert page.get_attribute(GRAPH, "data-centred") == "softmax"
    assert page.locator(f"{GRAPH} .pg-graph-found[data-node='softmax']").count() == 1
    page.fill(f"{GRAPH} .pg-graph-search", "nothing-by-this-name")
    page.press(f"{GRAPH} .pg-graph-search", "Enter")
    assert "nothing-by-this-name" in page.inner_text(f"{GRAPH} .pg-graph-said")
    # shift-click a run that is no chain: the page says why; a consecutive run links the chain page
    page.click(f"{GRAPH} .pg-graph-fit")
    with B.rerun(page):
        page.locator(f"{GRAPH} .pg-graph-node[data-node='conv']").click(modifiers=["Shift"])
    with B.rerun(page):
        page.locator(f"{GRAPH} .pg-graph-node[data-node='softmax']").click(modifiers=["Shift"])
    assert "/model" in page.url
    assert "must be consecutive" in page.inner_text("[data-testid='stAlert']")
    with B.rerun(page):
        page.locator(f"{GRAPH} .pg-graph-node[data-node='relu']").click(modifiers=["Shift"])
    link = page.get_by_text("Open the 3 selected nodes as a chain (convolution → activation → softmax)")
    link.click()
    page.wait_for_url("**/chain?**")
    assert (
        "layers=convolution%2Cactivation%2Csoftmax" in page.url or "layers=convolution,activation,softmax" in page.url
    )
    B.wait_until_idle(page)
    assert page.locator("[data-testid='stException']").count() == 0
    ctx.close()


def test_an_engine_layers_fused_nodes_are_outlined_and_open_as_a_chain(browser, app, tmp_path):
    path = tmp_path / "fused.onnx"
    _conv_relu_softmax(path)
    ctx, page = _open_model(browser, app, path)
    outlines = page.locator(f"{GRAPH} .pg-graph-fused")
    fused = [page.evaluate("(e) => e.querySelector('title').textContent", o) for o in outlines.element_handles()]
    # the engine layers that compute two or more nodes, as the page's engine table names them
    assert fused, "no engine layer computes two of conv, relu, softmax"
    title = next(t for t in fused if "conv, relu" in t)
    assert title.startswith("engine layer ") and "click: open these nodes as a chain" in title
    page.locator(f"{GRAPH} .pg-graph-chain").first.click(position={"x": 20, "y": 3})
    page.wait_for_url("**/chain?**")
    assert "convolution" in page.url and "input.shape=1%2C2%2C6%2C6" in page.url
    B.wait_until_idle(page)
    assert page.locator("[data-testid='stException']").count() == 0
    ctx.close()


DIFFERING_MAIN = """
# The app's pages with the model's node 'relu' made to differ (its verdict only: the model, its run and its layout
# are real), so that the graph's first difference is drawn.
import runpy
from playground.model import whole

if not getattr(whole, "_differing", False):
    real = whole.analyze

    def differing(*args, **kwargs):
        answer = real(*args, **kwargs)
        for n in answer["nodes"]:
            if n["name"] in ("relu", "softmax"):
                n["agrees"] = False
        return answer

    whole.analyze, whole._differing = differing, True
runpy.run_path({main!r}, run_name="__main__")
"""


def test_the_first_difference_is_marked_and_a_click_centres_it(browser, tmp_path):
    script = tmp_path / "differing.py"
    script.write_text(DIFFERING_MAIN.format(main=str(B.ROOT / "main.py")))
    (tmp_path / "app_pages").symlink_to(B.ROOT / "app_pages")  # main.py's pages, beside the script as there
    app = tmp_path / "differing_app.py"  # app.py's routes (the graph's modules and data) around that script
    app.write_text((B.ROOT / "app.py").read_text().replace('"main.py"', repr(str(script))))
    path = tmp_path / "differs.onnx"
    _conv_relu_softmax(path)
    with B.serve_app(env={"PLAYGROUND_ENGINE_CACHE": str(tmp_path / "cache")}, app=app) as url:
        ctx, page = _open_model(browser, url, path, height=720)
        B.wait_until_idle(page)
        assert page.locator(f"{GRAPH} .pg-graph-first").count() == 1
        assert page.locator(f"{GRAPH} .pg-graph-first[data-node='relu'].pg-graph-differs").count() == 1
        page.locator(f"{GRAPH} .pg-graph-view").scroll_into_view_if_needed()
        page.mouse.wheel(0, 600)  # away from it first
        page.click(f"{GRAPH} .pg-graph-jump")
        assert page.get_attribute(GRAPH, "data-centred") == "relu"
        view = page.locator(f"{GRAPH} .pg-graph-view").bounding_box()
        box = page.locator(f"{GRAPH} .pg-graph-node[data-node='relu']").bounding_box()
        assert abs(box["x"] + box["width"] / 2 - (view["x"] + view["width"] / 2)) < 2
        assert abs(box["y"] + box["height"] / 2 - (view["y"] + view["height"] / 2)) < 2
        ctx.close()


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
def test_an_identitys_box_says_it_is_one_and_fits_its_words(browser, app, tmp_path, presenter):
    """Identity → Dropout (inference) → ReduceMean with no axes (the input itself): each box says the node opens as
    an identity, the shuffle layer after it, whole and inside its box, at 1280 × 720."""
    g = helper.make_graph(
        [
            helper.make_node("Identity", ["x"], ["i"], name="id"),
            helper.make_node("Dropout", ["i"], ["d"], name="drop"),
            helper.make_node("ReduceMean", ["d"], ["y"], name="mean", noop_with_empty_axes=1),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])],
    )
    path = tmp_path / "identities.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)
    ctx, page = _open_model(browser, app, path, height=720, query="?view.presenter=true" if presenter else "")
    boxes = page.evaluate(
        """g => [...document.querySelectorAll(g + ' .pg-graph-node')].map(n => ({
            node: n.dataset.node, said: n.querySelector('.pg-graph-detail').textContent,
            box: +n.querySelector('rect').getAttribute('width'),
            right: n.querySelector('.pg-graph-detail').getBBox().x + n.querySelector('.pg-graph-detail').getBBox().width}))""",
        GRAPH,
    )
    said = {b["node"]: b["said"] for b in boxes}
    assert said == {
        "id": "Identity → identity (shuffle)",
        "drop": "Dropout → identity (shuffle)",
        "mean": "ReduceMean → identity (shuffle)",
    }, said
    for b in boxes:
        assert b["right"] < b["box"], b  # the words end inside the box
    page.locator(f"{GRAPH} .pg-graph-view").screenshot(path=str(tmp_path / "identities.png"))
    ctx.close()


def test_a_grey_nodes_click_says_why_it_does_not_open(browser, app, tmp_path):
    """The Hardmax no layer computes: its click shows the reason the page's list gives it, and follows no link."""
    g = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"], name="relu"),
            helper.make_node("Hardmax", ["r"], ["y"], name="hard", axis=1),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])],
    )
    path = tmp_path / "grey.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    ctx, page = _open_model(browser, app, path, height=720, drawn=2)
    page.wait_for_selector(f"{GRAPH}[data-graph-state='ready']")
    info = page.locator(f"{GRAPH} .pg-graph-info")
    assert not info.is_visible()
    page.locator(f"{GRAPH} .pg-graph-node[data-node='hard']").click()
    info.wait_for(state="visible")
    listed = next(t for t in page.locator("[data-testid='stText']").all_inner_texts() if t.startswith("hard · "))
    reason = listed.split(": ", 1)[1]
    assert reason and info.get_attribute("data-node") == "hard"
    assert page.inner_text(f"{GRAPH} .pg-graph-reason") == reason
    assert "/model" in page.url
    page.locator(f"{GRAPH} .pg-graph-info button").click()
    info.wait_for(state="hidden")
    ctx.close()


def _scoped(path, blocks=6):
    """A stem, `blocks` alike blocks (/enc/block.i/relu → mul), and a head named as a JavaScript object's own keys."""
    nodes, prev = [helper.make_node("Relu", ["x"], ["s"], name="/stem/relu")], "s"
    for b in range(blocks):
        nodes += [
            helper.make_node("Relu", [prev], [f"r{b}"], name=f"/enc/block.{b}/relu"),
            helper.make_node("Mul", [f"r{b}", "two"], [f"m{b}"], name=f"/enc/block.{b}/mul"),
        ]
        prev = f"m{b}"
    nodes += [
        helper.make_node("Relu", [prev], ["h"], name="__proto__"),
        helper.make_node("Softmax", ["h"], ["y"], name="constructor", axis=1),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])],
        [helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_alike_blocks_are_folded_a_group_opens_on_click_and_a_hidden_node_is_found(browser, app, tmp_path):
    path = tmp_path / "scoped.onnx"
    _scoped(path)
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(app.rstrip("/") + "/model")
    B.wait_until_idle(page)
    page.set_input_files('input[type="file"]', str(path))
    page.wait_for_selector(f"{GRAPH}[data-graph-state='ready']")
    fold = page.locator(f"{GRAPH} .pg-graph-group[data-group='f:g:/enc/block.0']")
    assert "block.0 … block.5" in fold.text_content() and "×6 alike" in fold.text_content()
    assert page.locator(f"{GRAPH} .pg-graph-node[data-node='/enc/block.2/relu']").count() == 0
    # the object's own keys are nodes as any other, and the edges name their tensor's shape
    assert page.locator(f"{GRAPH} .pg-graph-node[data-node='__proto__']").count() == 1
    assert page.locator(f"{GRAPH} .pg-graph-node[data-node='constructor']").count() == 1
    assert "1×2×3×3" in page.locator(f"{GRAPH} .pg-graph-shape").all_text_contents()
    # hover: what the fold holds and its largest |diff|; a click opens it, then one of its blocks
    fold.hover()
    page.wait_for_selector(f"{GRAPH} .pg-graph-card:not([hidden])")
    assert "12 nodes · 12 agree" in page.inner_text(f"{GRAPH} .pg-graph-card")
    assert "max |diff|" in page.inner_text(f"{GRAPH} .pg-graph-card")
    fold.click()
    block = page.locator(f"{GRAPH} .pg-graph-group[data-group='g:/enc/block.2']")
    block.wait_for()
    block.click()
    relu = page.locator(f"{GRAPH} .pg-graph-node[data-node='/enc/block.2/relu']")
    relu.wait_for()
    assert relu.locator(".pg-graph-label").text_content() == "relu"
    assert "Mul → elementwise" in page.text_content(f"{GRAPH} .pg-graph-node[data-node='/enc/block.2/mul']")
    relu.hover()
    page.wait_for_selector(f"{GRAPH} .pg-graph-card[data-for='n:/enc/block.2/relu']")
    card = page.inner_text(f"{GRAPH} .pg-graph-card")
    assert "output 1×2×3×3" in card and "max |diff| 0" in card, card
    # its name's "−" closes the block again; Collapse gives the first view back
    page.locator(f"{GRAPH} .pg-graph-cluster[data-group='g:/enc/block.2'] .pg-graph-cluster-name").click()
    relu.wait_for(state="detached")
    page.click(f"{GRAPH} .pg-graph-collapse")
    block.wait_for(state="detached")
    # a node inside a closed group is found: its groups open, it is centred
    page.fill(f"{GRAPH} .pg-graph-search", "block.4/mul")
    page.press(f"{GRAPH} .pg-graph-search", "Enter")
    page.wait_for_selector(f"{GRAPH}[data-centred='/enc/block.4/mul']")
    assert page.locator(f"{GRAPH} .pg-graph-found[data-node='/enc/block.4/mul']").count() == 1
    page.screenshot(path=str(tmp_path / "scoped.png"))
    ctx.close()


def test_the_keep_fp32_plans_nodes_are_outlined_and_the_first_divergence_marked(browser, app, tmp_path):
    """The layernorm lesson in FP16 (precision_lessons: its plan keeps /ln/Pow and /ln/ReduceMean_1 in FP32, /ln/Pow
    diverges first): the closed /ln group carries the plan's outline, the bar its legend; the first divergence's
    button opens the group and centres /ln/Pow, and exactly the plan's nodes carry the outline."""
    from playground.model import precision_model as pm
    from playground.model.precision_lessons import LESSONS
    from playground.onnx import reading

    model = LESSONS["layernorm_fp16"].build()
    plan = pm.analyze(reading.load_model(model.SerializeToString(), "ln.onnx"), "ln.onnx", None, "FP16")["precision"]
    assert (
        sorted(plan["keep_fp32"]) == ["/ln/Pow", "/ln/ReduceMean_1"] and plan["first_divergence"]["node"] == "/ln/Pow"
    )
    path = tmp_path / "layernorm_fp16.onnx"
    onnx.save(model, path)
    ctx, page = _open_model(browser, app, path, height=720, query="?precision=FP16", drawn=2)
    page.wait_for_selector(f"{GRAPH}[data-graph-state='ready']")
    group = page.locator(f"{GRAPH} .pg-graph-group[data-group='g:/ln']")
    assert "pg-graph-kept" in group.get_attribute("class") and "2 kept in FP32" in group.text_content()
    assert "pg-graph-first" in group.get_attribute("class")  # it holds the first divergence
    assert page.locator(f"{GRAPH} .pg-graph-node.pg-graph-kept").count() == 0  # block/Mul: not in the plan
    assert page.inner_text(f"{GRAPH} .pg-graph-legend") == "kept in FP32 by the plan (2)"
    jump = page.locator(f"{GRAPH} .pg-graph-jump")
    assert jump.inner_text() == "First divergence in FP16: /ln/Pow"
    jump.click()
    page.wait_for_selector(f"{GRAPH}[data-centred='/ln/Pow']")
    kept = page.eval_on_selector_all(f"{GRAPH} .pg-graph-node.pg-graph-kept", "ns => ns.map(n => n.dataset.node)")
    assert sorted(kept) == sorted(plan["keep_fp32"])
    assert page.locator(f"{GRAPH} .pg-graph-node").count() == 10
    first = page.locator(f"{GRAPH} .pg-graph-first")
    assert first.count() == 1 and first.get_attribute("data-node") == "/ln/Pow"
    stroke = page.eval_on_selector(
        f"{GRAPH} .pg-graph-node[data-node='/ln/ReduceMean_1'] rect", "r => getComputedStyle(r).stroke"
    )
    plain = page.eval_on_selector(
        f"{GRAPH} .pg-graph-node[data-node='/ln/Sub'] rect", "r => getComputedStyle(r).stroke"
    )
    assert stroke == "rgb(0, 131, 143)" and plain != stroke  # the plan's outline is drawn, and only on its nodes
    ctx.close()


FIRST_SEEN_JS = """(() => { const seen = window.__firstSeen = {};
  new MutationObserver(() => {
    for (const [k, q] of [["box", "input[type=file]"], ["menu", "[data-testid=stTopNavLink]"],
                          ["graph", ".pg-graph[data-graph-state=ready]"]])
      if (!(k in seen) && document.querySelector(q)) seen[k] = performance.now();
  }).observe(document, { subtree: true, childList: true, attributes: true });
})();"""


def test_the_pages_menu_follows_the_model_pages_first_view(browser, app, tmp_path):
    """The pages' menu (a second of a loaded 2-core machine's main thread) is drawn after the model page's first
    view: after the empty page's upload box, and after a model link's graph is ready; then it stays."""
    path = tmp_path / "crs.onnx"
    _conv_relu_softmax(path)
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    ctx.add_init_script(FIRST_SEEN_JS)
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(app.rstrip("/") + "/model")
    page.wait_for_selector("[data-testid=stTopNavLink]", state="attached")
    seen = page.evaluate("window.__firstSeen")
    assert seen["box"] < seen["menu"], seen
    B.wait_until_idle(page)
    page.set_input_files('input[type="file"]', str(path))
    page.wait_for_selector(f"{GRAPH}[data-graph-state='ready']")
    assert page.locator("[data-testid=stTopNavLink]").count() > 3  # it stays in the session
    link = page.url
    ctx.close()
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    ctx.add_init_script(FIRST_SEEN_JS)
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(link)
    page.wait_for_selector("[data-testid=stTopNavLink]", state="attached")
    seen = page.evaluate("window.__firstSeen")
    assert seen["graph"] < seen["menu"], seen
    ctx.close()


def test_the_minimap_shows_once_the_graph_outgrows_the_view_and_a_press_on_it_moves_the_view(browser, app, tmp_path):
    path = tmp_path / "crs.onnx"
    _conv_relu_softmax(path)
    ctx, page = _open_model(browser, app, path)
    B.wait_until_idle(page)
    mini = page.locator(f"{GRAPH} .pg-graph-minimap")
    assert mini.is_hidden()  # fitted: the whole graph is in view
    view = page.locator(f"{GRAPH} .pg-graph-view")
    view.scroll_into_view_if_needed()
    box = view.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.keyboard.down("Control")
    for _ in range(3):
        page.mouse.wheel(0, -600)
    page.keyboard.up("Control")
    mini.wait_for(state="visible")
    zoom = _zoom(page)
    world = page.locator(f"{GRAPH} .pg-graph-world")
    m = mini.bounding_box()
    tops = []
    for fy in (0.1, 0.9):  # the graph's top, then its bottom, centred: the view moves down the graph
        page.mouse.click(m["x"] + m["width"] / 2, m["y"] + m["height"] * fy)
        tops.append(float(world.get_attribute("transform").split(",")[1].split(")")[0]))
    assert tops[1] < tops[0] and _zoom(page) == zoom  # it moves the view, never zooms it
    ctx.close()


def test_a_links_second_open_draws_the_data_its_html_named_and_a_sibling_opened_leaves_a_groups_inside(
    browser, app, tmp_path
):
    """A fresh tab on a model's link fetches the data its first view drew last as the page loads (the page's HTML
    names it) and draws that, asking for nothing else; a group opened beside an open one leaves the open one's
    boxes where they were within it (each group laid out on its own)."""
    path = tmp_path / "scoped.onnx"
    _scoped(path)
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.goto(app.rstrip("/") + "/model")
    B.wait_until_idle(page)
    page.set_input_files('input[type="file"]', str(path))
    page.wait_for_selector(f"{GRAPH}[data-graph-state='ready']", timeout=60_000)
    link = page.url
    ctx.close()
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    asked = []
    page.on("request", lambda r: asked.append(r.url) if "/api/graph/" in r.url and "/js/" not in r.url else None)
    page.goto(link)
    page.wait_for_selector(f"{GRAPH}[data-graph-state='ready']")
    assert [u.split("/api/graph/")[1].split("?")[0] for u in asked] == ["latest"], asked
    # open the fold, then two of its blocks one after the other: the first one's boxes stay where they were in it
    page.locator(f"{GRAPH} .pg-graph-group[data-group='f:g:/enc/block.0']").click()
    page.locator(f"{GRAPH} .pg-graph-group[data-group='g:/enc/block.1']").click()
    page.locator(f"{GRAPH} .pg-graph-node[data-node='/enc/block.1/relu']").wait_for()

    def inside(group: str) -> list:
        return page.evaluate(
            """g => { const c = document.querySelector(`.pg-graph-cluster[data-group='${g}'] rect`).getBBox();
                return [...document.querySelectorAll(`.pg-graph-node[data-node^='/enc/block.1/']`)].map(n => {
                  const m = n.transform.baseVal.consolidate().matrix;
                  return [n.dataset.node, Math.round(m.e - c.x), Math.round(m.f - c.y)]; }).sort(); }""",
            group,
        )

    before = inside("g:/enc/block.1")
    page.locator(f"{GRAPH} .pg-graph-group[data-group='g:/enc/block.3']").click()
    page.locator(f"{GRAPH} .pg-graph-node[data-node='/enc/block.3/relu']").wait_for()
    assert len(before) == 2 and inside("g:/enc/block.1") == before
    ctx.close()
