"""The page's keys, without Streamlit: widget keys (each one is its URL query parameter), the containers
`hide` can hide, and the CSS selector Streamlit gives a keyed element (for the page's own
scripts and the browser tests). The naming is described in state.py."""

from __future__ import annotations

import re

VIEW_CELL_RANGE = (8, 160)  # view.cell's px
COMPARE_OFF = "off"  # no second precision (links of earlier releases spell it)


def key(layer: str, *parts) -> str:
    return ".".join([layer, *map(str, parts)])


def key_selector(key: str) -> str:
    """CSS selector of the element container Streamlit draws for a widget/container `key`:
    Streamlit (1.67) adds the class `st-key-<key>` with every character outside [A-Za-z0-9_-]
    replaced by "-" (so "convolution.stride_nd.h" -> ".st-key-convolution-stride_nd-h")."""
    return ".st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key.strip())


def control_key(layer: str, name: str) -> str:
    """The key of the container around a control that `?hide=name` can hide."""
    return f"ctl.{layer}.{name}"
