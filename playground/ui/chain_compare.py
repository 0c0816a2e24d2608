"""Two chains side by side on the chain page (/chain?starter=conv_relu&compare=conv_prelu): the page's chain in the
left column, the compared one in the right, each its own stage on the same input, each with its flow and its engine
boxes, so what fused in each is read at a glance. `compare` names a starter chain, or layers (`convolution,prelu`)
with their defaults; the compared stage's edits stay in its column (the address is the left chain's)."""

from __future__ import annotations

import streamlit as st

from ..base.errors import ValidationError
from ..network import chain as C
from ..network import chains
from ..serve import chain_address as A
from .messages import inert

KEY = "compare"  # the page's address key
SLOT = "-compare"  # the compared stage's slot, token and component key, beside the page's own
PICKER = "chain.compare_with"  # the sidebar picker's widget key


def wanted() -> str | None:
    """The address's compare key, where it has one."""
    v = str(st.query_params.get(KEY, "")).strip()
    return v[:200] or None


def address_of(text: str) -> A.Address:
    """The compared chain's address: a starter's by its name, else the layers it lists (ValidationError naming
    `compare` and the rule where it is neither)."""
    try:
        return A.from_query({A.STARTER_KEY: chains.find(text).name})
    except KeyError:
        pass
    try:
        names = C.parse_names(text, ",")
    except ValidationError as exc:
        starters = ", ".join(s.name for s in chains.STARTERS)
        raise ValidationError(
            C.CHAIN, KEY, f"must name a starter chain ({starters}) or layers separated by ','; {exc.rule}", text
        ) from None
    return A.from_query({A.LAYERS_KEY: ",".join(names)})


def columns(text: str | None):
    """(where the page's stage goes, where the compared one goes or None)."""
    if not text:
        return st.container(), None
    left, right = st.columns(2, gap="medium")
    left.markdown("**This chain**")  # the two stages start on one line, the right one under its own words
    return left, right


def compared(text: str, x):
    """(spec, address, base chain) of the compared chain on the page's input `x`, or None with its refusal shown
    where it cannot be (its name, or its layers on this input)."""
    from ..serve import chainview

    try:
        address = address_of(text)
        spec, _ = chainview.spec_of(address)
        base = C.resolve(address.names, address.raw(), x.shape)
    except ValidationError as exc:
        st.warning(f"{KEY}: {inert(exc)}", icon=":material/link_off:")
        return None
    s = chains.find(text) if text in {c.name for c in chains.STARTERS} else None
    st.markdown(f"**Compared with:** {s.title if s else ' → '.join(address.names)}")
    return spec, address, base


def picker(current: str | None) -> None:
    """The sidebar's choice of a starter to compare the page's chain with (none: the page's chain alone)."""
    names = [s.name for s in chains.STARTERS]

    def pick():
        chosen = st.session_state[PICKER]
        if chosen:
            st.query_params[KEY] = chosen
        elif KEY in st.query_params:
            del st.query_params[KEY]

    st.selectbox(
        "Compare side by side with",
        [""] + names,
        index=names.index(current) + 1 if current in names else 0,
        format_func=lambda n: chains.find(n).title if n else "— nothing: this chain alone —",
        key=PICKER,
        on_change=pick,
    )
