"""playground.base.reference against the expected outputs printed in /work/shared/seeds (000-004).

The spec tables live once, in playground.network.presets (typed as printed, with the notes on what the
print gets wrong); this file takes them from there and checks the pure-NumPy reference against
them with inputs and kernels built here by hand, independently of the layer declarations. The
tables hold TensorRT's float32 results, so they are compared with rtol=1e-6 (see presets.py for
why values such as 97831.27 or '45678.9' are what float32 gives). Every table agrees with the
arithmetic; the shapes printed in the stride section, '(1,2,7)' and '(1,4,4)', drop two
dimensions: they are (1,1,2,7) and (1,1,4,4).
"""

import itertools
import math
import warnings

import numpy as np
import pytest

from playground.base import reference as ref
from playground.network.presets import find


def close(actual, expected):
    assert actual.dtype == np.float32 and actual.shape == np.shape(expected)
    np.testing.assert_allclose(actual, expected, rtol=1e-6)


def spec_input(c_in=1):
    """004's input: the 3x3 block 1..9 tiled to (1, c_in, 6, 9)."""
    return np.tile(np.arange(1, 10, dtype=np.float32).reshape(3, 3), (c_in, 6 // 3, 9 // 3)).reshape(1, c_in, 6, 9)


def spec_kernel():
    """004's kernel: 1e4 ... 1e-4, so each output digit names the input cell it came from."""
    return np.power(10, range(4, -5, -1), dtype=np.float32).reshape(1, 1, 3, 3)


def spec_conv(**kwargs):
    return ref.convolution(spec_input(), spec_kernel(), np.zeros(1, np.float32), **kwargs)


@pytest.fixture(autouse=True)
def no_warnings():
    """Overflow and NaN are results here, never warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# --- 000 Parametric ReLU ---------------------------------------------------------------


def test_prelu_per_channel_slopes():
    x = np.tile(np.arange(-4, 5, dtype=np.float32).reshape(1, 3, 3), (3, 1, 1)).reshape(1, 3, 3, 3)
    slopes = np.array([0.5, 1, 2], dtype=np.float32).reshape(1, 3, 1, 1)
    close(ref.prelu(x, slopes), find("prelu", "spec_per_channel").expected)  # spec types '-1.5.'


# --- 001 leaky ReLU from Scale + ReLU + Scale + ElementWise SUM ------------------------


def test_leaky_relu_three_ways_agree():
    x = np.concatenate([np.arange(-4, 5, dtype=np.float32), np.random.default_rng(0).normal(0, 100, 100)])
    composed = ref.scale(x, "UNIFORM", None, 0.1, None, channel_axis=0) + ref.scale(
        ref.activation(x, "RELU"), "UNIFORM", None, 0.9, None, channel_axis=0
    )
    close(composed, ref.activation(x, "LEAKY_RELU", alpha=0.1))
    close(ref.prelu(x, 0.1), ref.activation(x, "LEAKY_RELU", alpha=0.1))


# --- 002 Activation ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "type_, alpha, beta, preset",
    [
        ("RELU", 0, 0, "relu"),
        ("CLIP", -2, 2, "clip"),
    ],
)
def test_activation_spec_example(type_, alpha, beta, preset):
    x = np.arange(-4, 5, dtype=np.float32).reshape(1, 1, 3, 3)
    close(ref.activation(x, type_, alpha, beta), find("activation", preset).expected)


def test_gelu_erf_close_to_gelu_tanh():
    x = np.linspace(-6, 6, 10001, dtype=np.float32)
    np.testing.assert_allclose(ref.activation(x, "GELU_ERF"), ref.activation(x, "GELU_TANH"), atol=1e-3)
    close(ref.activation(np.float32([1.0]), "GELU_ERF"), np.float32([0.5 * (1 + math.erf(2**-0.5))]))


def test_softplus_does_not_overflow():
    close(ref.activation(np.float32([1e4, -1e4, 0]), "SOFTPLUS", 1.0, 1.0), np.float32([1e4, 0, math.log(2)]))


@pytest.mark.parametrize("type_", ref.ACTIVATION_TYPES)
def test_activation_extremes_are_finite_or_inf_without_warnings(type_):
    y = ref.activation(np.float32([-3e38, -1e4, -1, 0, 1, 1e4, 3e38]), type_, 0.5, 1.5)
    assert y.dtype == np.float32 and not np.isnan(y).any()


def test_activation_unknown_type():
    with pytest.raises(ValueError, match="SWISH"):
        ref.activation([1.0], "SWISH")


# --- 003 Scale -----------------------------------------------------------------------------

SCALE_X = np.arange(1, 28, dtype=np.float32).reshape(1, 3, 3, 3)
HALF_MINUS_7 = find("scale", "uniform").expected


def test_scale_uniform():
    close(ref.scale(SCALE_X, "UNIFORM", [-7.0], [0.5], [1.0]), HALF_MINUS_7)


def test_scale_channel():
    out = ref.scale(SCALE_X, "CHANNEL", [-2.5, -7.0, -11.5], np.full(3, 0.5), np.ones(3))
    close(out, find("scale", "channel").expected)


def test_scale_elementwise_same_as_uniform():
    close(ref.scale(SCALE_X, "ELEMENTWISE", np.full(27, -7.0), np.full(27, 0.5), np.ones(27)), HALF_MINUS_7)


@pytest.mark.parametrize("channel_axis", [0, 1])
def test_scale_nd_channel_axis(channel_axis):
    out = ref.scale(np.zeros((2, 2, 3, 4), np.float32), "CHANNEL", [2.0, 3.0], [1.0, 1.0], [1.0, 1.0], channel_axis)
    close(out, find("scale", f"channel_axis_{channel_axis}").expected)


def test_scale_fractional_power_of_negative_is_nan_silently():
    out = ref.scale(np.float32([-4, 4]), "UNIFORM", 0.0, 1.0, 0.5, channel_axis=0)
    assert np.isnan(out[0]) and out[1] == 2


def test_scale_wrong_count_names_mode_coefficient_and_counts():
    with pytest.raises(ValueError, match=r"CHANNEL needs 3 shift .* got 2"):
        ref.scale(SCALE_X, "CHANNEL", [1.0, 2.0], [1.0] * 3, [1.0] * 3)


# --- 004 Convolution ---------------------------------------------------------------------

# The reference's arguments for each single-channel convolution example; the tables and shapes are the
# presets' (playground.network.presets). padding_nd (p, q) sets both sides: pre = post = (p, q).
CONV_KWARGS = {
    "stride_nd_2_2": dict(stride=(2, 2)),
    "stride_nd_2_1": dict(stride=(2, 1)),
    "stride_nd_1_2": dict(stride=(1, 2)),
    "padding_nd_1_1": dict(pre_padding=(1, 1), post_padding=(1, 1)),
    "padding_nd_1_0": dict(pre_padding=(1, 0), post_padding=(1, 0)),
    "padding_nd_0_1": dict(pre_padding=(0, 1), post_padding=(0, 1)),
    "pre_padding_1_1": dict(pre_padding=(1, 1)),
    "pre_padding_1_0": dict(pre_padding=(1, 0)),
    "pre_padding_0_1": dict(pre_padding=(0, 1)),
    "post_padding_1_1": dict(post_padding=(1, 1)),
    "post_padding_1_0": dict(post_padding=(1, 0)),
    "post_padding_0_1": dict(post_padding=(0, 1)),
    # padding_mode examples use stride (2, 2); the spec prints tables only for the explicit modes.
    "padding_mode_same_upper": dict(stride=(2, 2), padding_mode="SAME_UPPER"),
    "padding_mode_same_lower": dict(stride=(2, 2), padding_mode="SAME_LOWER"),
    # The spec prints this table under CAFFE_ROUND_UP (TensorRT 8's alias of EXPLICIT_ROUND_UP).
    "padding_mode_explicit_round_up": dict(stride=(2, 2), padding_mode="EXPLICIT_ROUND_UP"),
    "padding_mode_explicit_round_down": dict(stride=(2, 2), padding_mode="EXPLICIT_ROUND_DOWN"),
    "padding_mode_caffe_round_up": dict(stride=(2, 2), padding_mode="EXPLICIT_ROUND_UP"),
    "padding_mode_caffe_round_down": dict(stride=(2, 2), padding_mode="EXPLICIT_ROUND_DOWN"),
    "dilation_nd_2_2": dict(dilation=(2, 2)),
    "dilation_nd_2_1": dict(dilation=(2, 1)),
    "dilation_nd_1_2": dict(dilation=(1, 2)),
}
# Convolution examples with a test of their own below.
CONV_OWN_TESTS = {"default", "kernel_attributes", "num_groups_2", "conv_3d", "int8"}


def test_every_convolution_example_is_checked_here():
    from playground.network.presets import PRESETS

    assert {p.name for p in PRESETS["convolution"]} == set(CONV_KWARGS) | CONV_OWN_TESTS


@pytest.mark.parametrize("name", CONV_KWARGS)
def test_conv_spec_table(name):
    preset = find("convolution", name)
    out = spec_conv(**CONV_KWARGS[name])
    assert out.shape == preset.expected_shape
    if preset.expected is not None:
        close(out, preset.expected)


def test_conv_default():
    out = spec_conv()
    close(out, find("convolution", "default").expected)
    close(out, find("convolution", "kernel_attributes").expected)  # "the same as the initial example"
    # The spec's hand-adjusted 'ideal' values, beyond float32's reach.
    np.testing.assert_allclose(out[0, 0, 0, :2], [12345.6789, 23156.4897], rtol=1e-7)


def test_conv_num_groups():
    kernel = np.concatenate([spec_kernel(), -spec_kernel()])  # (2, 1, 3, 3)
    out = ref.convolution(spec_input(2), kernel, np.zeros(2, np.float32), num_groups=2)
    default = find("convolution", "default").expected
    close(out, find("convolution", "num_groups_2").expected)
    close(out, np.concatenate([default, -default], axis=1))


def test_conv_3d_two_channels_as_depth_cancel():
    kernel = np.concatenate([spec_kernel(), -spec_kernel()], axis=1).reshape(1, 1, 2, 3, 3)
    out = ref.convolution(spec_input(2).reshape(1, 1, 2, 6, 9), kernel, np.zeros(1, np.float32))
    assert out.shape == (1, 1, 1, 4, 7) == find("convolution", "conv_3d").expected_shape
    # +/- terms up to 9e4 cancel in another summation order, leaving ~1e-11 of float64 rounding.
    np.testing.assert_allclose(out, 0, atol=1e-6)


def test_conv_int8_quantize_dequantize():
    # Scale 1: the input stays 1..9, the kernel becomes 127 127 100 10 1 0 0 0 0.
    q_kernel = ref.quantize_int8(spec_kernel(), 1.0)
    np.testing.assert_array_equal(q_kernel.ravel(), [127, 127, 100, 10, 1, 0, 0, 0, 0])
    x = ref.dequantize(ref.quantize_int8(spec_input(), 1.0), 1.0)
    out = ref.convolution(x, ref.dequantize(q_kernel, 1.0))
    np.testing.assert_array_equal(out, find("convolution", "int8").expected)


# --- convolution properties --------------------------------------------------------------


@pytest.mark.parametrize(
    "mode, pre, post, out",
    [
        ("EXPLICIT_ROUND_DOWN", (0, 0), (0, 0), (2, 4)),
        ("EXPLICIT_ROUND_UP", (0, 0), (1, 0), (3, 4)),
        ("SAME_UPPER", (0, 1), (1, 1), (3, 5)),
        ("SAME_LOWER", (1, 1), (0, 1), (3, 5)),
    ],
)
def test_conv_padding_spec_sizes(mode, pre, post, out):
    assert ref.conv_padding((6, 9), (3, 3), (2, 2), (1, 1), (0, 0), (0, 0), mode) == (pre, post, out)


GRID = list(itertools.product((1, 2, 5, 8), (1, 2, 3), (1, 2, 3), (1, 2), ((0, 0), (1, 0), (0, 2)), ref.PADDING_MODES))


def test_conv_padding_matches_convolution_shape_and_same_is_ceil():
    for size, k, s, d, (b, a), mode in GRID:
        try:
            pre, post, out = ref.conv_padding((size,), (k,), (s,), (d,), (b,), (a,), mode)
        except ValueError:
            with pytest.raises(ValueError):
                ref.convolution(
                    np.ones((1, 1, size, 1)),
                    np.ones((1, 1, k, 1)),
                    stride=(s, 1),
                    pre_padding=(b, 0),
                    post_padding=(a, 0),
                    dilation=(d, 1),
                    padding_mode=mode,
                )
            continue
        y = ref.convolution(
            np.ones((1, 1, size, 1)),
            np.ones((1, 1, k, 1)),
            stride=(s, 1),
            pre_padding=(b, 0),
            post_padding=(a, 0),
            dilation=(d, 1),
            padding_mode=mode,
        )
        assert y.shape == (1, 1, out[0], 1), (size, k, s, d, b, a, mode)
        # the last window fits inside the resolved padded input
        assert (out[0] - 1) * s + 1 + d * (k - 1) <= size + pre[0] + post[0]
        if mode.startswith("SAME"):
            assert out[0] == math.ceil(size / s)
            extra = post[0] - pre[0] if mode == "SAME_UPPER" else pre[0] - post[0]
            assert extra in (0, 1)


def test_conv_padding_error_names_axis_and_arguments():
    with pytest.raises(ValueError, match=r"axis 1 .*kernel_size"):
        ref.conv_padding((6, 2), (3, 3), (1, 1), (1, 1), (0, 0), (0, 0), "EXPLICIT_ROUND_DOWN")


def naive_conv(x, kernel, stride, pre, out_size, dilation):
    """Direct loop over outputs, reading the inputs receptive_field names (zero outside)."""
    n, c = x.shape[:2]
    y = np.zeros((n, kernel.shape[0], *out_size))
    for pos in itertools.product(*map(range, out_size)):
        coords = ref.receptive_field(pos, x.shape[2:], kernel.shape[2:], stride, dilation, pre)
        for kpos, xpos in zip(itertools.product(*map(range, kernel.shape[2:])), coords):
            if all(0 <= p < size for p, size in zip(xpos, x.shape[2:])):
                y[(slice(None), slice(None)) + pos] += x[(slice(None), slice(None)) + xpos] @ kernel[(...,) + kpos].T
    return y


@pytest.mark.parametrize("seed", range(6))
def test_conv_equals_naive_loop_over_receptive_field(seed):
    rng = np.random.default_rng(seed)
    rank = 2 + seed % 2
    x = rng.normal(size=(2, 3, *rng.integers(3, 8, rank))).astype(np.float32)
    kernel = rng.normal(size=(4, 3, *rng.integers(1, 4, rank))).astype(np.float32)
    stride, dilation = tuple(rng.integers(1, 3, rank)), tuple(rng.integers(1, 3, rank))
    mode = ref.PADDING_MODES[seed % 4]
    pads = rng.integers(0, 2, rank), rng.integers(0, 2, rank)
    pre, _, out = ref.conv_padding(x.shape[2:], kernel.shape[2:], stride, dilation, *pads, mode)
    y = ref.convolution(x, kernel, None, stride, *pads, dilation, padding_mode=mode)
    np.testing.assert_allclose(
        y, naive_conv(x.astype(np.float64), kernel, stride, pre, out, dilation), rtol=1e-5, atol=1e-5
    )


def test_grouped_conv_is_concatenation_of_group_convs():
    rng = np.random.default_rng(1)
    x, kernel, bias = rng.normal(size=(2, 6, 7, 8)), rng.normal(size=(9, 2, 3, 3)), rng.normal(size=9)
    kw = dict(stride=(2, 1), pre_padding=(1, 0), post_padding=(0, 1), dilation=(1, 2))
    grouped = ref.convolution(x, kernel, bias, num_groups=3, **kw)
    parts = [
        ref.convolution(x[:, 2 * g : 2 * g + 2], kernel[3 * g : 3 * g + 3], bias[3 * g : 3 * g + 3], **kw)
        for g in range(3)
    ]
    close(grouped, np.concatenate(parts, axis=1))


def test_conv_bad_shapes_print_every_argument():
    with pytest.raises(ValueError, match=r"x \(1, 3, 6, 9\), kernel \(1, 2, 3, 3\).*num_groups 2"):
        ref.convolution(np.zeros((1, 3, 6, 9)), np.zeros((1, 2, 3, 3)), num_groups=2)


def test_receptive_field_corner_reads_padding():
    assert ref.receptive_field((0, 0), (6, 9), (2, 2), (1, 1), (2, 1), (1, 1)) == [(-1, -1), (-1, 0), (1, -1), (1, 0)]


def test_window_reader_checks_its_geometry_once_and_each_index():
    read = ref.window_reader((6, 9), (2, 3), (2, 1), (1, 2), (1, 0))
    for o in [(0, 0), (2, 4), (3, 5)]:
        assert (
            read(o)
            == [(o[0] * 2 - 1 + kh, o[1] - 0 + kw * 2) for kh in range(2) for kw in range(3)]
            == ref.receptive_field(o, (6, 9), (2, 3), (2, 1), (1, 2), (1, 0))
        )
    with pytest.raises(ValueError, match=r"negative index; out_index \(-1, 0\)"):
        read((-1, 0))
    with pytest.raises(ValueError, match=r"out_index must be an int or 2 ints"):
        read((1, 2, 3))
    with pytest.raises(ValueError, match=r"non-positive kernel/stride/dilation; input_size \(6, 9\)"):
        ref.window_reader((6, 9), (2, 0), (1, 1), (1, 1), (0, 0))


def test_quantize_rounds_half_to_even_and_saturates():
    q = ref.quantize_int8(np.float32([0.25, 0.75, 1.25, -0.75, 300, -300]), 0.5)
    assert q.dtype == np.int8
    np.testing.assert_array_equal(q, [0, 2, 2, -2, 127, -128])
    close(ref.dequantize(q, 0.5), np.float32([0, 1, 1, -1, 63.5, -64]))
