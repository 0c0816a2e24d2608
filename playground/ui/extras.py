"""Under the stage: a layer's section (its tables, charts, heatmaps and notes: playground.base.section blocks) and the
picked output cell's terms, drawn with Streamlit. `view` is a ui.view.ViewOptions. Every widget key is
"{layer}.extra.{name}"."""

from __future__ import annotations

import itertools
from typing import Any

import streamlit as st

from ..base import section
from ..base.numbers import precise
from ..layers import get_layer
from .figures import chart, table, tensors
from .keys import key
from .messages import inert


def _key(layer: str, name: str) -> str:
    return key(layer, "extra", name)  # a widget's, never in a link (a link's LAYER.extra.AXIS is an old picked cell)


def details(evaluation, pick: tuple[int, ...] | None, view: Any, evaluate) -> None:
    """The Details tab: the layer's section (its own evaluations through `evaluate`), then the picked cell's terms."""
    layer = get_layer(evaluation.layer)
    context = section.Context(view.theme, evaluate, lambda label: st.spinner(label, show_time=True))
    blocks = layer.section(evaluation, context) if layer.section else []
    draw_blocks(layer.name, blocks + cell_blocks(evaluation, pick), view)


def draw_blocks(layer: str, blocks: list, view: Any) -> None:
    """A layer's section (playground.base.section blocks) in the current container; consecutive texts as one element
    (fewer for the browser to redraw on every change)."""
    for is_text, run in itertools.groupby(blocks, key=lambda b: isinstance(b, section.Text)):
        if is_text:
            st.markdown("\n\n".join(block.markdown for block in run))
            continue
        for block in run:
            _draw_block(layer, block, view)


def _draw_block(layer: str, block, view: Any) -> None:
    if isinstance(block, section.Code):
        st.code(block.text, language=None)
    elif isinstance(block, section.Note):
        text = inert(block.text) if block.tone in ("warning", "error") else block.text
        getattr(st, block.tone)(text)
    elif isinstance(block, section.Table):
        table(block.rows, _key(layer, block.name))
    elif isinstance(block, section.Chart):
        chart(block.figure, _key(layer, block.name))
    elif isinstance(block, section.Heatmaps):
        tensors(list(block.tensors), _key(layer, block.name), view.presenter)
    elif isinstance(block, section.Columns):
        for column, col in zip(block.columns, st.columns(len(block.columns))):
            with col:
                draw_blocks(layer, column, view)
    elif isinstance(block, section.OnRequest):
        if st.toggle(block.label, value=False, key=_key(layer, block.name)):
            draw_blocks(layer, block.blocks(), view)
    else:
        raise TypeError(f"{layer}'s section holds {block!r}, which is no playground.base.section block")


def cell_blocks(evaluation, index: tuple[int, ...] | None) -> list:
    """The picked output cell (the stage picks it: a click, step or play; the link keeps it) as section blocks:
    its value, what decides it, and one row per term."""
    layer = get_layer(evaluation.layer)
    if layer.cell is None:
        return []
    shape = tuple(evaluation.reference.shape)
    index = tuple(index) if index is not None else (0,) * len(shape)
    cell = layer.cell(
        evaluation.inputs if layer.several else evaluation.input, evaluation.params, index, evaluation.reference
    )
    shown = (
        f"{precise(float(evaluation.output[index]))} ({evaluation.output_source}); "
        if (evaluation.output.shape == shape)
        else ""
    )
    text = [
        f"**One output cell**: output{index} = {shown}reference = {precise(float(evaluation.reference[index]))}. "
        "Pick another on the output heatmap (or step and play beside it).",
        *cell.notes,
    ]
    return [section.Text("\n\n".join(text))] + ([section.Table("products", list(cell.rows))] if cell.rows else [])
