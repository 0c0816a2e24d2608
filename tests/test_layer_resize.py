"""Resize: hand-computed tables, the reference against a direct per-cell evaluation of the formulas, the rules,
the picked cell, and TensorRT building a spread of configurations."""

import itertools
import math

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.layers import get_layer
from playground.network.core import evaluate
from playground.trt.backend import detect

LAYER = get_layer("resize")
X = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
needs_trt = pytest.mark.skipif(not detect().can_build, reason="no TensorRT that can build here")


def resized(raw, x=X):
    return LAYER.reference(x, LAYER.resolve(raw, x.shape))


def keys(d, a):
    """Keys' cubic convolution kernel as a function of the distance |d| (the textbook form)."""
    d = abs(d)
    if d <= 1:
        return (a + 2) * d**3 - (a + 3) * d**2 + 1
    if d < 2:
        return a * d**3 - 5 * a * d**2 + 8 * a * d - 4 * a
    return 0.0


def direct(x, p, out):
    """Every output cell on its own (2-D): map each axis's coordinate with TensorRT's formula, then sum the
    kernel's weights over every input cell within reach, reading past the edge as the edge cell."""
    (H, W), y = x.shape[2:], np.zeros(x.shape[:2] + tuple(out))

    def origin(o, n, m):
        if m == 1 and (p["selector_for_single_pixel"] == "UPPER" or p["coordinate_transformation"] == "ALIGN_CORNERS"):
            return 0.0
        return {
            "ALIGN_CORNERS": o * (n - 1) / max(m - 1, 1),
            "ASYMMETRIC": o * n / m,
            "HALF_PIXEL": (o + 0.5) * n / m - 0.5,
        }[p["coordinate_transformation"]]

    def weights(c, n):
        if p["resize_mode"] == "NEAREST":
            i = {
                "HALF_UP": math.floor(c + 0.5),
                "HALF_DOWN": math.ceil(c - 0.5),
                "FLOOR": math.floor(c),
                "CEIL": math.ceil(c),
            }[p["nearest_rounding"]]
            return {min(max(i, 0), n - 1): 1.0}
        reach = range(math.floor(c) - 2, math.floor(c) + 4)
        kernel = (
            (lambda d: max(0.0, 1 - abs(d))) if p["resize_mode"] == "LINEAR" else (lambda d: keys(d, p["cubic_coeff"]))
        )
        w = {i: kernel(c - i) for i in reach if kernel(c - i) != 0}
        if p["exclude_outside"] and p["resize_mode"] == "CUBIC":
            w = {i: v for i, v in w.items() if 0 <= i < n}
            w = {i: v / sum(w.values()) for i, v in w.items()}
        clamped = {}
        for i, v in w.items():
            clamped[min(max(i, 0), n - 1)] = clamped.get(min(max(i, 0), n - 1), 0.0) + v
        return clamped

    for i, j in itertools.product(range(out[0]), range(out[1])):
        wh, ww = weights(origin(i, H, out[0]), H), weights(origin(j, W, out[1]), W)
        y[..., i, j] = sum(a * b * x[..., h, w] for h, a in wh.items() for w, b in ww.items())
    return y


def test_hand_computed_tables():
    # 2 × 2 → 4 × 4 nearest (the defaults): every cell four times
    assert resized({"shape": "4,4"}, X[..., :2, :2]).ravel().tolist() == [
        1,
        1,
        2,
        2,
        1,
        1,
        2,
        2,
        5,
        5,
        6,
        6,
        5,
        5,
        6,
        6,
    ]
    # the default output is twice the input: 8 × 8 of 2 × 2 blocks
    y = resized({})
    assert y.shape == (1, 1, 8, 8) and y[0, 0, ::2, ::2].tolist() == X[0, 0].tolist()
    # linear, ALIGN_CORNERS, one row 1…4 → 7 cells: the midpoints appear between the cells
    row = np.float32([[[[1, 2, 3, 4]]]])
    assert resized(
        {"shape": "1,7", "resize_mode": "LINEAR", "coordinate_transformation": "ALIGN_CORNERS"}, row
    ).ravel().tolist() == [1, 1.5, 2, 2.5, 3, 3.5, 4]
    # nearest CEIL on x · 4/3: 0, 1.33, 2.67 → cells 0, 2, 3
    assert resized({"shape": "1,3", "nearest_rounding": "CEIL"}, row).ravel().tolist() == [1, 3, 4]


