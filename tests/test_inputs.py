import csv
import io
import pickle
import struct
import warnings
import zlib

import numpy as np
import pytest
from PIL import Image

from playground.base import inputs
from playground.base.errors import PlaygroundError
from playground.base.inputs import (
    KINDS,
    LIMITS,
    InputError,
    arange_pattern,
    centered_ramp,
    image_to_tensor,
    make_input,
    parse_shape,
    tile_pattern,
    to_csv,
    to_npy_bytes,
    validate_shape,
)

LANCZOS = Image.Resampling.LANCZOS


# ---------------------------------------------------------------- helpers


def gradient_rgb(w=40, h=30):
    """R rises along w, G rises along h, B is a diagonal mix: every plane differs."""
    x = np.linspace(0, 255, w)[None, :].repeat(h, 0)
    y = np.linspace(0, 255, h)[:, None].repeat(w, 1)
    return np.stack([x, y, 255 - (x + y) / 2], axis=-1).round().astype(np.uint8)


def encode(arr_or_img, fmt, **kw):
    img = arr_or_img if isinstance(arr_or_img, Image.Image) else Image.fromarray(arr_or_img)
    buf = io.BytesIO()
    img.save(buf, fmt, **kw)
    return buf.getvalue()


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_declaring(w, h):
    """A ~60-byte, well-formed PNG header that claims a w x h greyscale canvas."""
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", ihdr)
        + png_chunk(b"IDAT", zlib.compress(b""))
        + png_chunk(b"IEND", b"")
    )


def reference_planes(data, h, w, mode):
    img = Image.open(io.BytesIO(data)).convert(mode).resize((w, h), LANCZOS)
    a = np.asarray(img, dtype=np.float64) / 255.0
    return a if mode == "L" else a.transpose(2, 0, 1)


PNG = encode(gradient_rgb(), "PNG")
SHAPES = [(1, 1, 3, 3), (2, 3, 6, 9), (1, 2, 4, 6, 9), (4, 8, 8, 5, 7)]


def spec_fn(shape):
    return tile_pattern(shape)


# ---------------------------------------------------------------- make_input


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_gives_exact_shape_and_float32(kind, shape):
    t = make_input(kind, shape, spec_fn=spec_fn, image=PNG)
    assert t.shape == shape
    assert t.dtype == np.float32
    assert t.flags.c_contiguous and t.flags.writeable
    assert np.isfinite(t).all()


def test_shape_accepts_lists_and_numpy_ints():
    t = make_input("constant", [np.int64(1), 2, 3, 4], value=2.5)
    assert t.shape == (1, 2, 3, 4) and (t == 2.5).all()


def test_ramp_reproduces_spec_arange():
    t = make_input("ramp", (1, 1, 3, 3), low=-4, high=4)
    np.testing.assert_array_equal(t, np.arange(-4, 5, dtype=np.float32).reshape(1, 1, 3, 3))


def test_ramp_spans_low_to_high_over_flattened_tensor():
    t = make_input("ramp", (2, 3, 4, 5), low=0, high=1)
    flat = t.ravel()
    assert flat[0] == 0 and flat[-1] == 1
    assert (np.diff(flat) > 0).all()


def test_random_is_deterministic_per_seed_and_differs_across_seeds():
    a = make_input("random", (2, 3, 8, 8), seed=7)
    b = make_input("random", (2, 3, 8, 8), seed=7)
    c = make_input("random", (2, 3, 8, 8), seed=8)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    expected = np.random.default_rng(7).uniform(-4.0, 4.0, size=(2, 3, 8, 8)).astype(np.float32)
    np.testing.assert_array_equal(a, expected)
    assert a.min() >= -4 and a.max() <= 4


def test_checkerboard_alternates_high_low_by_h_plus_w_parity():
    t = make_input("checkerboard", (2, 2, 3, 4), low=-1, high=5)
    h, w = np.indices((3, 4))
    plane = np.where((h + w) % 2 == 0, 5, -1)
    for n in range(2):
        for c in range(2):
            np.testing.assert_array_equal(t[n, c], plane)


def test_constant():
    t = make_input("constant", (1, 2, 3, 4, 5), value=-0.5)
    assert (t == -0.5).all()


