"""Every layer of the playground, each declared once in its own module."""
from __future__ import annotations

from ..layer import Layer
from . import activation, convolution, leaky_relu, prelu, scale

LAYERS: dict[str, Layer] = {m.LAYER.name: m.LAYER for m in (activation, prelu, leaky_relu, scale, convolution)}


def get_layer(name: str) -> Layer:
    try:
        return LAYERS[name]
    except KeyError:
        raise KeyError(f"unknown layer {name!r}; choose one of {', '.join(LAYERS)}") from None
