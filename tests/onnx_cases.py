"""ONNX test models, made with onnx.helper: a table of nodes for every mapped op and attribute, a table of nodes
the layers must refuse (with the attribute the message names), and hostile models."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(7)


def weights(*shape) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def node_model(
    op: str, x_shape, consts: dict | None = None, inputs: list[str] | None = None, opset: int = 17, **attrs
) -> onnx.ModelProto:
    """One node reading "x" (then the named constants, "" for an omitted input) into "y", whose shape ONNX's
    shape inference writes (the checker wants one on a graph output)."""
    consts = consts or {}
    inputs = ["x"] + (inputs if inputs is not None else list(consts))
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()]
    node = helper.make_node(op, inputs, ["y"], name=f"{op.lower()}_node", **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return onnx.shape_inference.infer_shapes(model)


I64 = lambda *v: np.array(v, np.int64)  # noqa: E731
F32 = lambda *v: np.array(v, np.float32)  # noqa: E731

# (id, layer it opens as, model): every mapped op and attribute, each checked against ONNX Runtime.
MAPPED = [
    ("conv_basic", "convolution", lambda: node_model("Conv", (1, 3, 8, 8), {"w": weights(4, 3, 3, 3)})),
    (
        "conv_bias_pads_strides",
        "convolution",
        lambda: node_model(
            "Conv", (1, 3, 9, 9), {"w": weights(4, 3, 3, 3), "b": weights(4)}, pads=[1, 0, 2, 1], strides=[2, 3]
        ),
    ),
    (
        "conv_dilations_group",
        "convolution",
        lambda: node_model("Conv", (1, 4, 9, 9), {"w": weights(6, 2, 3, 3)}, dilations=[2, 1], group=2),
    ),
    (
        "conv_same_upper",
        "convolution",
        lambda: node_model("Conv", (1, 2, 7, 8), {"w": weights(3, 2, 4, 3)}, auto_pad="SAME_UPPER", strides=[2, 2]),
    ),
    (
        "conv_same_lower",
        "convolution",
        lambda: node_model("Conv", (1, 2, 7, 8), {"w": weights(3, 2, 4, 4)}, auto_pad="SAME_LOWER", strides=[3, 2]),
    ),
    (
        "conv_valid",
        "convolution",
        lambda: node_model("Conv", (1, 2, 7, 8), {"w": weights(3, 2, 2, 2)}, auto_pad="VALID", kernel_shape=[2, 2]),
    ),
    (
        "conv1d",
        "convolution",
        lambda: node_model("Conv", (2, 3, 11), {"w": weights(5, 3, 3)}, pads=[1, 2], strides=[2], dilations=[2]),
    ),
    (
        "conv3d",
        "convolution",
        lambda: node_model("Conv", (1, 2, 4, 5, 6), {"w": weights(2, 2, 2, 3, 3)}, pads=[0, 1, 1, 1, 1, 0]),
    ),
    ("conv_constant_node_weights", "convolution", lambda: _with_constant_weights()),
    (
        "conv_resnet_sized",
        "convolution",
        lambda: node_model("Conv", ("N", 64, 14, 14), {"w": weights(256, 64, 1, 1), "b": weights(256)}),
    ),
    (
        "convtranspose_basic",
        "deconvolution",
        lambda: node_model("ConvTranspose", (1, 2, 4, 5), {"w": weights(2, 3, 3, 3)}),
    ),
    (
        "convtranspose_strides_pads",
        "deconvolution",
        lambda: node_model(
            "ConvTranspose",
            (1, 2, 4, 5),
            {"w": weights(2, 3, 3, 3), "b": weights(3)},
            strides=[2, 2],
            pads=[1, 1, 1, 1],
        ),
    ),
    (
        "convtranspose_output_padding",
        "deconvolution",
        lambda: node_model(
            "ConvTranspose",
            (1, 2, 4, 5),
            {"w": weights(2, 3, 3, 3)},
            strides=[2, 2],
            pads=[1, 1, 1, 1],
            output_padding=[1, 1],
        ),
    ),
    (
        "convtranspose_output_shape",
        "deconvolution",
        lambda: node_model(
            "ConvTranspose", (1, 2, 4, 5), {"w": weights(2, 2, 3, 3)}, strides=[2, 2], output_shape=[8, 9]
        ),
    ),
    (
        "convtranspose_same_upper",
        "deconvolution",
        lambda: node_model(
            "ConvTranspose", (1, 2, 4, 5), {"w": weights(2, 2, 4, 4)}, strides=[2, 2], auto_pad="SAME_UPPER"
        ),
    ),
    (
        "convtranspose_group_dilation",
        "deconvolution",
        lambda: node_model("ConvTranspose", (1, 4, 4, 4), {"w": weights(4, 1, 3, 3)}, group=2, dilations=[2, 2]),
    ),
    (
        "convtranspose1d",
        "deconvolution",
        lambda: node_model("ConvTranspose", (1, 2, 6), {"w": weights(2, 2, 3)}, strides=[2]),
    ),
    ("maxpool", "pooling", lambda: node_model("MaxPool", (1, 2, 7, 7), kernel_shape=[3, 3], strides=[2, 2])),
    ("maxpool_pads", "pooling", lambda: node_model("MaxPool", (1, 2, 7, 7), kernel_shape=[3, 2], pads=[1, 0, 1, 1])),
    (
        "maxpool_ceil",
        "pooling",
        lambda: node_model("MaxPool", (1, 1, 8, 8), kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    ),
    (
        "maxpool_same_upper",
        "pooling",
        lambda: node_model("MaxPool", (1, 1, 7, 8), kernel_shape=[2, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
    ),
    ("maxpool1d", "pooling", lambda: node_model("MaxPool", (1, 3, 10), kernel_shape=[3], strides=[2])),
    (
        "averagepool_exclusive",
        "pooling",
        lambda: node_model("AveragePool", (1, 2, 6, 6), kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    ),
    (
        "averagepool_inclusive",
        "pooling",
        lambda: node_model("AveragePool", (1, 2, 6, 6), kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
    ),
    (
        "averagepool3d",
        "pooling",
        lambda: node_model("AveragePool", (1, 1, 4, 4, 4), kernel_shape=[2, 2, 2], strides=[2, 2, 2]),
    ),
    ("globalaveragepool", "reduce", lambda: node_model("GlobalAveragePool", (1, 3, 5, 4))),
    ("globalmaxpool", "reduce", lambda: node_model("GlobalMaxPool", (1, 3, 5, 4))),
    (
        "globalaveragepool_32x24",
        "reduce",
        lambda: node_model("GlobalAveragePool", (1, 3, 32, 24)),
    ),  # a pooling window: ≤ 15
    ("globalmaxpool3d", "reduce", lambda: node_model("GlobalMaxPool", (1, 2, 3, 20, 17))),
    *[
        (
            f"resize_{mode}_{ctm}",
            "resize",
            (
                lambda mode=mode, ctm=ctm: node_model(
                    "Resize",
                    (1, 2, 4, 5),
                    {"sizes": I64(1, 2, 7, 9)},
                    inputs=["", "", "sizes"],
                    mode=mode,
                    coordinate_transformation_mode=ctm,
                )
            ),
        )
        for mode in ("nearest", "linear", "cubic")
        for ctm in ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric")
    ],
    *[
        (
            f"resize_nearest_{rounding}",
            "resize",
            (
                lambda rounding=rounding: node_model(
                    "Resize",
                    (1, 1, 4, 4),
                    {"sizes": I64(1, 1, 7, 6)},
                    inputs=["", "", "sizes"],
                    mode="nearest",
                    nearest_mode=rounding,
                )
            ),
        )
        for rounding in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
    ],
    (
        "resize_cubic_coeff_exclude",
        "resize",
        lambda: node_model(
            "Resize",
            (1, 1, 5, 5),
            {"sizes": I64(1, 1, 8, 3)},
            inputs=["", "", "sizes"],
            mode="cubic",
            cubic_coeff_a=-0.5,
            exclude_outside=1,
        ),
    ),
    (
        "resize_scales_integral",
        "resize",
        lambda: node_model(
            "Resize",
            (1, 2, 4, 5),
            {"scales": F32(1, 1, 2, 3)},
            inputs=["", "scales"],
            mode="linear",
            coordinate_transformation_mode="asymmetric",
        ),
    ),
    (
        "resize_to_one_pixel",
        "resize",
        lambda: node_model(
            "Resize",
            (1, 1, 4, 5),
            {"sizes": I64(1, 1, 1, 3)},
            inputs=["", "", "sizes"],
            mode="linear",
            coordinate_transformation_mode="pytorch_half_pixel",
        ),
    ),
    (
        "slice",
        "slice",
        lambda: node_model("Slice", (1, 2, 6, 7), {"s": I64(1, 2), "e": I64(5, 7), "a": I64(2, 3), "t": I64(2, 2)}),
    ),
    (
        "slice_negative_step",
        "slice",
        lambda: node_model("Slice", (1, 2, 6, 7), {"s": I64(-1), "e": I64(-100), "a": I64(3), "t": I64(-2)}),
    ),
    ("slice_clamped_ends", "slice", lambda: node_model("Slice", (1, 2, 6, 7), {"s": I64(-3, 0), "e": I64(1000, 2)})),
    (
        "slice_opset9_attributes",
        "slice",
        lambda: node_model("Slice", (1, 2, 6, 7), opset=9, starts=[1], ends=[4], axes=[2]),
    ),
    ("slice_rank2", "slice", lambda: node_model("Slice", (5, 8), {"s": I64(1), "e": I64(7), "a": I64(1)})),
    ("transpose", "shuffle", lambda: node_model("Transpose", (1, 2, 3, 4), perm=[0, 3, 1, 2])),
    ("transpose_default", "shuffle", lambda: node_model("Transpose", (2, 3, 4))),
    ("reshape", "shuffle", lambda: node_model("Reshape", (1, 2, 3, 4), {"shape": I64(0, 6, -1)})),
    ("reshape_allowzero", "shuffle", lambda: node_model("Reshape", (1, 2, 3, 4), {"shape": I64(2, 12)}, allowzero=1)),
    ("flatten", "shuffle", lambda: node_model("Flatten", (2, 3, 4, 5), axis=2)),
    ("squeeze", "shuffle", lambda: node_model("Squeeze", (1, 3, 1, 5), {"axes": I64(2)})),
    ("unsqueeze", "shuffle", lambda: node_model("Unsqueeze", (3, 5), {"axes": I64(0, 2)})),
    ("softmax13", "softmax", lambda: node_model("Softmax", (1, 3, 4, 5), axis=1)),
    ("softmax13_default_axis", "softmax", lambda: node_model("Softmax", (2, 10))),
    ("softmax11_last_axis", "softmax", lambda: node_model("Softmax", (1, 3, 4, 5), opset=11, axis=3)),
    ("softmax11_trailing_ones", "softmax", lambda: node_model("Softmax", (4, 10, 1, 1), opset=11)),
    ("prelu_channel", "prelu", lambda: node_model("PRelu", (1, 3, 4, 4), {"slope": weights(3, 1, 1)})),
    ("prelu_scalar", "prelu", lambda: node_model("PRelu", (1, 3, 4, 4), {"slope": F32(0.25)})),
    ("prelu_element", "prelu", lambda: node_model("PRelu", (1, 3, 4, 4), {"slope": weights(3, 4, 4)})),
    ("prelu_last_axis", "prelu", lambda: node_model("PRelu", (2, 6), {"slope": weights(6)})),
    *[
        (f"activation_{op.lower()}", "activation", (lambda op=op, attrs=attrs: node_model(op, (1, 2, 3, 4), **attrs)))
        for op, attrs in (
            ("Relu", {}),
            ("Sigmoid", {}),
            ("Tanh", {}),
            ("LeakyRelu", {"alpha": 0.3}),
            ("Elu", {"alpha": 0.7}),
            ("Selu", {"alpha": 1.5, "gamma": 1.1}),
            ("Softsign", {}),
            ("Softplus", {}),
            ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
            ("ThresholdedRelu", {"alpha": 0.5}),
        )
    ],
    ("activation_gelu", "activation", lambda: node_model("Gelu", (1, 2, 3, 4), opset=20)),
    ("activation_gelu_tanh", "activation", lambda: node_model("Gelu", (1, 2, 3, 4), opset=20, approximate="tanh")),
    ("activation_clip", "activation", lambda: node_model("Clip", (1, 2, 3, 4), {"lo": F32(-0.5), "hi": F32(0.7)})),
    ("activation_clip_opset6", "activation", lambda: node_model("Clip", (1, 2, 3, 4), opset=6, min=0.0, max=6.0)),
    ("activation_relu_rank2", "activation", lambda: node_model("Relu", (3, 7))),
    # identities (TensorRT's parser builds an IIdentityLayer): the shuffle layer doing nothing
    *[
        (f"{op.lower()}_of_one", "shuffle", (lambda op=op: node_model(op, (2, 3, 4))))
        for op in ("Sum", "Max", "Min", "Mean")
    ],
    ("reducesum_noop_13", "shuffle", lambda: node_model("ReduceSum", (2, 3, 4), opset=13, noop_with_empty_axes=1)),
    (
        "reducemax_noop_18_empty_axes",
        "shuffle",
        lambda: node_model("ReduceMax", (1, 2, 3, 4), {"axes": I64()}, opset=18, noop_with_empty_axes=1, keepdims=0),
    ),
    ("reducemean_noop_18", "shuffle", lambda: node_model("ReduceMean", (2, 5), opset=18, noop_with_empty_axes=1)),
    ("reducemean_hw_64x48", "reduce", lambda: node_model("ReduceMean", (1, 4, 64, 48), axes=[2, 3], opset=13)),
    ("identity", "shuffle", lambda: node_model("Identity", (1, 2, 3, 4))),
    ("identity_rank2", "shuffle", lambda: node_model("Identity", (3, 7))),
    ("dropout_opset10_ratio", "shuffle", lambda: node_model("Dropout", (1, 2, 3, 4), opset=10, ratio=0.3)),
    ("dropout_opset13", "shuffle", lambda: node_model("Dropout", (2, 5), opset=13)),
    (
        "dropout_training_false",
        "shuffle",
        lambda: node_model("Dropout", (1, 2, 3, 4), {"r": np.float32(0.7), "t": np.array(False)}, opset=13),
    ),
    ("dropout_mask_unread", "shuffle", lambda: _dropout(mask_out=False, mask_read=False)),
]

# The rules ONNX and TensorRT's layers differ by: (id, model, the rule's first words). ONNX Runtime disagrees here.
DIFFERING = [
    (
        "maxpool_ceil_drops_window",
        lambda: node_model(
            "MaxPool", (1, 1, 3, 3), kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1
        ),
        "ceil_mode",
    ),
    (
        "resize_scales_not_lengths",
        lambda: node_model(
            "Resize",
            (1, 1, 4, 4),
            {"scales": F32(1, 1, 1.999, 1.999)},
            inputs=["", "scales"],
            mode="linear",
            coordinate_transformation_mode="asymmetric",
        ),
        "scales",
    ),
    (
        "clip_min_above_max",
        lambda: node_model("Clip", (1, 1, 2, 3), {"lo": F32(1.0), "hi": F32(-1.0)}),
        "Clip with min > max",
    ),
]

# (id, model, the attribute or input the message names)
REFUSED = [
    (
        "maxpool_dilations",
        lambda: node_model("MaxPool", (1, 1, 8, 8), kernel_shape=[2, 2], dilations=[2, 2]),
        "dilations",
    ),
    ("maxpool_indices", lambda: _two_outputs(), "Indices"),
    (
        "resize_tf_crop",
        lambda: node_model(
            "Resize",
            (1, 1, 4, 4),
            {"roi": F32(0, 0, 0, 0, 1, 1, 1, 1), "sizes": I64(1, 1, 8, 8)},
            inputs=["roi", "", "sizes"],
            coordinate_transformation_mode="tf_crop_and_resize",
        ),
        "coordinate_transformation_mode",
    ),
    (
        "resize_antialias",
        lambda: node_model(
            "Resize",
            (1, 1, 4, 4),
            {"sizes": I64(1, 1, 2, 2)},
            inputs=["", "", "sizes"],
            opset=18,
            mode="linear",
            antialias=1,
        ),
        "antialias",
    ),
    (
        "resize_channels",
        lambda: node_model("Resize", (1, 2, 4, 4), {"sizes": I64(1, 4, 4, 4)}, inputs=["", "", "sizes"]),
        "sizes",
    ),
    ("resize_opset10", lambda: node_model("Resize", (1, 1, 4, 4), {"scales": F32(1, 1, 2, 2)}, opset=10), "opset"),
    ("softmax11_flattening", lambda: node_model("Softmax", (1, 3, 4, 5), opset=11, axis=1), "axis"),
    (
        "convtranspose_output_padding_beyond",
        lambda: node_model(
            "ConvTranspose", (1, 2, 4, 5), {"w": weights(2, 3, 3, 3)}, strides=[2, 2], output_padding=[1, 1]
        ),
        "output_padding",
    ),
    ("conv_weights_not_constant", lambda: _weights_from_input(), "W"),
    ("clip_unbounded", lambda: node_model("Clip", (1, 1, 2, 3), {"lo": F32(0.0)}), "max"),
    (
        "dropout_training_true",
        lambda: node_model("Dropout", (1, 2, 3), {"r": np.float32(0.5), "t": np.array(True)}),
        "training_mode",
    ),
    ("dropout_training_input", lambda: _dropout(training_input=True), "training_mode"),
    # before opset 7 is_test says inference, and its default (0) trains
    ("dropout_opset6_is_test_0", lambda: node_model("Dropout", (1, 2, 3), opset=6, is_test=0), "is_test"),
    ("dropout_opset6_is_test_absent", lambda: node_model("Dropout", (1, 2, 3), opset=6, ratio=0.2), "is_test"),
    ("dropout_mask_an_output", lambda: _dropout(mask_out=True, mask_read=False), "mask"),
    ("dropout_mask_read", lambda: _dropout(mask_out=False, mask_read=True), "mask"),
    ("hardmax_no_layer", lambda: node_model("Hardmax", (2, 3)), "op_type"),
    ("conv_rank6", lambda: node_model("Relu", (1, 1, 1, 1, 1, 2)), "input"),
    ("conv_kernel_beyond_budget", lambda: node_model("Conv", (1, 64, 64, 64), {"w": weights(64, 64, 5, 5)}), "output"),
]


def _with_constant_weights() -> onnx.ModelProto:
    """A Conv whose W comes from a Constant node, not an initializer."""
    w = weights(2, 1, 3, 3)
    nodes = [
        helper.make_node("Constant", [], ["w"], value=numpy_helper.from_array(w)),
        helper.make_node("Conv", ["x", "w"], ["y"], name="conv"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 3])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _dropout(mask_out=False, mask_read=False, training_input=False) -> onnx.ModelProto:
    """A Dropout (opset 13) writing y and its mask m: m a graph output, or read by a Cast (then an output), or
    neither; training_mode a graph input where `training_input`."""
    inputs = ["x", "", "t"] if training_input else ["x"]
    nodes = [helper.make_node("Dropout", inputs, ["y", "m"], name="dropout")]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3])]
    if mask_out:
        outputs.append(helper.make_tensor_value_info("m", TensorProto.BOOL, [1, 2, 3]))
    if mask_read:
        nodes.append(helper.make_node("Cast", ["m"], ["mf"], name="mask_as_float", to=TensorProto.FLOAT))
        outputs.append(helper.make_tensor_value_info("mf", TensorProto.FLOAT, [1, 2, 3]))
    graph_inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3])]
    if training_input:
        graph_inputs.append(helper.make_tensor_value_info("t", TensorProto.BOOL, []))
    graph = helper.make_graph(nodes, "g", graph_inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _two_outputs() -> onnx.ModelProto:
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], name="pool", kernel_shape=[2, 2])
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 3, 3]),
            helper.make_tensor_value_info("i", TensorProto.INT64, [1, 1, 3, 3]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _weights_from_input() -> onnx.ModelProto:
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv")
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5]),
            helper.make_tensor_value_info("w", TensorProto.FLOAT, [1, 1, 3, 3]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 3, 3])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# -- hostile models: (id, bytes, words the refusal says) ---------------------------------------------------------
def _relu_model() -> onnx.ModelProto:
    return node_model("Relu", (1, 1, 2, 2))


def _huge_declared() -> bytes:
    m = node_model("PRelu", (1, 1, 2, 2), {"slope": F32(0.1)})
    t = m.graph.initializer[0]
    t.dims[:] = [1 << 20, 1 << 20]  # 10^12 values declared, four bytes given
    return m.SerializeToString()


def _external_data() -> bytes:
    m = node_model("PRelu", (1, 1, 2, 2), {"slope": F32(0.1)})
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.ClearField("float_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="/etc/passwd")
    return m.SerializeToString()


def _cycle() -> bytes:
    nodes = [helper.make_node("Relu", ["b"], ["a"], name="one"), helper.make_node("Relu", ["a"], ["b"], name="two")]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 1, 2, 2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _unknown_domain() -> bytes:
    node = helper.make_node("Mystery", ["x"], ["y"], name="mystery", domain="com.example")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 2, 2])],
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)]
    ).SerializeToString()


HOSTILE = [
    ("huge_declared_tensor", _huge_declared, "budget"),
    ("external_data_path", _external_data, "external file"),
    ("cycle", _cycle, "onnx.checker"),
    ("truncated", lambda: _relu_model().SerializeToString()[:-9], "not an ONNX model"),
    ("random_bytes", lambda: bytes(RNG.integers(0, 256, 4096, dtype=np.uint8)), "not an ONNX model"),
    ("empty", lambda: b"", "no nodes"),
]
UNKNOWN_DOMAIN = _unknown_domain