def test_spec_calls_spec_fn_with_validated_shape_and_copies():
    seen = []
    source = np.ones((1, 1, 2, 2), dtype=np.float32)

    def fn(shape):
        seen.append(shape)
        return source

    t = make_input("spec", [1, 1, 2, 2], spec_fn=fn)
    assert seen == [(1, 1, 2, 2)]
    t[...] = 9  # must not write through to the layer's own array
    assert (source == 1).all()


def test_spec_without_spec_fn_raises():
    with pytest.raises(InputError, match=r"^input\.spec_fn: required for kind 'spec'"):
        make_input("spec", (1, 1, 3, 3))


def test_spec_fn_returning_wrong_shape_raises():
    with pytest.raises(InputError, match=r"input\.spec_fn: must return shape \(1, 1, 3, 3\)"):
        make_input("spec", (1, 1, 3, 3), spec_fn=lambda s: np.zeros((3, 3)))


def test_image_kind_needs_bytes():
    with pytest.raises(InputError, match=r"^upload: required for kind 'image'"):
        make_input("image", (1, 3, 4, 4))


def test_unknown_kind_raises():
    with pytest.raises(InputError, match=r"^input\.kind: must be one of spec, spec_repeat, ramp"):
        make_input("noise", (1, 1, 3, 3))


@pytest.mark.parametrize(
    "kwargs, param",
    [
        ({"kind": "constant", "value": float("nan")}, "input.value"),
        ({"kind": "constant", "value": 1e39}, "input.value"),  # overflows float32
        ({"kind": "constant", "value": "abc"}, "input.value"),
        ({"kind": "ramp", "low": float("-inf")}, "input.low"),
        ({"kind": "random", "high": float("nan")}, "input.high"),
        ({"kind": "random", "seed": -1}, "input.seed"),
        ({"kind": "random", "seed": 1.5}, "input.seed"),
    ],
)
def test_bad_pattern_parameters_name_the_parameter(kwargs, param):
    with pytest.raises(InputError) as e:
        make_input(shape=(1, 1, 3, 3), **kwargs)
    assert e.value.param == param
    assert str(e.value).startswith(param + ": must be")


def test_unused_parameters_are_not_validated():
    make_input("ramp", (1, 1, 3, 3), value=float("nan"), seed=-1)


# ---------------------------------------------------------------- shape limits


@pytest.mark.parametrize(
    "shape, message",
    [
        ((1, 3, 0, 9), "input.H: must be between 1 and 512 (got 0)"),
        ((1, 3, 6, 513), "input.W: must be between 1 and 512 (got 513)"),
        ((65, 3, 6, 9), "input.N: must be between 1 and 64 (got 65)"),
        ((1, 4097, 6, 9), "input.C: must be between 1 and 4096 (got 4097)"),
        ((1, 1, 513, 6, 9), "input.D: must be between 1 and 512 (got 513)"),
        ((1, 1, 0, 6, 9), "input.D: must be between 1 and 512 (got 0)"),
        ((1, 1, 1, 6, 600), "input.W: must be between 1 and 512 (got 600)"),
        ((1, 3, -2, 9), "input.H: must be between 1 and 512 (got -2)"),
        ((1, 3, 6.0, 9), "input.H: must be an integer (got 6.0)"),
        ((1, True, 6, 9), "input.C: must be an integer (got True)"),
        ((3, 3), "input.shape: must have rank 4 (NCHW) or 5 (NCDHW) (got rank 2)"),
        ((1, 1, 1, 1, 1, 1), "input.shape: must have rank 4 (NCHW) or 5 (NCDHW) (got rank 6)"),
        ("1,3,6,9", "input.shape: must be a sequence"),
        (7, "input.shape: must be a sequence"),
    ],
)
def test_out_of_range_shapes_name_the_dim(shape, message):
    with pytest.raises(InputError) as e:
        make_input("constant", shape)
    assert str(e.value).startswith(message)


def test_limits_edges_are_inclusive():
    assert validate_shape((4, 8, 512, 512)) == (4, 8, 512, 512)
    assert validate_shape((1, 1, 8, 1, 1)) == (1, 1, 8, 1, 1)
    assert validate_shape((64, 4096, 1, 1)) == (64, 4096, 1, 1)  # a model's node: its channels, the budget holds it
    assert LIMITS["H"] == (1, 512) and LIMITS["N"] == (1, 64)


