import json

import numpy as np
import plotly.io as pio

from playground.base.plots import comparison_bar_figure, transfer_curve_figure
from playground.base.style import DEFAULT, PRESENTER, theme


def test_presenter_theme_larger():
    assert theme(True) is PRESENTER and theme(False) is DEFAULT
    for k in ("font_size", "title_size", "mark_size", "line_width", "curve_height", "bar_row_px"):
        assert getattr(PRESENTER, k) > getattr(DEFAULT, k), k
    xs = np.linspace(-1, 1, 5)
    assert transfer_curve_figure(xs, xs, title="t", theme=PRESENTER).layout.font.size == PRESENTER.font_size


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


def test_figures_keep_plotly_whites_look_for_what_they_draw():
    white = pio.templates["plotly_white"].to_plotly_json()
    xs = np.linspace(-1, 1, 5)
    for fig in (
        transfer_curve_figure(xs, xs, marks_x=xs, marks_y=xs, title="t"),
        comparison_bar_figure(["a", "b"], [1.0, 2.0], title="t", unit="ms"),
    ):
        used = json.loads(pio.to_json(fig))["layout"]["template"]
        for part in ("xaxis", "yaxis", "colorway", "font", "hoverlabel", "paper_bgcolor"):
            assert used["layout"][part] == json.loads(json.dumps(white["layout"][part])), part
        for trace in {t.type for t in fig.data}:
            assert used["data"][trace] == json.loads(json.dumps(white["data"][trace])), trace
