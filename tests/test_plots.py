import json
import time
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

from playground.colours import colour_range
from playground.numbers import compact
from playground.plots import (
    MAX_DRAW_CELLS,
    TEXT_CELL_LIMIT,
    ColorRange,
    color_range,
    comparison_bar_figure,
    slices,
    tensor_figure,
    transfer_curve_figure,
)
from playground.style import DEFAULT, PRESENTER, theme


def heatmaps(fig):
    return [d for d in fig.data if d.type == "heatmap" and not d.name.startswith("non-finite")]


def overlays(fig):
    return [d for d in fig.data if d.type == "heatmap" and d.name.startswith("non-finite")]


def cell_scatters(fig):
    return [d for d in fig.data if d.type in ("scatter", "scattergl") and d.customdata is not None]


def ramp(shape, lo=-1.0, hi=1.0):
    return np.linspace(lo, hi, int(np.prod(shape)), dtype=np.float32).reshape(shape)


@pytest.mark.parametrize(
    "shape, first, last",
    [
        ((2, 3, 5, 6), "n=0, c=0", "n=1, c=2"),
        ((1, 2, 3, 4, 4), "n=0, c=0, d=0", "n=0, c=1, d=2"),
    ],
)
def test_one_heatmap_per_slice(shape, first, last):
    t = ramp(shape)
    fig, stats = tensor_figure(t, title="t")
    n = int(np.prod(shape[:-2]))
    assert len(slices(t)) == len(heatmaps(fig)) == n
    titles = [a.text for a in fig.layout.annotations]
    assert (titles[0], titles[n - 1]) == (first, last)
    assert stats["shape"] == shape
    assert np.array_equal(heatmaps(fig)[-1].z, slices(t)[-1][1])


def test_slices_labels_and_rank_check():
    t = ramp((2, 3, 4, 5))
    assert [k for k, _ in slices(t)][:4] == [(0, 0), (0, 1), (0, 2), (1, 0)]
    assert slices(ramp((4, 5)))[0][0] == ()
    with pytest.raises(ValueError):
        slices(np.zeros(3))


def test_the_axes_are_the_cells():
    fig, _ = tensor_figure(ramp((1, 1, 4, 5)), title="t")
    assert tuple(fig.layout.xaxis.range) == (-0.5, 4.5) and tuple(fig.layout.yaxis.range) == (3.5, -0.5)


def test_cells_grow_to_their_longest_label():
    short, _ = tensor_figure(np.arange(16.0).reshape(1, 1, 4, 4), title="t")
    long, stats = tensor_figure(np.full((1, 1, 4, 4), 12345.679), title="t")
    assert stats["text_in_cells"] and long.layout.width >= short.layout.width
    assert np.diff(long.layout.xaxis.domain)[0] * long.layout.width >= 4 * len("12345.7") * 11 * 0.6
    # A 20×20 slice of small integers keeps its numbers; of long decimals it drops them.
    assert tensor_figure(np.arange(400.0).reshape(20, 20) % 10, title="t")[1]["text_in_cells"]
    assert not tensor_figure(np.linspace(-1, 1, 400).reshape(20, 20), title="t")[1]["text_in_cells"]


def test_matrix_orientation_square_cells_no_grid():
    fig, _ = tensor_figure(ramp((1, 1, 6, 6)), title="t")
    ya, xa = fig.layout.yaxis, fig.layout.xaxis
    # Row 0 on top: the y range runs from the last row down to the first, exactly around the cells.
    assert tuple(ya.range) == (5.5, -0.5) and tuple(xa.range) == (-0.5, 5.5) and ya.scaleanchor == "x"
    assert xa.showgrid is False and ya.showgrid is False
    assert fig.layout.height > 0 and fig.layout.width > 0


@pytest.mark.parametrize("shape, expect", [((1, 2, 8, 8), True), ((21, 20), False), ((1, 1, 64, 64), False)])
def test_text_in_cells_only_when_small(shape, expect):
    fig, stats = tensor_figure(ramp(shape), title="t")
    assert stats["text_in_cells"] is expect
    for h in heatmaps(fig):
        assert (h.texttemplate is not None and h.text is not None) is expect
    if expect:
        assert int(np.prod(shape[-2:])) <= TEXT_CELL_LIMIT


