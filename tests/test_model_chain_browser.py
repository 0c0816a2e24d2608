"""From a model to a chain in the browser: an engine layer's outline on the model page opens the chain of its nodes
on the tensor the first node reads in the model, and the chain page says that its engine computes them as the
model's engine does."""

from __future__ import annotations

import pytest
from test_model_browser import GRAPH, _open_model
from test_model_chain import two_blocks

from playground.chromium import browser as B

pytestmark = pytest.mark.browser


def test_an_outline_opens_the_chain_of_its_nodes_on_the_models_tensor(browser, app, tmp_path):
    """The first block's outline (conv1, bn1, relu1: one engine layer of the model's) opens a chain on the output of
    the node before in the model, bn1 folded into conv1, whose engine computes the three in one layer too."""
    path = tmp_path / "blocks.onnx"
    path.write_bytes(two_blocks())
    ctx, page = _open_model(browser, app, path, drawn=7)
    outlines = page.locator(f"{GRAPH} .pg-graph-chain")
    titles = [page.evaluate("(e) => e.querySelector('title').textContent", o) for o in outlines.element_handles()]
    first = next(i for i, t in enumerate(titles) if "conv1" in t)
    assert all(n in titles[first] for n in ("conv1", "bn1", "relu1")), titles
    outlines.nth(first).click(position={"x": 20, "y": 3})
    page.wait_for_url("**/chain?**")
    url = page.url.replace("%2C", ",").replace("%2B", "+")
    assert "layers=convolution,activation" in url and "input.tensor=p" in url and "input.onnx=" in url
    assert "input.nodes=conv1+bn1,relu1" in url and "input.pattern" not in url
    B.wait_until_idle(page)
    page.get_by_text("On ONNX Runtime's tensor 'p' of the model blocks.onnx").wait_for()
    assert "Folded: bn1 into conv1's kernel and bias" in page.inner_text("[data-testid='stMain']")
    alerts = page.locator("[data-testid='stAlert']").all_inner_texts()
    assert any("as the model's engine does: bn1 + conv1 + relu1" in a for a in alerts), alerts
    assert page.locator("[data-testid='stException']").count() == 0
    ctx.close()
