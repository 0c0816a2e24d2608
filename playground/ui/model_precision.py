"""The model page's precision (`?precision=FP16`): `model --precision`'s answer (playground.model.precision_model)
drawn on the page's graph, each box coloured by its accumulated error against the policy, the first divergence
marked, and the keep-FP32 plan stated."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from ..base.errors import ValidationError
from ..base.memo import Memo
from ..base.numbers import compact
from ..model import precision_model as pm
from ..onnx import reading
from .keys import MODEL, NODE, ONNX, REAL
from .messages import inert

PRECISION = "precision"  # the URL's key
CHOICES = ("FP32", *pm.PRECISIONS)
_answers = Memo(8)  # by model digest and precision


def chosen() -> str:
    """The precision the page shows (the URL's, where it is one of CHOICES), and its selector."""
    value = str(st.query_params.get(PRECISION) or "FP32")
    if value not in CHOICES:
        st.warning(inert(f"URL parameter precision: {value[:20]!r} is not one of {', '.join(CHOICES)}; FP32 shown"))
        value = "FP32"
    picked = st.selectbox(
        "Precision",
        CHOICES,
        index=CHOICES.index(value),
        key="model.precision",
        format_func=lambda c: f"Precision: {c}",
        label_visibility="collapsed",  # its options say it: the counts' line keeps one line's height
        help="FP32: each node against ONNX Runtime. FP16 … FP8: every node in that precision, composed through the "
        "model; each node coloured by its accumulated error against the FP32 run (cosine ≥ 0.997, no cell lost).",
    )
    if picked == "FP32":
        st.query_params.pop(PRECISION, None)
    else:
        st.query_params[PRECISION] = picked
    return picked


def analysis(digest: str, name: str, precision: str) -> dict | None:
    """`model --precision`'s answer on the seeded input, made once per model and precision; None, said, where the
    model cannot be analysed (ONNX Runtime refuses it: the FP32 view stays)."""
    key = (digest, name, precision)
    answer = _answers.get(key)
    if answer is None:
        with st.status(f"Every node in {precision}", expanded=False) as status:

            def step(text: str) -> None:
                status.update(label=text + " …")

            try:
                answer = pm.analyze(reading.remembered(digest), name, None, precision, progress=step)
            except ValidationError as exc:
                status.update(label=f"{precision}: not analysed", state="error")
                st.error(inert(f"{precision}: {exc}"), icon=":material/error:")
                return None
            status.update(label=f"{precision} analysed in {answer['seconds']} s", state="complete")
        _answers.put(key, answer)
    return answer


def _figures(m: dict | None) -> str:
    if not m or "error" in m or m.get("shape_differs"):
        return "—"
    cos = "cells lost" if m["cosine"] is None else f"cosine {m['cosine']:.5f}"
    return f"{cos}, max |diff| {compact(m['max_abs'])}" + (f", {m['nonfinite']} non-finite" if m["nonfinite"] else "")


def which() -> str:
    """The error the graph is coloured by: "accumulated" (the model composed in the precision) or, toggled,
    "local" (each node alone on its real FP32 input)."""
    local = st.toggle(
        "Colour by local error", key="model.precision_local", help="each node alone in the precision, on its real input"
    )
    return "local" if local else "accumulated"


def recolour(data: dict, answer: dict, by: str = "accumulated") -> dict:
    """The graph's data with each opened node's status its `by` error ("accumulated" or "local") against the
    policy (green holds, red crosses), its detail both errors, the keep-FP32 plan's nodes marked `kept`, and the
    first divergence marked (a copy: the FP32 graph's data is kept for the page's reruns)."""
    p = answer["precision"]
    # its own key: the graph redraws when the precision or the error it is coloured by changes
    data = {**data, "key": f"{data['key']}|{p['precision']}|{by}", "nodes": [dict(box) for box in data["nodes"]]}
    from ..serve.as_chain import link_in_precision  # the engine outlines' chains open in the precision too

    data["groups"] = [g | {"chain": link_in_precision(g.get("chain"), p["precision"])} for g in data.get("groups", [])]
    policy = pm.Policy(p["policy"]["min_cosine"])
    kept = set(p["keep_fp32"])
    nodes = {n["name"]: n for n in answer["nodes"]}
    for box in data["nodes"]:
        n = nodes.get(box["id"])
        if not n or not n.get("precision"):
            continue
        e = n["precision"]
        box["status"] = "differs" if policy.crosses(e[by]) else "agrees"
        if box.get("href"):  # the node's stage in the precision (the URL holds what differs from the node)
            box["href"] += "&" + urlencode(pm.page_params(p["precision"]))  # INT8/FP8: the scale from the data
        box["detail"] = f"{p['precision']}: accumulated {_figures(e['accumulated'])}; local {_figures(e['local'])}" + (
            "; kept in FP32 by the plan" if n["name"] in kept else ""
        )
        box["kept"] = n["name"] in kept  # the graph outlines it (and a closed group that holds it)
    data["first"] = (p["first_divergence"] or {}).get("node")
    data["first_label"] = f"First divergence in {p['precision']}"
    return data


def summary(answer: dict, digest: str, name: str, pages: dict) -> None:
    """The first divergence (a link to its node), the plan and the output with and without it."""
    p = answer["precision"]
    first = p["first_divergence"]
    agrees = all(o["agrees"] for o in answer["output"].values())
    st.text(
        f"The model composed by the layers in FP32 {'agrees' if agrees else 'DIFFERS'} with ONNX Runtime "
        "(Polygraphy's elementwise check, 1e-5)."
    )
    if first:
        n = next(n for n in answer["nodes"] if n["name"] == first["node"])
        st.error(
            inert(
                f"First divergence in {p['precision']}: {first['node']} · {first['op_type']} ({first['metric']}; "
                + ("its own local error crosses too" if first["local_explains"] else "inherited from its input")
                + f"): {_figures(n['precision']['accumulated'])}."
            ),
            icon=":material/report:",
        )
        st.page_link(
            pages[n["layer"]],
            label=inert(f"Open {first['node']} on its real input in {p['precision']}"),
            icon=":material/arrow_forward:",
            query_params={ONNX: digest, NODE: first["node"], MODEL: name, REAL: "1", **pm.page_params(p["precision"])},
        )
    else:
        st.success(f"No node diverges in {p['precision']} (cosine ≥ {p['policy']['min_cosine']}, no cell lost).")
    meets = p["output"]["meets_with_plan"]
    st.text(
        inert(
            f"Keep in FP32 ({len(p['keep_fp32'])}, greedy by measured effect): {', '.join(p['keep_fp32']) or 'nothing'}"
            f"; the output {'meets' if meets else 'does not meet'} the policy with it."
        )
    )
