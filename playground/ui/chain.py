"""The chain page (/chain): 1 to 6 layers on the stage, every tensor along them, and the engine TensorRT built for
the whole.

The page draws the stage once (ui/stage.py's component; chainview.py says the chain to it): each layer's parameters
are its controls (`KEY.PARAM[.AXIS]`), each tensor a figure, and a change goes to the stage's route, never through a
run of this script. The sidebar holds what changes the chain's structure (a starter, the layers in order), each a
page navigation. The address is the page's state (playground.serve.chain_address.Address for the structure, the
stage's keys for the parameters; older links' whole-parameter keys, `convolution.stride_nd=2,2`, still open).
"""

from __future__ import annotations

import hashlib

import streamlit as st

from ..base.errors import PlaygroundError, ValidationError
from ..layers import LAYERS
from ..network import chain as C
from ..network import chains
from ..serve import assets, chainview, protocol, server
from ..serve import chain_address as A
from . import chain_compare, stage
from .messages import guarded, inert
from .page import PRESENTER_CSS, STAGE_CSS
from .view import presenter_on

TOKEN = "chain.stage.token"  # session: the page's seat
STAGE_KEY = "chain.stage"
PAINTED = stage.PAINTED.format(C.CHAIN)  # session: the stage has painted its first figures


def chain_page() -> None:
    guarded(_chain_page)


def _structural(key: str) -> bool:
    """Whether a link's key is the address's (the layers, the input, a source, a whole parameter as older links
    spell it) rather than the stage's per-axis key (`convolution.stride_nd.h`)."""
    parts = key.split(".")
    return len(parts) < 3 or parts[0] == "input" or parts[1] == C.FROM


def _now() -> tuple[A.Address, dict[str, str]]:
    """(the chain's address, the stage's per-axis keys of the link). Where this page's stage has answered, its
    latest chain is the state (the browser's URL holds it; this run's query is the page's as it loaded): what a
    structural change starts from."""
    query = {k: v for k, v in st.query_params.to_dict().items() if k != chain_compare.KEY}
    address = A.from_query({k: v for k, v in query.items() if _structural(k)})
    given = {k: v for k, v in query.items() if not _structural(k)}
    seat = server.SEATS.take(st.session_state.get(TOKEN, ""))
    if seat is not None and seat.chain == chainview.spec_of(address)[0] and seat.chain_ev is not None:
        latest = seat.chain_ev[0].raw()
        address.params = [{k: str(v) for k, v in latest[key].items()} for key in address.keys]
        given = {}
    return address, given


def _write(address: A.Address) -> None:
    """A structural change: the new chain's address into the URL (the view's keys kept), the page runs on it."""
    view = {k: v for k, v in st.query_params.to_dict().items() if k in A.OTHER_KEYS or k == chain_compare.KEY}
    st.query_params.from_dict(address.query() | view)


def _chain_page() -> None:
    presenter = presenter_on()
    st.html(STAGE_CSS + (PRESENTER_CSS if presenter else ""))  # a layer page's layout: the sidebar a drawer
    address, given = _now()
    x = chainview.input_of(address)
    spec, _ = chainview.spec_of(address)
    try:  # the chain the page starts from: the starter's (or the layers' defaults), what a link leaves out means
        base = C.resolve(address.names, _starting(address), x.shape)
    except ValidationError as exc:  # no chain of these layers resolves: the layer list is there to change them
        base = None
        st.error(inert(exc), icon=":material/error:")
    if base is not None:
        known = set(chainview.query_keys(spec, chainview.first_shapes(base)))
        for k in sorted(set(given) - known):
            address.problems.append(f"{k[:60]}: names no parameter of this chain's layers ({', '.join(address.keys)})")
            given.pop(k)
    for problem in address.problems:
        st.warning(inert(problem), icon=":material/link_off:")
    painted = bool(st.session_state.get(PAINTED)) or base is None
    if base is not None:
        left, right = chain_compare.columns(chain_compare.wanted())
        with left:
            _stage(spec, address, given, base, x, presenter, painted, compared=right is not None)
        if right is not None:
            with right:
                other = chain_compare.compared(chain_compare.wanted(), x)
                if other:
                    _stage(other[0], other[1], {}, other[2], x, presenter, True, slot=chain_compare.SLOT)
    if painted:  # the structure's controls, once the stage's first figures are on the screen (its paint's run)
        with st.sidebar:
            _starter_picker(address)
            _layer_list(address)
            chain_compare.picker(chain_compare.wanted())
    starter = _starter(address)
    if starter:
        st.info(f"**{starter.title}.** {starter.note}", icon=":material/school:")
    if address.model and base is not None:
        _from_model(address, x)