CONFIGS = [
    {"resize_mode": m, "coordinate_transformation": t, "shape": s, **more}
    for m, more in (
        ("NEAREST", {"nearest_rounding": "HALF_UP"}),
        ("NEAREST", {"nearest_rounding": "HALF_DOWN"}),
        ("NEAREST", {"nearest_rounding": "CEIL"}),
        ("LINEAR", {}),
        ("CUBIC", {}),
        ("CUBIC", {"exclude_outside": True, "cubic_coeff": -0.5}),
    )
    for t in ("ALIGN_CORNERS", "ASYMMETRIC", "HALF_PIXEL")
    for s in ("7,3", "2,9", "1,5")
]


@pytest.mark.parametrize("raw", CONFIGS, ids=lambda r: "-".join(str(v) for v in r.values()))
def test_reference_is_the_formulas_cell_by_cell(raw):
    x = np.random.default_rng(2).uniform(-4, 4, (2, 3, 5, 4)).astype(np.float32)
    p = LAYER.resolve(raw, x.shape)
    np.testing.assert_allclose(LAYER.reference(x, p), direct(x.astype(np.float64), p, p["shape"]), rtol=1e-5, atol=1e-5)


def test_linear_stays_within_the_input_and_cubic_leaves_it():
    x = np.float32([[[[0, 0, 1, 1]]]])
    linear = resized({"shape": "1,16", "resize_mode": "LINEAR", "coordinate_transformation": "HALF_PIXEL"}, x)
    cubic = resized({"shape": "1,16", "resize_mode": "CUBIC", "coordinate_transformation": "HALF_PIXEL"}, x)
    assert linear.min() >= 0 and linear.max() <= 1
    assert cubic.min() < 0 and cubic.max() > 1  # the step rings


def test_scales_set_the_size_by_floor_and_replace_shape():
    p = LAYER.resolve({"scales": "1.5, 0.5", "shape": "9,9"}, (1, 1, 5, 5))
    assert p["scales"].tolist() == [1.5, 0.5] and "shape" in LAYER.unused(p)
    assert LAYER.reference(np.zeros((1, 1, 5, 5), np.float32), p).shape == (1, 1, 7, 2)
    one = LAYER.resolve({"scales": "2"}, (1, 1, 3, 4))
    assert one["scales"].tolist() == [2.0, 2.0]


def test_one_output_cell_samples_the_formula_or_the_top_left():
    formula = resized({"shape": "1,1", "resize_mode": "LINEAR", "coordinate_transformation": "HALF_PIXEL"})
    upper = resized(
        {
            "shape": "1,1",
            "resize_mode": "LINEAR",
            "coordinate_transformation": "HALF_PIXEL",
            "selector_for_single_pixel": "UPPER",
        }
    )
    assert formula.ravel().tolist() == [8.5] and upper.ravel().tolist() == [1]  # 1.5, 1.5: between 6, 7, 10, 11


def test_3d_resizes_depth_too_except_under_cubic():
    x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 2, 2, 4)
    y = resized({"shape": "4,2,4", "resize_mode": "LINEAR", "coordinate_transformation": "ALIGN_CORNERS"}, x)
    assert y.shape == (1, 1, 4, 2, 4)
    np.testing.assert_allclose(y[0, 0, :, 0, 0], [1, 1 + 8 / 3, 1 + 16 / 3, 9], rtol=1e-6)
    assert resized({"shape": "2,4,8", "resize_mode": "CUBIC"}, x).shape == (1, 1, 2, 4, 8)


