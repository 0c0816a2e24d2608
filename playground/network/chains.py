"""The starter chains, each with its note: the seeds' lessons about networks, built as one engine.

Each is declared once here; the chain page lists them, the CLI runs them by their layers and `--set` keys
(`Starter.cli`), and the tests hold each note's claims to a real TensorRT-RTX build.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..base.inputs import centered_ramp, tile_pattern
from ..layers.prelu import FUSION_NOTE

LEAKY_DOC = "001_59716ba8d3a90fcb.txt"  # the seeds' leaky ReLU from Scale, ReLU, Scale and an ElementWise SUM
CONV_INPUT = (1, 1, 6, 9)  # the convolution spec's input; its Sobel kernel gives both signs, so activations show


@dataclass(frozen=True)
class Starter:
    name: str
    title: str
    layers: tuple[str, ...]
    params: dict  # {"KEY.PARAM": value}, as --set and the page's URL spell them
    note: str
    input_shape: tuple[int, ...]
    pattern: Callable[[tuple], np.ndarray] = field(default=tile_pattern, compare=False)

    def input(self) -> np.ndarray:
        return self.pattern(self.input_shape)

    def cli(self) -> list[str]:
        """`run` arguments for it (the input is the first layer's example; the starter's own pattern may differ); a
        chain of one layer is that layer's own run, its parameters without the key."""
        one = len(self.layers) == 1
        return ["+".join(self.layers)] + [
            a for k, v in self.params.items() for a in ("--set", f"{k.partition('.')[2] if one else k}={v}")
        ]


SOBEL = {"convolution.kernel": "sobel_w"}

STARTERS: tuple[Starter, ...] = (
    Starter(
        "leaky_by_hand",
        "Leaky ReLU by hand: Scale, ReLU, Scale, ElementWise SUM",
        ("scale", "activation", "scale", "elementwise"),
        {
            "scale.scale": 0.1,
            "scale.shift": 0,
            "activation.from": "input",
            "activation.type": "RELU",
            "scale2.scale": 0.9,
            "scale2.shift": 0,
            "elementwise.from.b": "scale",
            "elementwise.operation": "SUM",
        },
        f"The seeds' construction ({LEAKY_DOC}): x·0.1 and ReLU(x)·0.9, summed. Four network layers, and "
        "TensorRT-RTX builds them into one pointwise kernel: the same output as LEAKY_RELU, and as many kernels.",
        (1, 1, 3, 3),
        centered_ramp,
    ),
    Starter(
        "leaky_activation",
        "Leaky ReLU as one Activation",
        ("activation",),
        {"activation.type": "LEAKY_RELU", "activation.alpha": 0.1},
        "ActivationType.LEAKY_RELU with alpha 0.1: one network layer, one kernel, the same output as the "
        "construction by hand.",
        (1, 1, 3, 3),
        centered_ramp,
    ),
    Starter(
        "conv_relu",
        "Convolution → ReLU",
        ("convolution", "activation"),
        {**SOBEL, "activation.type": "RELU"},
        "The ReLU folds into the convolution: the convolution's engine layer computes both; the other engine "
        "layers only move data into the convolution's layout and back.",
        CONV_INPUT,
    ),
    Starter(
        "conv_prelu",
        "Convolution → PReLU",
        ("convolution", "prelu"),
        {**SOBEL, "prelu.granularity": "tensor", "prelu.slopes": 0.1},
        f"The seeds' warning, shown by TensorRT itself: {FUSION_NOTE} Here the PReLU keeps an engine layer of "
        "its own after the convolution.",
        CONV_INPUT,
    ),
    Starter(
        "conv_leaky_relu",
        "Convolution → LEAKY_RELU",
        ("convolution", "activation"),
        {**SOBEL, "activation.type": "LEAKY_RELU", "activation.alpha": 0.1},
        "LEAKY_RELU does not fold into the convolution as RELU does: it keeps a kernel of its own after it.",
        CONV_INPUT,
    ),
    Starter(
        "conv_gelu",
        "Convolution → GELU",
        ("convolution", "activation"),
        {**SOBEL, "activation.type": "GELU_ERF"},
        "GELU (erf) keeps a kernel of its own after the convolution, as LEAKY_RELU does.",
        CONV_INPUT,
    ),
    Starter(
        "conv_bn_relu",
        "Convolution → BatchNorm as Scale (CHANNEL) → ReLU",
        ("convolution", "scale", "activation"),
        {
            **SOBEL,
            "convolution.num_output_maps": 2,
            "scale.mode": "CHANNEL",
            "scale.scale": "0.5,2",
            "scale.shift": "1,-1",
            "activation.type": "RELU",
        },
        "A BatchNorm folded into a per-channel Scale. The Scale and the ReLU become one pointwise kernel after "
        "the convolution: unlike a ReLU alone, they do not fold into the convolution's own engine layer.",
        CONV_INPUT,
    ),
    Starter(
        "conv_residual_relu",
        "Convolution → ElementWise SUM with the input (a residual) → ReLU",
        ("convolution", "elementwise", "activation"),
        {**SOBEL, "convolution.padding_nd": "1,1", "elementwise.operation": "SUM", "activation.type": "RELU"},
        "The ElementWise adds the chain's input to the convolution's output (padding 1 keeps the shape), then a "
        "ReLU: both fold into the convolution's engine layer.",
        CONV_INPUT,
    ),
    Starter(
        "conv_int8_relu",
        "Q/DQ → Convolution (INT8) → ReLU",
        ("convolution", "activation"),
        {**SOBEL, "convolution.precision": "INT8", "convolution.quantize_scale": 0, "activation.type": "RELU"},
        "Explicit quantization: a quantize/dequantize pair on the input and on the weights (scale from the data). "
        "The ReLU still folds into the INT8 convolution; a kernel before it quantizes the input.",
        CONV_INPUT,
    ),
    Starter(
        "conv_int8_qdq_relu",
        "Q/DQ → Convolution (INT8) → Q/DQ → ReLU",
        ("convolution", "activation"),
        {
            **SOBEL,
            "convolution.precision": "INT8",
            "convolution.quantize_scale": 0,
            "activation.type": "RELU",
            "activation.precision": "INT8",
            "activation.quantize_scale": 0,
        },
        "The same with a quantize/dequantize pair between the convolution and its ReLU: where Q/DQ lies decides "
        "what fuses, and this pair keeps the ReLU out of the convolution, in a kernel of its own with the "
        "quantization.",
        CONV_INPUT,
    ),
    Starter(
        "shuffle_shuffle",
        "Shuffle → Shuffle: a transpose and its inverse",
        ("shuffle", "shuffle"),
        {"shuffle.first_transpose": "0,1,3,2", "shuffle2.first_transpose": "0,1,3,2"},
        "Two transposes that undo each other: the engine has one Move and no layer that names either Shuffle.",
        (1, 2, 3, 4),
        centered_ramp,
    ),
)


def find(name: str) -> Starter:
    for s in STARTERS:
        if s.name == name:
            return s
    raise KeyError(f"no starter chain {name!r}; there are " + ", ".join(s.name for s in STARTERS))