def test_cell_text_format():
    t = np.array([[12345.678, -0.5, 0.123456, 2.0], [np.nan, np.inf, -np.inf, 0.0]])
    fig, _ = tensor_figure(t, title="t")
    assert list(heatmaps(fig)[0].text[0]) == ["12345.7", "-0.5", "0.123456", "2"]  # six digits, as the stage's
    assert list(overlays(fig)[0].text[1][:3]) == ["NaN", "+Inf", "-Inf"]
    assert [compact(v) for v in (1.23e7, -4.2e-5, -0.0)] == ["1.23e7", "-4.2e-5", "0"]


def test_nonfinite_counted_and_drawn():
    t = ramp((1, 2, 6, 6))
    t[0, 0, 0, :2] = np.nan
    t[0, 1, 3, 3:] = np.inf
    t[0, 1, 5, 5] = -np.inf
    fig, stats = tensor_figure(t, title="t")
    assert (stats["nan"], stats["posinf"], stats["neginf"]) == (2, 3, 1)
    ov = overlays(fig)
    assert len(ov) == 2  # one per slice that has non-finite values
    codes = np.concatenate([np.asarray(o.z, float).ravel() for o in ov])
    assert [(codes == c).sum() for c in (3, 2, 1)] == [2, 3, 1]  # 3 NaN, 2 +Inf, 1 -Inf
    colours = {c for _, c in ov[0].colorscale}
    assert {DEFAULT.nan_color, DEFAULT.posinf_color, DEFAULT.neginf_color} <= colours
    # base heatmap carries no Inf (plotly.js would give it an end colour) and the legend explains colours
    assert np.isnan(np.asarray(heatmaps(fig)[1].z, float)[3, 3:]).all()
    assert {d.name for d in fig.data if d.type == "scatter"} == {"NaN: 2", "+Inf: 3", "-Inf: 1"}


def test_color_range_diverging_and_sequential():
    (r,) = color_range([np.array([-1.0, 3.0, np.nan, np.inf])])
    assert r == ColorRange(-3.0, 3.0, True)
    (r,) = color_range([np.array([0.5, 2.0, -np.inf])])
    assert r == ColorRange(0.5, 2.0, False)
    assert color_range([np.full(3, np.nan)])[0] == ColorRange(0.0, 1.0, False)
    assert color_range([np.full(3, 4.0)])[0] == ColorRange(4.0, 5.0, False)  # a constant: the scale's first colour
    assert color_range([np.zeros(3)])[0] == ColorRange(0.0, 1.0, False)  # as the stage draws it

    fig, _ = tensor_figure(ramp((1, 1, 4, 4), -1, 2), title="t")
    h = heatmaps(fig)[0]
    assert h.zmin == -h.zmax == -2 and h.colorscale == go.Heatmap(colorscale=DEFAULT.diverging).colorscale
    fig, _ = tensor_figure(ramp((1, 1, 4, 4), 0, 2), title="t")
    h = heatmaps(fig)[0]
    assert (h.zmin, h.zmax) == (0, 2) and h.colorscale == go.Heatmap(colorscale=DEFAULT.sequential).colorscale


@pytest.mark.parametrize(
    "t",
    [
        np.full((1, 1, 3, 3), np.nan),
        np.full((2, 2), -np.inf),
        np.ones((2, 3), np.int32),
        np.zeros((1, 2, 2), np.float16),
    ],
)
def test_degenerate_inputs(t):
    fig, stats = tensor_figure(t, title="t")  # RuntimeWarnings are errors under pytest.ini
    finite = np.isfinite(t.astype(float))
    assert stats["nan"] + stats["posinf"] + stats["neginf"] == (~finite).sum()
    assert (stats["zmin"] is None) == (not finite.any())


