"""A link never loses a key silently: every key a layer page does not use is named on the page with its rule (alone, or
with the others that break a budget together), its control is marked, and the page's URL (which the share link and
the QR code carry) keeps only what the page shows."""

from __future__ import annotations

import pytest
from apptest import open_page, stage_data

from playground.base.params import KINDS, Bool, Float, Ints, Param
from playground.layers import LAYERS
from playground.ui import links


def _warnings(at) -> str:
    return "\n".join(w.value for w in at.warning)


def _named(shown: str, k: str) -> bool:
    """Whether the page's link box names key `k` (followed by its colon, or its value in a list of several)."""
    return f"{k}:" in shown or f"{k} (got" in shown


def _shows(at, query: dict) -> None:
    """Every key given is either in the page's URL with the value given (in use) or named on the page and gone
    from its URL; the marked controls are exactly the named keys the stage or the sidebar draws; nothing is refused."""
    shown, data = _warnings(at), stage_data(at)
    for k, v in query.items():
        if k in at.query_params:
            assert at.query_params[k] == v and not _named(shown, k), (k, shown)
        else:
            assert _named(shown, k), (k, shown)
    assert set(data["dropped"]) <= set(query) and all(_named(shown, k) for k in data["dropped"])
    assert data["problem"] is None and not at.error, (data["problem"], [e.value for e in at.error])


def test_scales_that_break_the_cap_with_the_links_input_are_named_and_marked():
    query = {
        "resize.resize_mode": "CUBIC",
        "resize.scales": "64,64",
        "resize.input.H": "512",
        "resize.input.W": "512",
        "resize.input.C": "8",
    }
    at = open_page("resize", **query)
    _shows(at, query)
    shown, data = _warnings(at), stage_data(at)
    assert 'URL parameter resize.scales: on axis h gives 32768 cells, more than 512 (got "64,64")' in shown, shown
    assert "resize.scales" not in at.query_params and data["query"]["resize.scales"] == "none"  # what the page shows
    assert "resize.scales" in data["dropped"]  # the stage marks its control
    assert data["answer"]["shapes"] == "Input (1, 8, 512, 512) → Output (1, 8, 512, 512)"


def test_a_deconvolution_beyond_the_budget_names_every_key_that_breaks_it_in_one_line():
    query = {
        "deconvolution.stride_nd.h": "16",
        "deconvolution.stride_nd.w": "16",
        "deconvolution.kernel_size_nd.h": "15",
        "deconvolution.kernel_size_nd.w": "15",
        "deconvolution.num_output_maps": "64",
        "deconvolution.input.H": "512",
        "deconvolution.input.W": "512",
    }
    at = open_page("deconvolution", **query)
    _shows(at, query)
    (line,) = [w.value for w in at.warning]
    assert "these together break the budget of 8,388,608 values per tensor" in line and "4,293,918,784" in line
    for k, v in list(query.items())[:5]:  # every parameter named with its value, gone from the URL, its control marked
        assert f'{k} (got "{v}")' in line and k not in at.query_params and k in stage_data(at)["dropped"], k
    assert at.query_params["deconvolution.input.H"] == "512"  # the input the link gave stays: it fits alone
    assert stage_data(at)["answer"]["shapes"] == "Input (1, 1, 512, 512) → Output (1, 1, 514, 514)"


def test_a_depth_given_to_a_4d_input_is_named_beside_the_sizes_out_of_range():
    query = {"convolution.input.N": "65", "convolution.input.C": "4097", "convolution.input.D": "9"}
    at = open_page("convolution", **query)
    _shows(at, query)
    shown = _warnings(at)
    assert 'convolution.input.N: must be between 1 and 64 (got "65")' in shown
    assert 'convolution.input.C: must be between 1 and 4096 (got "4097")' in shown
    assert 'convolution.input.D: this input is 4-D (convolution.input.3d is not true): it has no D (got "9")' in shown
    assert not any(k in at.query_params for k in query)
    css = "\n".join(e.proto.body for e in at.get("html") if "outline" in e.proto.body)  # the sidebar's marks
    assert ".st-key-convolution-input-N" in css and ".st-key-convolution-input-C" in css, css


