"""The stage's geometry: pixel boxes from the browser's viewport, figures fitted side by side."""
from __future__ import annotations

import numpy as np
import pytest

from playground import plots
from playground.style import DEFAULT, PRESENTER, stage_overhead_px
from playground.ui import stage


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
@pytest.mark.parametrize("presenter", [False, True])
def test_layout_fits_the_window(size, presenter):
    w, h = size
    box = stage.layout(w, h, presenter, cell_row=True)
    assert box.controls_w + box.figures_w <= w - 2 * stage.PADDING_X_PX
    assert stage.HEADER_PX + box.controls_h < h
    assert 160 <= box.figure_h < h - stage.HEADER_PX


def test_a_larger_window_gives_larger_figures():
    small, large = stage.layout(1280, 720, False, True), stage.layout(1920, 1080, False, True)
    assert large.figures_w > small.figures_w and large.figure_h > small.figure_h


def _cell(fig) -> float:
    xa = fig.layout.xaxis
    return (xa.domain[1] - xa.domain[0]) * (fig.layout.width - fig.layout.margin.l - fig.layout.margin.r)


def test_figure_rows_share_the_width_and_fit_the_box():
    x, k, y = np.zeros((1, 1, 6, 9)), np.zeros((1, 1, 3, 3)), np.zeros((1, 1, 4, 7))
    rows = stage.figure_rows([x, k, y], 900, 440, overhead=stage_overhead_px(DEFAULT))
    boxes = [b for row in rows for _, b in row]
    assert sorted(i for row in rows for i, _ in row) == [0, 1, 2]
    for row in rows:
        assert sum(b[0] for _, b in row) + 16 * (len(row) - 1) <= 900
    assert all(b[1] <= 440 for b in boxes)
    for (i, box), t in zip([p for row in rows for p in row], (x, k, y)):
        fig, _ = plots.tensor_figure(t, title="t", box=box)
        assert fig.layout.width <= box[0] + 1 and fig.layout.height <= box[1] + 1, (i, box, fig.layout.width,
                                                                                     fig.layout.height)


def test_many_slices_go_under_the_others_when_that_gives_larger_cells():
    """A 2 × 2-map input and output on a narrow, tall stage: the output goes to a second row."""
    x, y = np.zeros((1, 4, 6, 9)), np.zeros((1, 4, 4, 7))
    rows = stage.figure_rows([x, y], 900, 900, overhead=92)
    assert [[i for i, _ in row] for row in rows] == [[0], [1]]
    wide = stage.figure_rows([x, y], 2400, 400, overhead=92)
    assert [[i for i, _ in row] for row in wide] == [[0, 1]]


def test_box_fitting_writes_numbers_only_where_they_fit():
    t = np.arange(54, dtype=np.float32).reshape(1, 1, 6, 9) * 1234.5678
    _, roomy = plots.tensor_figure(t, title="t", box=(1200, 700))
    _, cramped = plots.tensor_figure(t, title="t", box=(300, 200))
    assert roomy["text_in_cells"] and not cramped["text_in_cells"]


def test_presenter_theme_has_its_own_stage_margins():
    assert stage_overhead_px(PRESENTER) > stage_overhead_px(DEFAULT)


def test_per_figure_overhead_gives_multi_slice_figures_their_colour_bars_room():
    """Two kernel slices with a colour bar each need more width than one: with that room counted, the kernel's
    cells come out as large as the input's instead of being crushed."""
    x, k, y = np.zeros((1, 2, 6, 9)), np.zeros((2, 1, 3, 3)), np.zeros((1, 2, 4, 7))
    th = PRESENTER
    extra = th.gap_px + th.stage_colorbar_room_px
    base = stage_overhead_px(th)
    rows = stage.figure_rows([x, k, y], 850, 520, overhead=[base + extra, base + extra, base + extra])
    for (i, box), t in zip([p for row in rows for p in row], (x, k, y)):
        fig, _ = plots.tensor_figure(t, title="t", theme=th, box=box, shared_scale=False)
        assert fig.layout.width <= box[0] + 1
    cells = {}
    for row in rows:
        for i, box in row:
            fig, _ = plots.tensor_figure((x, k, y)[i], title="t", theme=th, box=box, shared_scale=False)
            cells[i] = _cell(fig) / (x, k, y)[i].shape[-1]  # a slice's width over its cells
    assert cells[1] >= 0.8 * cells[0], cells  # not crushed next to the input