def test_input_error_is_a_value_error_and_pickles():
    e = InputError("input.H", "must be between 1 and 512 (got 0)")
    assert isinstance(e, ValueError) and isinstance(e, PlaygroundError)
    back = pickle.loads(pickle.dumps(e))
    assert str(back) == str(e) == "input.H: must be between 1 and 512 (got 0)"
    assert (back.param, back.rule) == (e.param, e.rule)


# ---------------------------------------------------------------- spec helpers


@pytest.mark.parametrize("shape", [(1, 1, 6, 9), (2, 1, 6, 9), (1, 1, 2, 6, 9)])
def test_tile_pattern_matches_conv_spec_formula(shape):
    plane = np.tile(np.arange(1, 10).reshape(3, 3), (1, 2, 3)).reshape(6, 9)
    expected = np.broadcast_to(plane, shape)  # one channel: every n and depth slice is the spec's plane
    got = tile_pattern(shape)
    assert got.dtype == np.float32 and got.shape == shape
    np.testing.assert_array_equal(got, expected)
    if shape == (1, 1, 6, 9):  # the spec's literal expression
        np.testing.assert_array_equal(got, np.tile(np.arange(1, 10).reshape(3, 3), (1, 2, 3)).reshape(1, 1, 6, 9))


def test_tile_pattern_gives_each_channel_its_own_phase():
    got = tile_pattern((1, 9, 6, 9))
    spec = tile_pattern((1, 1, 6, 9))[0, 0]
    np.testing.assert_array_equal(got[0, 0], spec)  # channel 0 is the spec's plane
    planes = {got[0, c].tobytes() for c in range(9)}
    assert len(planes) == 9  # nine channels, nine different planes
    for c in range(9):  # each the block's digits 1 … 9, c cells further on (row-major, wrapping)
        np.testing.assert_array_equal(got[0, c, :3, :3], (np.arange(9).reshape(3, 3) + c) % 9 + 1)
    np.testing.assert_array_equal(tile_pattern((1, 10, 3, 3))[0, 9], spec[:3, :3])  # the tenth wraps round
    np.testing.assert_array_equal(tile_pattern((1, 2, 2, 3, 3))[0, 1, 0], tile_pattern((1, 2, 2, 3, 3))[0, 1, 1])


def test_tile_pattern_crops_partial_blocks_and_other_block_sizes():
    got = tile_pattern((1, 1, 5, 7), block=(2, 3))
    expected = np.tile(np.arange(1, 7).reshape(2, 3), (3, 3))[:5, :7]
    np.testing.assert_array_equal(got[0, 0], expected)


def test_centered_ramp_3x3_is_arange_minus4_to_4_on_every_slice():
    got = centered_ramp((2, 3, 3, 3))
    for n in range(2):
        for c in range(3):
            np.testing.assert_array_equal(got[n, c], np.arange(-4, 5).reshape(3, 3))
    assert got.dtype == np.float32


def test_spec_repeat_is_channel_0_in_every_channel():
    got = make_input("spec_repeat", (2, 3, 4, 5), spec_fn=tile_pattern)
    for n in range(2):
        for c in range(3):
            np.testing.assert_array_equal(got[n, c], tile_pattern((1, 1, 4, 5))[0, 0])
    assert len({make_input("spec", (1, 3, 4, 5), spec_fn=tile_pattern)[0, c].tobytes() for c in range(3)}) == 3


def test_centered_ramp_general_sizes():
    got = centered_ramp((1, 1, 2, 3, 4))  # rank 5: every H x W plane
    np.testing.assert_array_equal(got[0, 0, 1], np.arange(-6, 6).reshape(3, 4))
    np.testing.assert_array_equal(centered_ramp((1, 1, 1, 5))[0, 0, 0], [-2, -1, 0, 1, 2])


def test_arange_pattern_is_the_scale_spec():
    np.testing.assert_array_equal(arange_pattern((1, 2, 3, 4)), np.arange(1, 25).reshape(1, 2, 3, 4))
    np.testing.assert_array_equal(arange_pattern((1, 1, 1, 3), start=0), [[[[0, 1, 2]]]])
    assert arange_pattern((1, 1, 2, 2)).dtype == np.float32