def test_shared_vs_per_slice_scale():
    t = np.stack([ramp((4, 4), 0, 1), ramp((4, 4), 0, 10)])[None]
    fig, _ = tensor_figure(t, title="t", shared_scale=True)
    assert [(h.zmin, h.zmax) for h in heatmaps(fig)] == [(0, 10), (0, 10)]
    assert [h.showscale for h in heatmaps(fig)] == [True, False]
    fig, _ = tensor_figure(t, title="t", shared_scale=False)
    assert [(h.zmin, h.zmax) for h in heatmaps(fig)] == [(0, 1), (0, 10)]
    assert all(h.showscale for h in heatmaps(fig))
    assert heatmaps(fig)[0].colorbar.x < 1 < heatmaps(fig)[1].colorbar.x  # each beside its own slice


def test_decimation_keeps_real_indices_and_nan():
    t = ramp((1, 1, 1024, 1024))
    t[0, 0, 5, 7] = np.nan  # not on the stride grid: must still show
    fig, stats = tensor_figure(t, title="t")
    (h,) = heatmaps(fig)
    z = np.asarray(h.z)
    assert stats["decimated"] > 1 and z.size <= MAX_DRAW_CELLS
    assert h.x[1] - h.x[0] == stats["decimated"] and stats["nan"] == 1
    assert (np.asarray(overlays(fig)[0].z, float) == 3).sum() == 1
    assert tensor_figure(ramp((1, 1, 64, 64)), title="t")[1]["decimated"] == 1


def test_hover_shows_full_index():
    fig, _ = tensor_figure(ramp((1, 2, 3, 3, 3)), title="t")
    tpl = heatmaps(fig)[4].hovertemplate
    assert "n=0, c=1, d=1" in tpl and "h=%{y}" in tpl and "w=%{x}" in tpl and "%{z" in tpl


def test_build_time_128(capsys):
    t0 = time.perf_counter()
    tensor_figure(ramp((1, 3, 128, 128)), title="t")
    with capsys.disabled():
        print(f"\n1x3x128x128 figure built in {time.perf_counter() - t0:.3f} s")


def test_deterministic():
    t = ramp((1, 3, 9, 9))
    a = tensor_figure(t, title="t")[0].to_json()
    assert a == tensor_figure(t, title="t")[0].to_json()


def test_presenter_theme_larger():
    assert theme(True) is PRESENTER and theme(False) is DEFAULT
    for k in ("font_size", "title_size", "cell_text_size", "cell_px", "outline_width"):
        assert getattr(PRESENTER, k) > getattr(DEFAULT, k), k
    t = ramp((1, 1, 4, 4))
    assert tensor_figure(t, title="t", theme=PRESENTER)[0].layout.font.size == PRESENTER.font_size


def test_transfer_curve():
    xs = np.linspace(-3, 3, 61)
    fig = transfer_curve_figure(
        xs, np.maximum(xs, 0), marks_x=[-1, 0.5, np.inf], marks_y=[0, 0.5, np.inf], title="ReLU"
    )
    line, marks = fig.data
    assert line.mode == "lines" and marks.mode == "markers" and np.isnan(marks.x[2])
    assert fig.layout.xaxis.zeroline and fig.layout.yaxis.zeroline and fig.layout.xaxis.rangemode == "tozero"
    assert len(transfer_curve_figure(xs, xs, title="id").data) == 1


def test_comparison_bars():
    fig = comparison_bar_figure(
        ["LeakyReLU", "max(x, a*x)", "PReLU"], [0.0123, 0.02, float("nan")], title="latency", unit="ms"
    )
    (bar,) = fig.data
    assert list(bar.text) == ["0.0123 ms", "0.02 ms", "n/a"]
    assert fig.layout.yaxis.autorange == "reversed" and fig.layout.xaxis.title.text == "ms"


