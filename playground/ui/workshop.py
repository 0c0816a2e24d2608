"""Workshop aids on a layer page: the spec examples (pick one; see the spec's documented output beside
the computed one, and whether they agree) and downloads (tensors as .npy and .csv, the current
configuration as a standalone TensorRT script)."""
from __future__ import annotations

import functools

import streamlit as st

from .. import presets
from ..core import Evaluation
from ..export import build_source, config_name, export_script
from ..inputs import to_csv, to_npy_bytes
from ..layer import Layer
from ..layers import get_layer
from . import links
from .keys import control_key, key
from .state import PageState, badge

NONE = ""  # the picker's entry for a configuration that is no spec example


# -- which spec example is on screen ---------------------------------------------------------------
def matching(layer: Layer, ev: Evaluation | None) -> list[presets.Preset]:
    return [] if ev is None else presets.matching(layer.name, ev.params, ev.input)


def current_preset(layer: Layer, ev: Evaluation | None) -> presets.Preset | None:
    """The spec example on screen: the one last chosen if the configuration still is it, else the first
    that the configuration equals (several examples can share one, e.g. an alias spelling)."""
    found = matching(layer, ev)
    chosen = PageState(layer.name).get("preset_chosen")
    return next((p for p in found if p.name == chosen), found[0] if found else None)




def chosen_now(layer: Layer) -> bool:
    """Whether a spec example was picked since the last run (once): it may have set the input controls."""
    return bool(PageState(layer.name).pop("preset_chosen_now", False))


def _chosen(layer: Layer) -> None:
    name = st.session_state.get(key(layer.name, "preset"))
    if not name:
        return
    PageState(layer.name).set("preset_chosen_now", True)
    links.apply_preset(layer, presets.find(layer.name, name))
    if links.PRESET_PARAM in st.query_params:  # the widgets' own URL values say it all now
        del st.query_params[links.PRESET_PARAM]


def preset_picker(layer: Layer, preset: presets.Preset | None, cmp: presets.Comparison | None) -> None:
    """The "Spec example" selectbox (derived: it shows the example the configuration is) and its verdict."""
    examples = presets.examples(layer.name)
    if not examples:
        return
    k = key(layer.name, "preset")
    value = preset.name if preset else NONE
    if st.session_state.get(k) != value:
        st.session_state[k] = value
    titles = {p.name: p.title for p in examples}
    with st.container(key=control_key(layer.name, "preset")):
        st.selectbox("Spec example", [NONE, *titles], key=k, on_change=_chosen, args=(layer,), width="stretch",
                     format_func=lambda n: titles.get(n, "Spec example: — your own configuration —"),
                     label_visibility="collapsed",
                     help="Every example of the spec documents, then the precision lessons. Choosing one sets "
                          "every parameter and the input; the spec's documented output (a lesson: the error "
                          "figures it states) is then compared with the computed one (the verdict is beside the "
                          "figures, the spec's table in the Spec example tab).")
    chosen = PageState(layer.name).get("preset_chosen")
    if preset is None and chosen in titles:
        st.caption(f"Modified from the spec example “{titles[chosen]}”: the comparison with the spec is hidden. "
                   "Choose it again to go back to it.")


def demonstrated(layer: Layer, preset: presets.Preset) -> str:
    """The first parameter (in the layer's order) a spec example sets: what the controls panel shows first."""
    return next((n for n in layer.param_names if n in preset.params), layer.param_names[0])


def verdict_badge(preset: presets.Preset, cmp: presets.Comparison) -> str:
    """The spec example's verdict, as badge markdown (state.badge)."""
    what = preset.documented
    if cmp.matches:
        return badge(f"matches {what}", "green", "check_circle")
    return badge(f"differs from {what}", "red", "cancel")


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def spec_panel(layer: Layer, preset: presets.Preset, cmp: presets.Comparison, ev: Evaluation) -> None:
    """Verdict, tolerance, source and note of the spec example on screen."""
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
            about = "What to look at" if preset.is_lesson else "About the table" if preset.hand_derived else \
                "About the spec's table"
            st.markdown(f":material/edit_note: **{about}:** {preset.note}")


# -- downloads ---------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _export_refused(layer_name: str) -> str | None:
    """Why the layer's build cannot be exported as a script, or None; its source does not change while the
    app runs."""
    try:
        build_source(get_layer(layer_name))
    except Exception as exc:  # a layer whose build cannot be exported: said, not raised
        return f"{type(exc).__name__}: {exc}"
    return None


def _onnx_bytes(layer: Layer, ev: Evaluation) -> bytes:
    from ..onnxio import export_model

    return export_model(layer, ev.params, ev.input.shape).SerializeToString()


def downloads(layer: Layer, ev: Evaluation) -> None:
    """The configuration on screen as a Python script, its input and output as .npy and .csv. Every file is
    made when its button is clicked, not on every change."""
    failure = _export_refused(layer.name)
    name = config_name(layer, ev.params, ev.input.shape)  # the files say which configuration they hold
    with st.container(key=control_key(layer.name, "downloads"), horizontal=True, gap="small", wrap=True):
        if failure is None:
            st.download_button("Download Python script", functools.partial(export_script, layer.name, ev.params, ev.input),
                               file_name=f"trt_{name}.py", mime="text/x-python", icon=":material/code:",
                               on_click="ignore", key=key(layer.name, "download", "script"),
                               help="A standalone script that builds exactly this configuration with TensorRT "
                                    "and, where a GPU runs it, executes it and checks the NumPy reference.")
        st.download_button("ONNX model", functools.partial(_onnx_bytes, layer, ev), file_name=f"{name}.onnx",
                           mime="application/octet-stream", icon=":material/hub:", on_click="ignore",
                           key=key(layer.name, "download", "onnx"),
                           help="This configuration as an ONNX model (float32; python -m playground run --onnx "
                                "reopens it exactly).")
        for which, t in (("input", ev.input), ("output", ev.output)):
            st.download_button(f"{which} .npy", functools.partial(to_npy_bytes, t), file_name=f"{name}--{which}.npy",
                               mime="application/octet-stream", icon=":material/download:", on_click="ignore",
                               key=key(layer.name, "download", which, "npy"))
            st.download_button(f"{which} .csv", functools.partial(to_csv, t), file_name=f"{name}--{which}.csv",
                               mime="text/csv", icon=":material/table:", on_click="ignore",
                               key=key(layer.name, "download", which, "csv"))
    if failure:
        st.caption(f"No script export for this configuration: {failure}")
