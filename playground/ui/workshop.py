"""Workshop aids under the stage: the example on screen (the spec's documented output and whether the computed
one agrees) and downloads (tensors as .npy and .csv, the configuration as a standalone TensorRT script and as an
ONNX model)."""

from __future__ import annotations

import functools

import streamlit as st

from ..base.inputs import to_csv, to_npy_bytes
from ..base.layer import Layer
from ..layers import get_layer
from ..network import presets
from ..network.core import Evaluation
from ..network.export import build_source, config_name, export_script
from ..serve import protocol
from .figures import tensors
from .keys import control_key, key
from .view import ViewOptions


# -- the example on screen -----------------------------------------------------------------------------
def spec_tab(layer: Layer, ev: Evaluation, view: ViewOptions) -> None:
    """The example or lesson the settled configuration is: its verdict, tolerance, source and note, and the table
    its source documents beside the computed output's figures."""
    found = presets.matching(layer.name, ev.params, ev.inputs if layer.several else ev.input)
    if not found:
        st.caption(
            "This configuration is none of the examples: pick one in the stage's example box to compare "
            "with the output its source documents."
        )
        return
    preset = found[0]
    spec_panel(layer, preset, presets.compare(preset, ev.output, ev.precision_error), ev)
    if preset.expected is not None:  # beside the computed output, on one colour range: a differing cell shows
        shown = [("spec", "Spec's output (as documented)", preset.expected)]
        if ev.output.shape == preset.expected.shape:
            shown.append(("output", protocol.output_title(ev), ev.output))
        tensors(shown, key(layer.name, "figure", "spec"), view.presenter)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def spec_panel(layer: Layer, preset: presets.Preset, cmp: presets.Comparison, ev: Evaluation) -> None:
    """Verdict, tolerance, source and note of the example on screen."""
    with st.container(key=control_key(layer.name, "spec"), border=True):
        st.markdown(f"**{preset.kind}: {preset.title}**")
        if cmp.matches:
            st.success(f"✓ {_sentence(cmp.message)}.", icon=":material/check_circle:")
        else:
            st.error(f"✗ {_sentence(cmp.message)}.", icon=":material/cancel:")
        compared = "TensorRT's output" if ev.output_source == "tensorrt" else "the NumPy reference (no GPU run here)"
        why = f" ({preset.tolerance.why})" if preset.tolerance.why else ""
        st.caption(f"Compared: {compared} · tolerance {cmp.tolerance}{why} · source: {preset.source}")
        if preset.note:  # part of the panel, not an alert of its own: it is about the spec, not the page
            about = (
                "What to look at"
                if preset.is_lesson
                else "About the table"
                if preset.hand_derived
                else "About the spec's table"
            )
            st.markdown(f":material/edit_note: **{about}:** {preset.note}")


# -- downloads ---------------------------------------------------------------------------------------
@functools.cache
def _export_refused(layer_name: str) -> str | None:
    """Why the layer's build cannot be exported as a script, or None; its source does not change while the
    app runs."""
    try:
        build_source(get_layer(layer_name))
    except Exception as exc:  # noqa: BLE001 - a layer whose build cannot be exported: said, not raised
        return f"{type(exc).__name__}: {exc}"
    return None


def _onnx_bytes(layer: Layer, ev: Evaluation) -> bytes:
    from ..onnx.writing import export_model

    return export_model(layer, ev.params, ev.shapes).SerializeToString()  # every input's shape


def downloads(layer: Layer, ev: Evaluation) -> None:
    """The configuration on screen as a Python script, its input and output as .npy and .csv. Every file is
    made when its button is clicked, not on every change."""
    failure = _export_refused(layer.name)
    name = config_name(layer, ev.params, ev.shapes)  # the files say which configuration they hold
    with st.container(key=control_key(layer.name, "downloads"), horizontal=True, gap="small", wrap=True):
        if failure is None:
            st.download_button(
                "Download Python script",
                functools.partial(export_script, layer.name, ev.params, ev.inputs or ev.input),
                file_name=f"trt_{name}.py",
                mime="text/x-python",
                icon=":material/code:",
                on_click="ignore",
                key=key(layer.name, "download", "script"),
                help="A standalone script that builds exactly this configuration with TensorRT "
                "and, where a GPU runs it, executes it and checks the NumPy reference.",
            )
        st.download_button(
            "ONNX model",
            functools.partial(_onnx_bytes, layer, ev),
            file_name=f"{name}.onnx",
            mime="application/octet-stream",
            icon=":material/hub:",
            on_click="ignore",
            key=key(layer.name, "download", "onnx"),
            help="This configuration as an ONNX model (float32; python -m playground run --onnx reopens it exactly).",
        )
        for which, t in (("input", ev.input), ("output", ev.output)):
            st.download_button(
                f"{which} .npy",
                functools.partial(to_npy_bytes, t),
                file_name=f"{name}--{which}.npy",
                mime="application/octet-stream",
                icon=":material/download:",
                on_click="ignore",
                key=key(layer.name, "download", which, "npy"),
            )
            st.download_button(
                f"{which} .csv",
                functools.partial(to_csv, t),
                file_name=f"{name}--{which}.csv",
                mime="text/csv",
                icon=":material/table:",
                on_click="ignore",
                key=key(layer.name, "download", which, "csv"),
            )
    if failure:
        st.caption(f"No script export for this configuration: {failure}")
