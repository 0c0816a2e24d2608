"""ONNX's BatchNormalization (inference) opens as the Scale layer in CHANNEL mode: s = γ / √(var + ε), t = β − mean·s."""

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.network.core import evaluate


def _model():
    from onnx_cases import node_model

    consts = {"g": np.float32([1, 2]), "b": np.float32([0, 1]), "m": np.float32([1, -1]), "v": np.float32([4, 0.25])}
    return node_model("BatchNormalization", (1, 2, 2, 2), consts, epsilon=0.0)


def test_batch_normalization_is_a_channel_scale_and_agrees_with_onnxruntime():
    from playground.onnx import opening, reading
    from playground.onnx.opinions import second_opinions

    opened = opening.open_node(reading.load_model(_model().SerializeToString()))
    assert opened.layer.name == "scale" and opened.raw["mode"] == "CHANNEL"
    assert opened.raw["scale"].tolist() == [0.5, 4] and opened.raw["shift"].tolist() == [-0.5, 5]  # 1/√4; 2/√0.25
    x = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2)
    ev = evaluate("scale", opened.raw, opened.to_layer(x), run=False)
    assert ev.output[0, 1].ravel().tolist() == [4 * v + 5 for v in range(4, 8)]
    assert second_opinions(ev, opened)["onnxruntime"]["agrees"] is True


def test_training_mode_is_refused_by_name():
    from playground.base.onnx_map import Node
    from playground.layers.scale import onnx_read

    node = Node(
        "bn",
        "BatchNormalization",
        {"training_mode": 1, "_outputs": 1},
        [None] * 5,
        (1, 2, 2, 2),
        (1, 2, 2, 2),
        15,
        ["x", "g", "b", "m", "v"],
    )
    with pytest.raises(ValidationError, match="training_mode: must be 0"):
        onnx_read(node)