def test_helpers_reject_bad_shapes():
    with pytest.raises(InputError, match=r"^shape: must have at least 2 dims"):
        tile_pattern((1, 1, 0, 3))
    with pytest.raises(InputError, match=r"^block: must be two positive integers"):
        tile_pattern((1, 1, 3, 3), block=(0, 3))


# ---------------------------------------------------------------- images


def test_png_rgb_planes_match_r_g_b_after_resize():
    h, w = 17, 23
    t = image_to_tensor(PNG, (1, 3, h, w))
    np.testing.assert_allclose(t[0], reference_planes(PNG, h, w, "RGB"), atol=1e-6)
    # Semantics, independently of PIL: R rises along w, G along h.
    assert (np.diff(t[0, 0].mean(axis=0)) > 0).all()
    assert (np.diff(t[0, 1].mean(axis=1)) > 0).all()
    assert 0.0 <= t.min() and t.max() <= 1.0


def test_png_at_native_size_is_exact():
    arr = gradient_rgb(40, 30)
    t = image_to_tensor(PNG, (1, 3, 30, 40))
    np.testing.assert_array_equal(t[0], (arr.transpose(2, 0, 1) / 255.0).astype(np.float32))


def test_jpeg_works():
    data = encode(gradient_rgb(), "JPEG", quality=95)
    t = image_to_tensor(data, (1, 3, 12, 16))
    np.testing.assert_allclose(t[0], reference_planes(data, 12, 16, "RGB"), atol=1e-6)
    # And it is close to the lossless original.
    np.testing.assert_allclose(t[0], reference_planes(PNG, 12, 16, "RGB"), atol=0.06)


def test_c1_is_luminance():
    t = image_to_tensor(PNG, (1, 1, 30, 40))
    rgb = gradient_rgb(40, 30).astype(np.float64)
    luma = (0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]) / 255.0
    np.testing.assert_allclose(t[0, 0], luma, atol=1.01 / 255)
    np.testing.assert_allclose(image_to_tensor(PNG, (1, 1, 9, 11))[0, 0], reference_planes(PNG, 9, 11, "L"), atol=1e-6)


def test_other_channel_counts_cycle_rgb_planes():
    t = image_to_tensor(PNG, (1, 5, 8, 8))
    ref = reference_planes(PNG, 8, 8, "RGB")
    for c, plane in enumerate([0, 1, 2, 0, 1]):
        np.testing.assert_allclose(t[0, c], ref[plane], atol=1e-6)
    two = image_to_tensor(PNG, (1, 2, 8, 8))
    np.testing.assert_allclose(two[0], ref[:2], atol=1e-6)


def test_image_repeats_over_n_and_d():
    t = image_to_tensor(PNG, (3, 3, 4, 10, 12))
    assert t.shape == (3, 3, 4, 10, 12)
    first = t[0, :, 0]
    for n in range(3):
        for d in range(4):
            np.testing.assert_array_equal(t[n, :, d], first)
    np.testing.assert_allclose(first, reference_planes(PNG, 10, 12, "RGB"), atol=1e-6)


@pytest.mark.parametrize("mode", ["P", "RGBA", "LA", "L", "CMYK"])
def test_other_pixel_modes_decode(mode):
    img = Image.fromarray(gradient_rgb()).convert(mode)
    fmt = "JPEG" if mode == "CMYK" else "PNG"
    t = image_to_tensor(encode(img, fmt), (1, 3, 8, 8))
    assert t.shape == (1, 3, 8, 8) and 0 <= t.min() and t.max() <= 1


def test_16_bit_grey_png_is_scaled_not_clipped():
    grey = np.linspace(0, 65535, 64).round().astype(np.uint16)[None, :].repeat(4, 0)
    data = encode(Image.fromarray(grey), "PNG")
    assert Image.open(io.BytesIO(data)).mode.startswith("I")
    t = image_to_tensor(data, (1, 3, 4, 64))
    np.testing.assert_allclose(t[0, 0], grey / 65535.0, atol=1e-6)
    np.testing.assert_array_equal(t[0, 1], t[0, 0])  # grey replicated into every plane


