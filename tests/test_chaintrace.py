"""A chain's read maps (serve/chaintrace.py), which the hover trace composes, within their bounds; the kernel an engine
box is labelled with."""

import json

from playground.network import chain as C
from playground.network import chains
from playground.serve import chain_address as A
from playground.serve import chaintrace as V


def _starter(name):
    s = chains.find(name)
    return C.resolve(s.layers, s.params, s.input_shape)


def test_a_convolution_cell_reads_its_window_as_a_region_and_a_pointwise_layer_its_own_cell():
    maps = V.trace_maps(_starter("conv_relu"))  # a 3 × 3 Sobel kernel on 6 × 9: output 4 × 7
    conv = maps["convolution"]
    assert conv["sources"] == {"x": "input"} and len(conv["reads"]) == 4 * 7
    assert conv["reads"]["0,0,1,2"] == {"x": {"lo": [0, 0, 1, 2], "hi": [0, 0, 3, 4]}}
    assert maps["activation"] == {"sources": {"x": "convolution"}, "same": True}


def test_an_elementwise_of_one_shape_reads_the_same_cell_of_each_operand_and_a_broadcast_its_own():
    maps = V.trace_maps(_starter("conv_residual_relu"))
    assert maps["elementwise"] == {"sources": {"a": "convolution", "b": "input"}, "same": True}
    params = {"convolution.kernel_size_nd": "3,1", "elementwise.from.b": "input"}
    chain = C.resolve("convolution+elementwise", params, (1, 1, 3, 4))  # a 1×1×1×4 row added to each row of 3 × 4
    reads = V.trace_maps(chain)["elementwise"]["reads"]
    assert reads["0,0,2,3"] == {"a": [[0, 0, 0, 3]], "b": [[0, 0, 2, 3]]}


def test_a_window_is_a_region_only_where_it_is_every_cell_of_its_bounds_in_order():
    assert V.region([(0, 1), (0, 2), (1, 1), (1, 2)]) == {"lo": [0, 1], "hi": [1, 2]}
    assert V.region([(0, 1), (1, 1)]) == {"lo": [0, 1], "hi": [1, 1]}
    assert V.region([(0, 0), (0, 2)]) == [[0, 0], [0, 2]]  # a dilated window: two cells apart
    assert V.region([(1, 1), (0, 1)]) == [[1, 1], [0, 1]]  # out of order: the cells, in theirs
    assert V.region([(2, 3)]) == [[2, 3]]


def test_the_maps_stop_at_their_bounds_and_say_where(monkeypatch):
    chain = C.resolve("convolution+activation+convolution", {}, (1, 1, 40, 40))
    monkeypatch.setattr(V, "TRACE_CELLS", 1000)  # the first convolution's 38 × 38 output is over it
    maps = V.trace_maps(chain)
    assert "reads" not in maps["convolution"] and "more than the 1,000" in maps["convolution"]["stopped"]
    monkeypatch.setattr(V, "TRACE_CELLS", 10_000)
    monkeypatch.setattr(V, "TRACE_INTS", 10_000)  # 1,444 cells × a region's 8 numbers: the first map alone is over
    maps = V.trace_maps(chain)
    assert "list more than 10,000" in maps["convolution"]["stopped"] and "reads" not in maps["convolution2"]
    monkeypatch.setattr(V, "TRACE_INTS", 10**6)
    assert "reads" in V.trace_maps(chain)["convolution2"]


def test_a_window_past_its_limit_travels_as_its_region():
    chain = C.resolve("normalization", {}, (1, 4, 9, 9))  # each cell reads its whole group: 81 × group cells
    reads = V.trace_maps(chain)["normalization"]["reads"]
    assert all(isinstance(w, dict) and set(w["x"]) == {"lo", "hi"} for w in reads.values())
    assert len(json.dumps(reads)) < 200 * len(reads)


def test_a_stub_kernel_is_named_by_its_layer_and_type():
    assert V.kernel_of({"name": "convolution_myl0_1", "type": "correlation", "tactic": "__myelin_CASK_STUB"}) == (
        "convolution_myl0_1 (correlation)"
    )
    assert V.kernel_of({"name": "x", "type": "kgen", "tactic": "__myl_Move_0x9b"}) == "__myl_Move_0x9b"


def test_the_read_maps_follow_an_answer_with_the_engines_verdict_not_with_the_answer():
    from playground.serve import chainview
    from playground.trt.backend import detect

    address = A.from_query({A.STARTER_KEY: "conv_relu"})
    spec, _ = chainview.spec_of(address)
    ev = C.evaluate(address.names, address.raw(), address.input(), build_engine=False)
    answer = chainview.answer(spec, ev.chain, ev, detect())
    assert "trace" not in answer and answer["chain"]["engine"] == []  # the boxes wait for the verdict
    follow = chainview.verdict(ev, detect())
    assert follow["trace"] == V.trace_maps(ev.chain) and "reads" in follow["trace"]["convolution"]
