"""From a model to a chain in the browser: an engine layer's outline on the model page opens the chain of its nodes
on the tensor the first node reads in the model, and the chain page says that its engine computes them as the
model's engine does."""

from __future__ import annotations

import pytest
from test_model_browser import GRAPH, _open_model
from test_model_chain import conv_bn_relu

from playground.chromium import browser as B

pytestmark = pytest.mark.browser


def test_an_outline_opens_the_chain_of_its_nodes_on_the_models_tensor(browser, app, tmp_path):
    path = tmp_path / "cbr.onnx"
    path.write_bytes(conv_bn_relu())
    ctx, page = _open_model(browser, app, path, drawn=4)
    outline = page.locator(f"{GRAPH} .pg-graph-chain").first
    title = page.evaluate("(e) => e.querySelector('title').textContent", outline.element_handle())
    assert "bn, conv, relu" in title or "conv, bn, relu" in title, title
    outline.click(position={"x": 20, "y": 3})
    page.wait_for_url("**/chain?**")
    assert "input.tensor=r" in page.url and "input.onnx=" in page.url and "input.pattern" not in page.url
    B.wait_until_idle(page)
    page.get_by_text("On ONNX Runtime's tensor 'r' of the model cbr.onnx").wait_for()
    assert "as the model's engine does" in page.inner_text("[data-testid='stAlert']")
    assert page.locator("[data-testid='stException']").count() == 0
    ctx.close()
