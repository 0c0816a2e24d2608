"""How a tensor is drawn, decided by protocol.grid alone: its planes, rows and columns for ranks 0 … 5, a model's
node lifted to its layer's rank drawn at the model's rank, and every part of an answer (the planes sent, the planes
route's pages, the read map's extent) following that one mapping."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from playground.network.core import evaluate
from playground.onnx.opening import open_node
from playground.serve import protocol


@pytest.mark.parametrize(
    ("shape", "planes", "rows", "cols", "count", "h", "w"),
    [
        ((), [], None, None, 1, 1, 1),  # one cell
        ((7,), [], None, 0, 1, 1, 7),  # one row
        ((3, 5), [], 0, 1, 1, 3, 5),  # one matrix
        ((2, 3, 5), [0], 1, 2, 2, 3, 5),  # B matrices
        ((2, 3, 4, 5), [0, 1], 2, 3, 6, 4, 5),  # N · C planes
        ((1, 2, 3, 4, 5), [0, 1, 2], 3, 4, 6, 4, 5),  # N · C · D planes
    ],
)
def test_each_rank_is_drawn_as_planes_of_its_last_two_axes(shape, planes, rows, cols, count, h, w):
    g = protocol.grid(shape)
    assert g == {"planes": planes, "rows": rows, "cols": cols}
    assert protocol.drawn_shape(shape, g) == shape  # nothing left out of a tensor not lifted
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    p = protocol.as_planes(a, g)
    assert p.shape == (count, h, w)
    if len(shape) >= 2:  # each plane is the tensor's slice at its leading index, row by row
        for k, index in enumerate(np.ndindex(*shape[:-2])):
            assert np.array_equal(p[k], a[index])
    assert np.array_equal(p.ravel(), a.ravel())  # the flat position of a cell is its index's, raveled


@pytest.mark.parametrize(
    ("shape", "lifted", "drawn", "planes", "rows", "cols"),
    [
        ((1, 16, 16, 1), (3,), (1, 16, 16), [0], 1, 2),  # a softmax's (1, 16, 16), a 1 appended: one matrix
        ((16, 16, 1, 1), (2, 3), (16, 16), [], 0, 1),  # rank 2: one 16 × 16 matrix
        ((5, 1, 1, 1), (1, 2, 3), (5,), [], None, 0),  # rank 1: one row
        ((1, 1, 16, 16), (0,), (1, 16, 16), [1], 2, 3),  # a matrix product's 1 put before
        ((1, 4, 1, 9), (2,), (1, 4, 9), [0], 1, 3),  # a Conv1d's H inserted: its channels × length
        ((1, 16, 16, 3), (3,), (1, 16, 16, 3), [0, 1], 2, 3),  # a lifted axis that is not 1 (a new shape): drawn
    ],
)
def test_a_model_nodes_lifted_axes_are_not_drawn(shape, lifted, drawn, planes, rows, cols):
    g = protocol.grid(shape, lifted)
    assert g == {"planes": planes, "rows": rows, "cols": cols}
    assert protocol.drawn_shape(shape, g) == drawn
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    assert np.array_equal(protocol.as_planes(a, g), protocol.as_planes(a.reshape(drawn)))


@pytest.mark.parametrize(
    ("shape", "model", "lifted"),
    [
        ((1, 16, 16, 1), (1, 16, 16), (3,)),
        ((1, 1, 16, 16), (16, 16), (0, 1)),  # a MatMul's constant B, aligned then lifted
        ((1, 4, 1, 9), (1, 4, 9), (2,)),
        ((1, 1, 1, 7), (7,), (0, 1, 2)),
        ((1, 16, 32, 1), (1, 16, 16), ()),  # not the model's shape with 1s added: drawn as it is
        ((1, 16, 16, 1), (1, 16, 16, 1), ()),
    ],
)
def test_the_axes_a_tensor_was_lifted_by_are_its_1s_beside_the_models_shape(shape, model, lifted):
    assert protocol.lifted_axes(shape, model) == lifted
    if lifted:
        assert protocol.drawn_shape(shape, protocol.grid(shape, lifted)) == model


def test_a_lifted_tensors_entry_sends_its_matrix_and_the_route_pages_it_as_the_answer_numbered_it():
    a = np.random.default_rng(0).uniform(-1, 1, (3, 16, 16, 1)).astype(np.float32)  # (3, 16, 16) lifted
    t = protocol.tensor(a, page=(0, 2), lifted=(3,))
    assert t["shape"] == [3, 16, 16, 1] and t["grid"] == {"planes": [0], "rows": 1, "cols": 2}
    assert [(p, v.shape) for p, v in t["_planes"]] == [(0, (16, 16)), (1, (16, 16))]
    assert np.array_equal(t["_planes"][1][1], a[1, :, :, 0])
    kept = protocol.arrays({"figures": [{"tensor": t}]})[t["id"]]
    assert kept.shape == (3, 16, 16)  # at its drawn shape: the route's planes are the answer's
    route = protocol.tensor(kept, frozenset(), (2, 1), t["id"])
    assert route["_planes"][0][0] == 2 and np.array_equal(route["_planes"][0][1], a[2, :, :, 0])
    assert protocol.page_bytes(kept.shape, (2, 1)) == 4 * 16 * 16
    whole = protocol.tensor(a, page=(0, 3), lifted=(3,))
    out = {"figures": [{"tensor": whole}]}
    blob = protocol._blob(out)
    assert np.array_equal(protocol.whole(whole, blob), a)


def test_the_extent_is_every_axis_as_far_as_the_windows_read():
    shape = (1, 16, 16, 1)
    windows = [[[0, -1, 3, 0], [0, 16, 2, 0]], {"lo": [0, 0, -2, 0], "hi": [0, 3, 17, 0]}, [[4, 1]]]
    # every axis: the browser draws the padding of the rows and columns its grid names (here axes 1 and 2); a
    # shorter cell is of the last axes
    assert protocol.extent(shape, windows) == {"lo": [0, -1, -2, 0], "hi": [0, 16, 17, 1]}
    assert protocol.extent((7,), [[[-2], [8]]]) == {"lo": [-2], "hi": [8]}
    assert protocol.extent((), []) is None  # a scalar: no padding


def _model():
    """A MatMul on a (1, 16, 16) token tensor, then a softmax over its last axis: the softmax node opened."""
    w = np.random.default_rng(1).uniform(-1, 1, (16, 16)).astype(np.float32)
    g = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
            helper.make_node("Softmax", ["m"], ["y"], name="softmax", axis=-1),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 16])],
        [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.ravel())],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("node", "lifted"), [("softmax", (3,)), ("matmul", (0,))])
def test_a_model_nodes_answer_draws_its_tensors_at_the_models_rank(node, lifted):
    opened = open_node(_model(), node)
    assert opened.onnx_shape == (1, 16, 16) and opened.lifted == lifted
    x = np.random.default_rng(2).uniform(-4, 4, opened.shape).astype(np.float32)
    layer = opened.layer
    ev = evaluate(layer.name, opened.raw, opened.to_layer(x), run=False)
    out = protocol.answer(layer, ev, opened=opened)
    for f in out["figures"]:
        t = f["tensor"]
        if len(t["shape"]) == 4:  # the layer's rank-4 tensors (its input, output, error map): one 16 × 16 matrix
            want = (16, 16) if f["which"] == "input.b" else (1, 16, 16)  # the MatMul's constant B at its own rank
            assert protocol.drawn_shape(t["shape"], t["grid"]) == want, f["which"]
            assert [v.shape for _, v in t["_planes"]] == [(16, 16)], f["which"]
    assert [f["which"] for f in out["figures"]] == (
        ["input", "output"] if node == "softmax" else ["input", "input.b", "output"]
    )
    assert out["cells"]["extent"] == {"lo": [0, 0, 0, 0], "hi": [0, 0, 15, 15] if node == "matmul" else [0, 15, 15, 0]}
    # a parameter changed on the node's page: still drawn at the model's rank (the node no longer stands as it is)
    moved = evaluate(layer.name, opened.raw | {"precision": "FP16"}, opened.to_layer(x), run=False)
    assert not opened.stands(moved)
    t = next(f["tensor"] for f in protocol.answer(layer, moved, opened=opened)["figures"] if f["which"] == "output")
    assert protocol.drawn_shape(t["shape"], t["grid"]) == (1, 16, 16)
    # the same tensors on the layer's own page (no node): its rank-4 look, the last two axes
    plain = protocol.answer(layer, ev)
    t = next(f["tensor"] for f in plain["figures"] if f["which"] == "output")
    assert t["grid"] == protocol.grid(tuple(t["shape"]))


def test_the_stages_scripts_read_the_grid_and_never_pick_a_tensors_axes_themselves():
    """One owner: protocol.grid. A script that takes a shape's last two axes (or the axes before them) as a plane's
    would draw a lifted node's tensor otherwise than the server sends its planes."""
    import re
    from pathlib import Path

    import playground

    found = [
        f"{f.name}:{i}: {line.strip()}"
        for f in sorted((Path(playground.__file__).parent / "stage").glob("*.js"))
        for i, line in enumerate(f.read_text().splitlines(), 1)
        if re.search(r"shape\.length - [23]|shape\.slice\(0, -2\)|shape\[shape\.length - [12]\]", line.split("//")[0])
    ]
    assert found == []