def test_a_per_axis_parameter_in_the_clis_spelling_opens_its_axes():
    at = open_page("convolution", **{"convolution.stride_nd": "2", "convolution.pre_padding": "1,0"})  # 2: both axes
    assert not at.warning, _warnings(at)
    assert "convolution.stride_nd" not in at.query_params  # the page's own spelling replaces it
    assert (at.query_params["convolution.stride_nd.h"], at.query_params["convolution.stride_nd.w"]) == ("2", "2")
    q = stage_data(at)["query"]
    assert (q["convolution.stride_nd.h"], q["convolution.pre_padding.set"], q["convolution.pre_padding.h"]) == (
        "2",
        "true",
        "1",
    )
    assert stage_data(at)["answer"]["shapes"] == "Input (1, 1, 6, 9) → Output (1, 1, 3, 4)"
    at = open_page("convolution", **{"convolution.pre_padding": "none", "convolution.padding_nd": "1,1"})
    q = stage_data(at)["query"]
    assert not at.warning and (q["convolution.pre_padding.set"], q["convolution.padding_nd.w"]) == ("false", "1")
    assert stage_data(at)["answer"]["shapes"] == "Input (1, 1, 6, 9) → Output (1, 1, 6, 9)"


@pytest.mark.parametrize(
    "query,rule",
    [
        ({"convolution.stride_nd": "2,2,2"}, "must be one whole number or 2, one per axis h, w, for a 4-D input"),
        ({"convolution.strides": "2"}, "is not a setting of the convolution page"),
        ({"activation.type": "RELU"}, "is not a setting of the convolution page, but of the activation page"),
        ({"view.instrument": "false"}, "view.instrument: is not a setting of the convolution page"),
        ({"convolution.stride_nd": "3,3", "convolution.stride_nd.h": "2"}, "the link gives its per-axis keys too"),
        ({"convolution.input.seed": "7"}, "the spec pattern does not read seed"),
        ({"convolution.stride_nd.d": "2"}, "not a parameter of this convolution page"),
    ],
)
def test_a_key_the_page_does_not_use_is_named_and_leaves_the_link(query, rule):
    at = open_page("convolution", **query)
    _shows(at, query)
    shown = _warnings(at)
    assert rule in shown, shown
    assert "convolution.stride_nd.h" not in query or at.query_params["convolution.stride_nd.h"] == "2"


def _maximum(p: Param) -> str | None:
    """A parameter's largest value as a URL text, where it has one (an array has none)."""
    if p.of.options(p):
        return str(p.of.options(p)[-1]).lower() if isinstance(p.of, Bool) else p.to_text(p.of.options(p)[-1])
    if p.high is not None and (p.of.number or isinstance(p.of, Ints)):
        return str(int(p.high)) if not isinstance(p.of, Float) else repr(float(p.high))
    return None


def _at_maxima(layer) -> dict[str, str]:
    """Every key of the page at its largest value: the input's sizes, the view's, each parameter's (per axis)."""
    query = {}
    for k, f in links.fields(layer).items():
        if isinstance(KINDS[f.kind], Bool):
            query[k] = "true"
        elif f.choices:
            query[k] = f.choices[-1]
        elif f.high is not None:
            query[k] = str(int(f.high))
    for p in layer.params:
        top = _maximum(p)
        if top is None:
            continue
        for k in links.param_keys(layer):
            if k == f"{layer.name}.{p.name}" or (p.along_axes and k.startswith(f"{layer.name}.{p.name}.")):
                query[k] = "true" if k.endswith(".set") else top
    return query


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_every_key_at_its_maximum_together_is_used_or_named(name):
    query = _at_maxima(LAYERS[name])
    at = open_page(name, **query)
    _shows(at, query)
    assert at.warning  # at their maxima together, something is beyond a rule


def test_a_link_of_many_stray_keys_names_the_first_and_counts_the_rest():
    query = {f"stray{i}": str(i) for i in range(40)} | {"x" * 300: "1", "convolution.stride_nd.h": "2"}
    at = open_page("convolution", **query)
    shown = _warnings(at)
    assert 'URL parameter stray0: is not a setting of the convolution page (got "0") — not used.' in shown
    assert "and 22 more: not settings of the convolution page — not used." in shown, shown
    assert "x" * 40 not in shown  # a long name is cut short
    assert dict(at.query_params) == {"convolution.stride_nd.h": "2"}  # only what the page uses stays