@pytest.mark.parametrize(
    "raw, shape, param, words",
    [
        ({"scales": "2,2,2"}, (1, 1, 4, 4), "scales", "needs one value per spatial axis (2) or one for all"),
        ({"scales": "0.1"}, (1, 1, 4, 4), "scales", "floor(4 × 0.1) = 0 cells"),
        ({"scales": "0"}, (1, 1, 4, 4), "scales", "must be between 0.01 and 64"),
        ({"scales": "60"}, (1, 1, 16, 16), "scales", "960 cells, more than 512"),
        ({"shape": "0,4"}, (1, 1, 4, 4), "shape", "must be between 1 and 512"),
        ({"shape": "4,4,4", "resize_mode": "CUBIC"}, (1, 1, 2, 4, 4), "shape", "CUBIC (bicubic) resizes H and W only"),
        ({"scales": "2", "resize_mode": "CUBIC"}, (1, 1, 2, 4, 4), "scales", "D must stay 2"),
        (
            {"coordinate_transformation": "PYTORCH_HALF_PIXEL"},
            (1, 1, 4, 4),
            "coordinate_transformation",
            "must be one of ALIGN_CORNERS, ASYMMETRIC, HALF_PIXEL",
        ),
    ],
)
def test_rules_name_the_parameter(raw, shape, param, words):
    with pytest.raises(ValidationError) as err:
        LAYER.resolve(raw, shape)
    assert err.value.param == param and words in str(err.value)


def test_the_picked_cell_names_its_coordinates_and_weights():
    p = LAYER.resolve({"resize_mode": "LINEAR", "coordinate_transformation": "HALF_PIXEL"}, X.shape)
    y = LAYER.reference(X, p)
    assert LAYER.reads(p, X.shape, (0, 0, 3, 5)) == [(0, 0, 1, 2), (0, 0, 1, 3), (0, 0, 2, 2), (0, 0, 2, 3)]
    cell = LAYER.cell(X, p, (0, 0, 3, 5), y)
    assert cell.line == "0.5625·7 + 0.1875·8 + 0.1875·11 + 0.0625·12 = **8.25**"
    assert cell.notes[0] == "h = 3: (3 + 0.5) · 4 / 8 − 0.5 = 1.25 → cells 1 (× 0.75), 2 (× 0.25)"
    assert sum(float(r["weight"]) for r in cell.rows) == 1
    corner = LAYER.cell(X, p, (0, 0, 0, 0), y)
    assert "past the edge" in corner.notes[0] and LAYER.reads(p, X.shape, (0, 0, 0, 0)) == [(0, 0, 0, 0)]
    nearest = LAYER.resolve({"nearest_rounding": "CEIL"}, X.shape)
    assert (
        LAYER.cell(X, nearest, (0, 0, 1, 1), LAYER.reference(X, nearest)).notes[1]
        == "w = 1: 1 · 4 / 8 = 0.5 → CEIL → cell 1"
    )
    cubic = LAYER.resolve({"resize_mode": "CUBIC"}, X.shape)
    assert len(LAYER.reads(cubic, X.shape, (0, 0, 3, 3))) == 16


SPREAD = [
    {},
    {"resize_mode": "LINEAR", "coordinate_transformation": "HALF_PIXEL", "shape": "7,5"},
    {"resize_mode": "LINEAR", "coordinate_transformation": "ALIGN_CORNERS", "shape": "3,3"},
    {"resize_mode": "CUBIC", "coordinate_transformation": "HALF_PIXEL", "cubic_coeff": -0.5, "exclude_outside": True},
    {"nearest_rounding": "HALF_DOWN", "coordinate_transformation": "HALF_PIXEL", "shape": "3,3"},
    {"scales": "1.5,0.5"},
    {"shape": "1,1", "resize_mode": "LINEAR", "selector_for_single_pixel": "UPPER"},
    {"precision": "FP16", "resize_mode": "LINEAR"},
]


