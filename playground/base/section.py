"""What a layer's own section under the stage is made of: blocks, which the page draws (a layer imports no
Streamlit).

`Layer.section(evaluation, context)` returns a list of blocks; `context` is what the page lends the layer: the
figure theme, `evaluate` (core.evaluate with the page's backend and engine cache) and `busy(label)`, a context
manager that shows `label` while slow work runs. Names (`Table.name`, …) become widget keys LAYER.extra.NAME.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager as ContextManager
from dataclasses import dataclass
from typing import Any

import numpy as np

TONES = ("caption", "info", "warning", "success", "error")


@dataclass(frozen=True)
class Text:
    markdown: str


@dataclass(frozen=True)
class Code:
    text: str


@dataclass(frozen=True)
class Note:
    text: str
    tone: str = "caption"  # one of TONES; warning and error text is shown inert (no markdown of its own)


@dataclass(frozen=True)
class Table:
    name: str
    rows: list[dict]


@dataclass(frozen=True)
class Chart:
    name: str
    figure: Any  # a plotly go.Figure (playground.base.plots: a line or bar chart)


@dataclass(frozen=True)
class Heatmaps:
    """Tensors of one quantity (one output by several constructions) drawn side by side as the stage draws its own,
    on one colour range: (name, title, tensor) each."""

    name: str
    tensors: tuple[tuple[str, str, np.ndarray], ...]


@dataclass(frozen=True)
class Columns:
    columns: tuple[list, ...]  # one list of blocks per column


@dataclass(frozen=True)
class OnRequest:
    """A switch, off at first; its blocks are made (`blocks()`) only while it is on: costly drawings."""

    name: str
    label: str
    blocks: Callable[[], list]


@dataclass(frozen=True)
class Context:
    theme: Any  # playground.base.style.Theme
    evaluate: Callable[..., Any]
    busy: Callable[[str], ContextManager]