def _from_model(address: A.Address, x) -> None:
    """Where a chain opened from a model reads, and whether its engine, as the link opened it, computes the model's
    nodes as the model's engine does (serve.as_chain.fusion), or why not. Its engine is built here, once per link
    (the engine cache keeps it): the stage's own verdict follows each edit."""
    from ..serve import as_chain
    from ..serve.shared import backend, engine_cache

    model = address.model
    where = f"On ONNX Runtime's tensor {model.tensor!r} of the model {model.name} (its seeded inputs)"
    if not model.nodes:
        st.caption(inert(where + "."))
        return
    st.caption(inert(f"{where}: the model's nodes {', '.join(model.nodes)}. {as_chain.folded_text(model.nodes) or ''}"))
    try:
        result = C.evaluate(address.names, address.raw(), x, backend=backend(), cache=engine_cache())
        if result.engine.status not in ("built", "cached"):
            return
        f = as_chain.fusion(as_chain.model_engine(model.digest), model.nodes, result.engine, result.chain.keys)
    except PlaygroundError as exc:  # a refused configuration is named at its control by the stage
        st.warning(inert(str(exc)), icon=":material/link_off:")
        return
    text = "As the link opened it: " + as_chain.fusion_text(f)
    if f["same"] is None:
        st.caption(inert(text))
    elif f["same"]:
        st.success(inert(text), icon=":material/join:")
    else:
        st.warning(inert(text), icon=":material/call_split:")


def _starter(address: A.Address):
    """The starter the link names, where the chain is still its layers."""
    try:
        s = chains.find(str(st.query_params.get(A.STARTER_KEY, "")).strip())
    except KeyError:
        return None
    return s if s.layers == tuple(address.names) else None


def _starting(address: A.Address) -> dict:
    """The raw parameters the page starts from: the starter's and the sources; the link's own values are read over
    them (a key left out of a link is the starter's value)."""
    s = _starter(address)
    start = A.from_query({A.STARTER_KEY: s.name}).params if s else [{} for _ in address.names]
    return {
        key: {**start[i], **{k: v for k, v in address.params[i].items() if k not in _unwired(address.params[i])}}
        for i, key in enumerate(address.keys)
    }


def _stage(spec, address, given, base, x, presenter, painted: bool, slot: str = "", compared: bool = False) -> None:
    """The stage, drawn once: the configuration the address holds (its last good one where it is refused: the
    refusal named at its control), its first answer carried in the page's own message. `slot`: a second stage's
    (chain_compare's), which leaves the address alone; side by side (`compared`, or a slot) the parameters fold."""
    from ..serve.shared import backend, engine_cache

    token = server.SEATS.open(C.CHAIN, x, st.session_state.get(TOKEN + slot), chain=spec)
    st.session_state[TOKEN + slot] = token
    seat = server.SEATS.take(token)
    shapes = chainview.first_shapes(base)
    problem = None
    try:
        linked = C.resolve(address.names, address.raw(), x.shape)  # the link's whole-parameter keys too
        spelled = chainview.query_of(linked)
        raw, resolved = chainview.resolve(spec, spelled | given, x.shape, shapes)
        _per_axis(chainview.whole_keys(spec, shapes), spelled)
    except ValidationError as exc:
        problem = chainview.problem(exc, spec, shapes)
    except protocol.RequestError as exc:
        problem = {"message": str(exc), "keys": [exc.key] if exc.key else []}
    if problem is not None:
        raw, resolved = chainview.resolve(spec, chainview.query_of(base), x.shape, shapes)
    be = backend()
    ev = C.evaluate(spec.names, raw, x, backend=be, cache=engine_cache(), build_engine=be.can_run)
    answer = chainview.answer(spec, resolved, ev, be, digests={C.INPUT: seat.digests["x"]} if seat else None)
    if seat is not None:
        seat.remember_chain(resolved, ev, chainview.first_shapes(resolved))
        seat.keep(protocol.arrays(answer))
    answer = protocol.inline(protocol.within(answer, protocol.INLINE_VALUES))
    answer["finish"] = True  # the engine's verdict and ONNX Runtime's badge follow the first paint
    # the stage keeps its drawing through a run of the page that changed nothing of it (a sidebar's widget)
    identity = hashlib.blake2b(
        f"{token}|{spec}|{x.shape}".encode() + (seat.digests["x"] if seat else b""), digest_size=8
    ).hexdigest()
    with st.container(key="pg-slot-chain" + slot):
        stage._stage_component()(
            key=STAGE_KEY + slot,
            data={
                "epoch": identity,
                "token": token,
                "route": server.ROUTE,
                "planes": server.PLANES_ROUTE,
                "modules": assets.urls(),
                "describe": chainview.describe(spec, base),
                "source": None,
                "query": answer["query"],
                "answer": answer,
                "pick": None,
                "problem": problem,
                "presenter": presenter,
                "compare": None,
                "runs": be.can_run,
                "opinion": True,  # ONNX Runtime's badge of the chain's export, with the engine's verdict
                "hide": ["compare", "preset"] + (["parameters"] if slot or compared else []),
                "public": server.public_url(),
                "qr": server.QR_ROUTE,
                "painted": painted,  # until then the stage says so once (a run that draws the sidebar and menu)
                "settle": False,  # nothing under the stage follows its configuration: no run when the hand rests
                "cell": stage.view_cell(),
                "dropped": {},
                "chain": True,
                "url": not slot,  # a compared chain's edits stay in its column
            },
            on_painted_change=lambda: st.session_state.__setitem__(PAINTED, True),
            width="stretch",
            height="content",
        )