def test_exif_orientation_is_applied():
    arr = np.zeros((2, 4, 3), dtype=np.uint8)  # stored 4 wide x 2 high
    arr[0, 0] = (255, 0, 0)
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90 clockwise to display"
    data = encode(Image.fromarray(arr), "PNG", exif=exif)
    t = image_to_tensor(data, (1, 3, 4, 2))
    np.testing.assert_array_equal(t[0].transpose(1, 2, 0), np.rot90(arr, k=-1) / 255.0)


def _half_of_noise_png():
    noise = np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    data = encode(noise, "PNG")
    return data[: len(data) // 2]


@pytest.mark.parametrize(
    "data, rule",
    [
        (b"", "upload: is empty (0 bytes)"),
        (b"hello, this is a text file\n" * 20, "upload: not a PNG or JPEG image (PIL could not identify it)"),
        (encode(gradient_rgb(), "GIF"), "upload: not a PNG or JPEG image"),
        (encode(gradient_rgb(), "BMP"), "upload: not a PNG or JPEG image"),
        (_half_of_noise_png(), "upload: image data is broken or truncated"),
        (PNG[:20], "upload: image data is broken or truncated"),
        (PNG[:8], "upload: image data is broken or truncated (PIL could not read its header)"),
        (encode(gradient_rgb(), "JPEG")[:300], "upload: image data is broken or truncated"),
        (
            png_declaring(8000, 8000),
            "upload: must be at most 40,000,000 pixels (40 megapixels) before resizing (got 8000x8000",
        ),
        (
            png_declaring(20000, 20000),
            "upload: must be at most 40,000,000 pixels (40 megapixels) before resizing (PIL refused",
        ),
    ],
    ids=[
        "empty",
        "text",
        "gif",
        "bmp",
        "truncated-png",
        "truncated-header",
        "png-signature-only",
        "truncated-jpeg",
        "8000x8000",
        "20000x20000",
    ],
)
def test_bad_uploads_raise_input_error_naming_upload_and_rule(data, rule):
    with pytest.raises(InputError) as e:
        image_to_tensor(data, (1, 3, 8, 8))
    assert e.value.param == "upload"
    assert str(e.value).startswith(rule)
    # And the same through make_input.
    with pytest.raises(InputError, match=r"^upload: "):
        make_input("image", (1, 3, 8, 8), image=data)


def test_upload_over_byte_cap_is_rejected_before_decoding():
    data = PNG + b"\0" * (LIMITS["upload_bytes"] + 1 - len(PNG))
    with pytest.raises(InputError) as e:
        image_to_tensor(data, (1, 3, 8, 8))
    assert str(e.value) == ("upload: must be at most 10,000,000 bytes (10 MB) (got 10,000,001 bytes)")


def test_pixel_cap_is_read_from_limits(monkeypatch):
    monkeypatch.setitem(inputs.LIMITS, "upload_pixels", 1000)  # PNG is 40x30 = 1200
    with pytest.raises(InputError, match=r"^upload: must be at most 1,000 pixels .*\(got 40x30 = 1,200\)"):
        image_to_tensor(PNG, (1, 3, 8, 8))
    monkeypatch.setitem(inputs.LIMITS, "upload_pixels", 1200)
    assert image_to_tensor(PNG, (1, 3, 8, 8)).shape == (1, 3, 8, 8)


def test_image_shape_is_validated_first():
    with pytest.raises(InputError, match=r"^input\.W: "):
        image_to_tensor(PNG, (1, 3, 8, 1000))


def test_non_bytes_upload_rejected():
    with pytest.raises(InputError, match=r"^upload: must be the file's bytes"):
        image_to_tensor("not bytes", (1, 3, 8, 8))


def test_decoding_leaves_pil_globals_alone():
    before = Image.MAX_IMAGE_PIXELS
    with pytest.raises(InputError):
        image_to_tensor(png_declaring(20000, 20000), (1, 3, 8, 8))
    assert Image.MAX_IMAGE_PIXELS == before


# ---------------------------------------------------------------- parse_shape


@pytest.mark.parametrize(
    "text, shape",
    [
        ("1,3,6,9", (1, 3, 6, 9)),
        (" 1, 3 ,6,9 ", (1, 3, 6, 9)),
        ("(1, 3, 6, 9)", (1, 3, 6, 9)),
        ("[2,1,4,6,9]", (2, 1, 4, 6, 9)),
    ],
)
def test_parse_shape(text, shape):
    assert parse_shape(text) == shape


@pytest.mark.parametrize(
    "text, start",
    [
        ("", "shape: must be comma-separated integers"),
        ("abc", "shape: must be comma-separated integers"),
        ("1,,3,4", "shape: must be comma-separated integers"),
        ("1,3,6,9,", "shape: must be comma-separated integers"),
        ("1.5,3,6,9", "shape: must be comma-separated integers"),
        ("1;3;6;9", "shape: must be comma-separated integers"),
        ("1,3,6,1_0", "shape: must be comma-separated integers"),
        ("1,3,6,٩", "shape: must be comma-separated integers"),  # Arabic-Indic nine
        ("1,3,6", "input.shape: must have rank 4 (NCHW) or 5 (NCDHW) (got rank 3)"),
        ("1,3,0,9", "input.H: must be between 1 and 512 (got 0)"),
        ("1,3,-6,9", "input.H: must be between 1 and 512 (got -6)"),
        ("1,3,6,99999999999999999999", "input.W: must be between 1 and 512"),
    ],
)
def test_parse_shape_junk_raises(text, start):
    with pytest.raises(InputError) as e:
        parse_shape(text)
    assert str(e.value).startswith(start)


def test_parse_shape_non_text():
    with pytest.raises(InputError, match=r"^shape: must be text"):
        parse_shape(None)


# ---------------------------------------------------------------- downloads


def parse_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 2, 3, 4, 5)])
def test_csv_round_trips_values(shape):
    t = make_input("random", shape, seed=3)
    t.flat[:4] = [0.1, 1 / 3, 1e-30, 3.4e38]  # values that need all 9 digits or an exponent
    header, rows = parse_csv(to_csv(t))
    lead = ["n", "c", "h"] if len(shape) == 4 else ["n", "c", "d", "h"]
    assert header == lead + [f"w{k}" for k in range(shape[-1])]
    assert len(rows) == int(np.prod(shape[:-1]))
    back = np.zeros(shape, dtype=np.float32)
    for row in rows:
        index = tuple(int(v) for v in row[: len(lead)])
        back[index] = np.array([float(v) for v in row[len(lead) :]], dtype=np.float32)
    np.testing.assert_array_equal(back, t)