@needs_trt
@pytest.mark.parametrize("raw", SPREAD, ids=lambda r: ",".join(f"{k}={v}" for k, v in r.items()) or "defaults")
def test_tensorrt_builds_and_agrees_on_the_output_shape(raw, tmp_path):
    from playground.trt.cache import EngineCache

    r = evaluate("resize", raw, cache=EngineCache(tmp_path))
    assert r.error is None and r.engine_status == "built", r.error
    assert tuple(r.report.output_shape) == r.reference.shape


@needs_trt
def test_tensorrt_builds_3d_trilinear(tmp_path):
    from playground.trt.cache import EngineCache

    x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 2, 2, 4)
    r = evaluate("resize", {"shape": "4,3,5", "resize_mode": "LINEAR"}, x, cache=EngineCache(tmp_path))
    assert r.error is None and tuple(r.report.output_shape) == (1, 1, 4, 3, 5)


def test_the_stages_read_map_follows_the_scales():
    """The stage's read map (hover, pick, step, play) is remembered by the configuration, which for Resize includes
    its few scales."""
    from playground.serve import protocol

    for scales, cells in (("1.5", [[0, 0, 1, 1], [0, 0, 1, 2]]), ("2", [[0, 0, 1, 1]])):  # 1.33, 1.5; 1, 1
        x_shape = (1, 1, 2, 3)
        p = LAYER.resolve({"scales": scales, "resize_mode": "LINEAR"}, x_shape)
        assert protocol._reads(LAYER, p, x_shape, ((0, 0, 2, 2),))["0,0,2,2"] == cells


@pytest.mark.parametrize("n, scale, cells", [(10, 0.7, 7), (5, 1.4, 7), (10, 2.3, 23), (4, 1.999, 7)])
def test_scales_size_the_output_in_float32_as_tensorrt_does(n, scale, cells):
    # float32(10) · float32(0.7) = 7 exactly, where float64 gives 6.9999999 and floor 6
    p = LAYER.resolve({"scales": scale}, (1, 1, n, n))
    assert LAYER.reference(np.ones((1, 1, n, n), np.float32), p).shape == (1, 1, cells, cells)


def test_bf16_leaves_the_scales_in_float32():
    # scales is an attribute of the layer, not a weight: a strongly typed network keeps it float32 (BF16 would
    # round 1.999 to 2 and give 8 × 8)
    r = evaluate("resize", {"scales": 1.999, "precision": "BF16"}, run=False)
    assert r.output.shape == (1, 1, 7, 7) == r.truth.shape
    assert not LAYER.param("scales").is_weight(r.params) and not LAYER.param("cubic_coeff").is_weight(r.params)


@needs_trt
def test_tensorrt_agrees_on_every_size_scales_give():
    """A seeded sample of (length, scale) pairs, with every pair whose float64 and float32 products floor apart."""
    from playground.trt import engine as eng

    backend = detect()
    rng = np.random.default_rng(5)
    pairs = [(int(n), round(float(s), 2)) for n, s in zip(rng.integers(1, 65, 12), rng.uniform(0.01, 4, 12))]
    pairs += [
        (n, s / 100)
        for n in range(1, 65)
        for s in range(1, 401)
        if math.floor(n * (s / 100)) != int(np.floor(np.float32(n) * np.float32(s / 100)))
    ][:12]
    for n, s in pairs:
        try:
            p = LAYER.resolve({"scales": f"{s},1"}, (1, 1, n, 1))
        except ValidationError:  # floor(n · s) = 0: the playground shows no empty output
            continue
        report = eng.build_engine(backend, LAYER, p, (1, 1, n, 1))
        expected = LAYER.reference(np.ones((1, 1, n, 1), np.float32), p).shape
        assert tuple(report.output_shape) == expected, (n, s, report.output_shape, expected)