def _per_axis(whole: set[str], spelled: dict[str, str]) -> None:
    """An older link's whole-parameter keys (`convolution.stride_nd=2,2`) written as the stage spells them, per
    axis, before the stage reads the address bar (it takes a key left out for its default)."""
    for k in whole & set(st.query_params):
        del st.query_params[k]
        for axis, v in spelled.items():
            if axis.startswith(k + ".") and axis not in st.query_params:
                st.query_params[axis] = v


def _starter_picker(address: A.Address) -> None:
    names = [s.name for s in chains.STARTERS]
    current = _starter(address)

    def pick():
        chosen = st.session_state["chain.starter"]
        if chosen:  # its link is its name: the page reads the starter's layers and values from it
            view = {k: v for k, v in st.query_params.to_dict().items() if k in A.OTHER_KEYS}
            st.query_params.from_dict({A.STARTER_KEY: chosen} | view)

    st.selectbox(
        "Starter chain",
        [""] + names,
        index=names.index(current.name) + 1 if current else 0,
        format_func=lambda n: chains.find(n).title if n else "— pick one of the seeds' lessons —",
        key="chain.starter",
        on_change=pick,
    )


def _layer_list(address: A.Address) -> None:
    """The layers in order, each with move up, move down and remove; a layer to add at the end."""
    st.subheader("Layers", anchor=False)

    def edit(op: str, i: int) -> None:
        now, _ = _now()  # the stage's latest values, not this run's
        names, params = list(now.names), [_unwired(p) for p in now.params]
        if op == "remove" and len(names) > 1:
            del names[i], params[i]
        elif op in ("up", "down"):
            j = i - 1 if op == "up" else i + 1
            names[i], names[j], params[i], params[j] = names[j], names[i], params[j], params[i]
        _write(A.Address(names, params, now.shape, now.pattern, model=now.model and now.model.unnamed()))

    for i, (key, name) in enumerate(zip(address.keys, address.names)):
        # one row that never wraps: the name takes what the three buttons leave, so a button sits on its layer's line
        row = st.container(horizontal=True, wrap=False, vertical_alignment="center", key=f"chain-layer-{i}")
        row.markdown(f"**{i + 1}. `{key}`** {LAYERS[name].title}", width="stretch")
        last = len(address.names) - 1
        for what, icon, words, off in (
            ("up", "arrow_upward", "Move up", i == 0),
            ("down", "arrow_downward", "Move down", i == last),
            ("remove", "close", "Remove", last == 0),
        ):
            row.button(
                f":material/{icon}:", key=f"chain.{what}.{i}", disabled=off, on_click=edit, args=(what, i), help=words
            )

    def add() -> None:
        name, (now, _) = st.session_state.get("chain.add"), _now()
        if name and len(now.names) < C.MAX_LAYERS:
            _write(
                A.Address(
                    now.names + [name],
                    now.params + [{}],
                    now.shape,
                    now.pattern,
                    model=now.model and now.model.unnamed(),
                )
            )

    row = st.columns([5, 3], vertical_alignment="bottom")
    row[0].selectbox("Add a layer", list(LAYERS), format_func=lambda n: LAYERS[n].title, key="chain.add")
    row[1].button(
        "Add", key="chain.add_button", on_click=add, disabled=len(address.names) >= C.MAX_LAYERS, help="At most 6"
    )


def _unwired(params: dict) -> dict:
    """A layer's parameters as texts, its sources left out where the layers move (each takes its default source in
    its new place; a source kept could name a layer after it)."""
    return {k: str(v) for k, v in params.items() if k != C.FROM and not k.startswith(C.FROM + ".")}