def test_csv_row_order_and_index_columns():
    t = arange_pattern((1, 2, 2, 3))
    assert to_csv(t) == ("n,c,h,w0,w1,w2\n0,0,0,1,2,3\n0,0,1,4,5,6\n0,1,0,7,8,9\n0,1,1,10,11,12\n")


def test_csv_other_ranks_and_dtypes():
    assert to_csv(np.array([[1, 2], [3, 4]])) == "i0,w0,w1\n0,1,2\n1,3,4\n"
    assert to_csv(np.array([True, False])) == "w0,w1\n1,0\n"
    assert to_csv(np.array([np.nan, -np.inf], dtype=np.float32)) == "w0,w1\nnan,-inf\n"
    assert to_csv(np.array([0.1, 1 / 3])) == "w0,w1\n0.1,0.3333333333333333\n"  # float64: shortest repr
    assert to_csv(np.zeros((2, 0))) == "i0\n0\n1\n"
    for dtype in (np.float16, np.float32, np.float64):
        x = np.random.default_rng(0).standard_normal(50).astype(dtype)
        _, (row,) = parse_csv(to_csv(x))
        np.testing.assert_array_equal(np.array([float(v) for v in row], dtype=dtype), x)
    with pytest.raises(InputError, match=r"^tensor: must have at least 1 dimension"):
        to_csv(np.float32(1))
    with pytest.raises(InputError, match=r"^tensor: must be numeric"):
        to_csv(np.array(["a"]))


def test_npy_bytes_round_trip():
    t = make_input("random", (1, 2, 3, 4, 5), seed=1)
    back = np.load(io.BytesIO(to_npy_bytes(t)), allow_pickle=False)
    assert back.dtype == np.float32
    np.testing.assert_array_equal(back, t)


def test_pil_bomb_warning_as_error_is_still_an_input_error():
    # 100 MP is past PIL's warning threshold but below its hard error.
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        with pytest.raises(InputError, match=r"^upload: must be at most 40,000,000 pixels"):
            image_to_tensor(png_declaring(10000, 10000), (1, 3, 8, 8))
