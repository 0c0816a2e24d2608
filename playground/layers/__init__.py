"""Every layer of the playground, each declared once in its own module of this package.

A module here that defines `LAYER` is a layer: it is found, not listed, so adding a layer is adding its file. A
module whose name starts with "_" is a helper the layers import themselves (`_window.py`: the windowed layers'
geometry), never taken for a layer.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..base.layer import Layer


def is_layer(module: str) -> bool:
    """Whether the module of this package named `module` is a layer's (discovery imports it), not a helper's."""
    return not module.startswith("_")


def _discovered() -> dict[str, Layer]:
    found = [
        importlib.import_module(f"{__name__}.{m.name}") for m in pkgutil.iter_modules(__path__) if is_layer(m.name)
    ]
    layers = sorted(
        (m.LAYER for m in found if isinstance(getattr(m, "LAYER", None), Layer)),
        key=lambda layer: (layer.order, layer.name),
    )
    return {layer.name: layer for layer in layers}


LAYERS: dict[str, Layer] = _discovered()


def get_layer(name: str) -> Layer:
    try:
        return LAYERS[name]
    except KeyError:
        raise KeyError(f"unknown layer {name!r}; choose one of {', '.join(LAYERS)}") from None