@pytest.mark.parametrize(
    "rows, cols, hspace, vspace, titles",
    [
        (1, 1, 0, 0, None),
        (1, 3, 0.05, 0, list("abc")),
        (2, 4, 0.02, 0.1, list("abcdef")),
        (3, 2, 0.3, 0.07, list("abcdef")),
    ],
)
def test_subplot_grid_is_make_subplots_grid(rows, cols, hspace, vspace, titles):
    """The grid tensor_figure lays out itself (for speed) is the one plotly's make_subplots makes."""
    from plotly.subplots import make_subplots

    from playground.plots import _subplots

    ref = make_subplots(rows=rows, cols=cols, horizontal_spacing=hspace, vertical_spacing=vspace, subplot_titles=titles)
    ref.update_annotations(font_size=13)
    axes, notes = _subplots(rows, cols, hspace, vspace, titles, 13)
    assert set(axes) == {k for k in ref.layout.to_plotly_json() if k[1:5] == "axis"}
    for name, axis in axes.items():
        assert axis["anchor"] == ref.layout[name].anchor
        assert axis["domain"] == pytest.approx(list(ref.layout[name].domain), abs=1e-12), name
    assert len(notes) == len(ref.layout.annotations)
    for mine, theirs in zip(notes, ref.layout.annotations):
        theirs = theirs.to_plotly_json()
        assert {k: v for k, v in mine.items() if k not in "xy"} == {k: v for k, v in theirs.items() if k not in "xy"}
        assert (mine["x"], mine["y"]) == pytest.approx((theirs["x"], theirs["y"]), abs=1e-12)


def test_figures_keep_plotly_whites_look_for_what_they_draw():
    import json

    import plotly.io as pio

    white = pio.templates["plotly_white"].to_plotly_json()
    fig, _ = tensor_figure(np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3), title="t")
    used = json.loads(pio.to_json(fig))["layout"]["template"]
    for part in ("xaxis", "yaxis", "colorway", "font", "hoverlabel", "coloraxis", "paper_bgcolor"):
        assert used["layout"][part] == json.loads(json.dumps(white["layout"][part])), part
    for trace in {t.type for t in fig.data} | {"bar"}:
        assert used["data"][trace] == json.loads(json.dumps(white["data"][trace])), trace


COLOUR_RULE = json.loads((Path(__file__).parent / "fixtures" / "colour_rule.json").read_text())["cases"]


@pytest.mark.parametrize("case", COLOUR_RULE, ids=[c["name"] for c in COLOUR_RULE])
def test_the_details_tab_colours_a_tensor_as_the_stage_does(case):
    """One colour rule: colours.colour_range's range on the scale heatmap.js draws it on (tests/js/colour_rule.test.mjs
    holds the stage to the same table), so a constant, all-zero or rounding-noise tensor is one colour in both."""
    values = np.array([float(v) for v in case["values"]], np.float32)
    assert colour_range(values) == case["range"]
    want = ColorRange(case["scale"]["lo"], case["scale"]["hi"], case["scale"]["diverging"])
    assert color_range([values]) == [want]
    h = heatmaps(tensor_figure(np.tile(values, (2, 1)), title="t")[0])[0]
    assert (h.zmin, h.zmax) == (want.zmin, want.zmax)
    scale = DEFAULT.diverging if want.diverging else DEFAULT.sequential
    assert h.colorscale == go.Heatmap(colorscale=scale).colorscale
    assert "%{z:.7~g}" in h.hovertemplate  # a hovered value's seven digits, no trailing zeros (format.js precise)


def test_a_shared_scale_spans_every_slice_and_drops_their_rounding_noise():
    a = np.array([[1.0, 1.0 + 2**-20], [1.0, 1.0]], np.float32)  # noise of the values' own size across two slices
    assert color_range([a[0], a[1]]) == [color_range([a.ravel()])[0]] * 2
    assert color_range([a[0], a[1]])[0].zmax - color_range([a[0], a[1]])[0].zmin == 1.0  # one colour
    own = color_range([np.zeros(2, np.float32), np.array([1.0, 3.0], np.float32)], shared=False)
    assert own == [ColorRange(0.0, 1.0, False), ColorRange(1.0, 3.0, False)]
