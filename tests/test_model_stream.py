"""A whole model judged a segment at a time (`model.stream`): a model whose tensors together pass
PLAYGROUND_MODEL_MAX_MB but whose live set fits is judged whole, in several segments, each tensor dropped after its
last reader, with the answer of one run that marks every tensor; a model whose one node's tensors pass it is refused
naming the node, its tensor and the setting; the run's tensors are kept as they come (`Records.writer`) and read
back checked."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from playground.base.errors import ValidationError  # noqa: E402
from playground.model import kept, stream, whole  # noqa: E402
from playground.onnx import reading, runtime  # noqa: E402
from playground.trt.cache import Records  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPE = (1, 4, 128, 128)  # 65,536 float32 values: 256 KiB a tensor
CHAIN = [  # (op, inputs, output): two skips (x to n2, a2 to n5), so some tensors live across several nodes
    ("Mul", ["x", "two"], "m0"),
    ("Relu", ["m0"], "r1"),
    ("Add", ["r1", "x"], "a2"),
    ("Sigmoid", ["a2"], "s3"),
    ("Mul", ["s3", "two"], "m4"),
    ("Add", ["m4", "a2"], "a5"),
    ("Relu", ["a5"], "r6"),
    ("Mul", ["r6", "w"], "m7"),  # a weight of 16,384 values: handed to each session as an array
    ("Tanh", ["m7"], "t8"),
    ("Add", ["t8", "r6"], "y"),
]


def chain_model(shape=SHAPE, opset=17, chain=CHAIN):
    """The chain on x of `shape`: 11 tensors of 256 KiB (2.75 MiB together); at most three alive at once (768 KiB),
    beside its 64 KiB of weights."""
    attrs = {"broadcast": 1} if opset < 7 else {}  # Mul-6 broadcasts a weight only when told
    nodes = [
        helper.make_node(op, ins, [out], name=f"/n{i}", **(attrs if ins[-1] in ("two", "w") else {}))
        for i, (op, ins, out) in enumerate(chain)
    ]
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info(chain[-1][2], TensorProto.FLOAT, list(shape))],
        [numpy_helper.from_array(np.float32(v), k) for k, v in (("two", 2), ("half", 0.5))]
        + [numpy_helper.from_array(np.linspace(-1, 1, 128 * 128, dtype=np.float32).reshape(1, 1, 128, 128), "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _load(model):
    return reading.load_model(model.SerializeToString(), "chain.onnx")


@pytest.fixture
def arena():
    """ONNX Runtime's arena registered at the default cap before a test lowers PLAYGROUND_MODEL_MAX_MB: the arena is
    the process's, registered once, and later tests run under it."""
    runtime.session(chain_model((1, 1, 1, 1)).SerializeToString())


def _counted(monkeypatch):
    """Each segment's count of tensors held when it yields, and the sessions made."""
    seen, sessions, real_run, real_session = [], [], stream.run, runtime.session

    def run(*a, **k):
        for ready, values, made in real_run(*a, **k):
            seen.append(len(values))
            yield ready, values, made

    monkeypatch.setattr(stream, "run", run)
    monkeypatch.setattr(runtime, "session", lambda *a: sessions.append(1) or real_session(*a))
    return seen, sessions


@pytest.mark.parametrize("opset", [17, 6])
def test_a_model_over_the_budget_together_but_not_at_once_is_judged_whole_as_one_run_judges_it(
    monkeypatch, arena, opset
):
    """Under a 1 MiB budget the chain's 2.75 MiB of tensors load (768 KiB at once) and are judged in segments: every
    node agrees, with the same verdicts and max |diff| as one run marking every tensor (the default budget), tensors
    dropped on the way (never all held). Opset 6 runs converted (`whole.for_runtime`), its conversion segmented."""
    model = chain_model(opset=opset)
    one = whole.analyze(_load(model), "chain.onnx", engine=False)
    assert len(one["nodes"]) == len(CHAIN) and one["counts"]["agreeing"] == len(CHAIN), one["nodes"]
    monkeypatch.setenv("PLAYGROUND_MODEL_MAX_MB", "1")
    seen, sessions = _counted(monkeypatch)
    cut = whole.analyze(_load(model), "chain.onnx", engine=False)
    assert cut["counts"] == one["counts"] and cut["output"] == one["output"] and cut["notes"] == one["notes"]
    for a, b in zip(cut["nodes"], one["nodes"]):
        assert a == b  # verdict, max |diff|, worst cell, shapes: all the same, in the same order
    assert len(sessions) >= len(seen) >= 3  # several segments ran, a session each (opset 6's conversion has its own)
    assert max(seen) <= 4 < len(CHAIN) + 1  # never all 11 tensors: those alive and the segment's own


def test_the_segments_are_extracted_and_tensors_dropped_after_their_last_reader(monkeypatch, arena):
    """Each segment is its own model from onnx.utils.Extractor; after a segment, what no later node reads is gone,
    the graph's output stays to the end."""
    extracted, real = [], onnx.utils.Extractor.extract_model
    monkeypatch.setattr(
        onnx.utils.Extractor,
        "extract_model",
        lambda self, i, o: extracted.append((list(i), list(o))) or real(self, i, o),
    )
    model = _load(chain_model())
    monkeypatch.setenv("PLAYGROUND_MODEL_MAX_MB", "1")
    from playground.base import budget

    with budget.whole_model():
        steps = [(ready, set(values), set(made)) for ready, values, made in stream.run(model, whole.feeds(model)[0])]
    assert len(extracted) == len(steps) > 1
    assert {o for _, outs in extracted for o in outs} == {out for *_, out in CHAIN}  # every tensor made, once
    assert sum(len(made) for _, _, made in steps) == len(CHAIN) + 1  # the input with the first
    assert [r for r, _, _ in steps][-1] == len(CHAIN) and steps == sorted(steps, key=lambda s: s[0])
    last = {t: max(i for i, (_, ins, _) in enumerate(CHAIN) if t in ins) for _, ins, _ in CHAIN for t in ins}
    for (ready, _, _), (_, held, made) in zip(steps, steps[1:]):
        # what a segment is handed, but for its own tensors and the graph's output: read by a node not yet judged
        assert all(t == "y" or last[t] >= ready for t in held - made), (ready, held - made)
    assert "y" in steps[-1][1] and "x" not in steps[-1][1] and "a2" not in steps[-1][1]


def test_a_node_whose_own_tensors_pass_the_budget_is_refused_naming_it_and_the_setting(tmp_path, monkeypatch):
    """One Mul: x (1×4×256×256, 1 MiB) and its 1 MiB output, with the weights 2.1 MiB, past a 1 MiB budget: refused
    on loading, naming the node, its largest tensor and PLAYGROUND_MODEL_MAX_MB; the command exits 2."""
    model = chain_model((1, 4, 256, 256), chain=[("Mul", ["x", "two"], "y")])
    monkeypatch.setenv("PLAYGROUND_MODEL_MAX_MB", "1")
    with pytest.raises(ValidationError) as err:
        _load(model)
    words = str(err.value)
    assert "node '/n0' (Mul), its largest tensor 'x' (1.0 MiB)" in words and "(PLAYGROUND_MODEL_MAX_MB)" in words
    assert "at once: 2.1 MiB (its weights 0.1 MiB, the tensors alive then 1.0 MiB, the node's outputs 1.0 MiB)" in words
    assert "the whole-model budget is 1 MiB" in words
    path = tmp_path / "big.onnx"
    onnx.save(model, path)
    env = os.environ | {"PLAYGROUND_MODEL_MAX_MB": "1", "PLAYGROUND_MODEL_CACHE": str(tmp_path / "kept")}
    ran = subprocess.run(
        [sys.executable, "-m", "playground", "model", str(path), "--no-engine"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert ran.returncode == 2 and "node '/n0' (Mul)" in ran.stderr and "PLAYGROUND_MODEL_MAX_MB" in ran.stderr
    assert "Traceback" not in ran.stderr


def test_the_streamed_record_reads_back_every_tensor_checked(tmp_path, monkeypatch, arena):
    """The tensors of a segmented run, kept as they came, read back one by one equal to one run's; the record cut
    short is refused (and deleted) as any damaged record is."""
    monkeypatch.setenv("PLAYGROUND_ENGINE_CACHE", str(tmp_path / "cache"))
    data = chain_model().SerializeToString()
    digest = hashlib.sha256(data).hexdigest()
    model = _load(chain_model())
    want = whole.run_all(model, whole.feeds(model)[0])
    monkeypatch.setenv("PLAYGROUND_MODEL_MAX_MB", "1")
    seen, _ = _counted(monkeypatch)
    answer = kept.analysis(digest, "chain.onnx", lambda: reading.load_model(data), engine=False)
    assert answer["cache"]["tensors_kept"] is True and len(seen) > 1
    assert set(want) == {"x"} | {out for *_, out in CHAIN}
    for name, array in want.items():
        np.testing.assert_array_equal(kept.tensor(digest, name), array)
    store = tmp_path / "cache" / "models"
    assert not list(store.glob(".tmp-*"))  # the payload's temporary file went with the record's writing
    (f,) = store.glob("*.tensors")
    f.write_bytes(f.read_bytes()[:-100])
    notes = []
    assert Records(store).open(f.stem, ".tensors", notes) is None and not f.exists()
    assert "truncated or extended" in notes[0]


def test_a_record_writer_keeps_nothing_past_the_cap_or_unfinished(tmp_path):
    """Parts written one by one read back checked; a record past the cap, or one left unfinished, leaves no file."""
    store = Records(tmp_path, cap_bytes=1000)
    with store.writer("k", ".r") as w:
        for i in range(3):
            w.add(f"p{i}", bytes([i]) * 100)
        assert w.finish({"n": 3})
    with store.open("k", ".r") as record:
        assert record.header == {"n": 3} and [record.part(f"p{i}") for i in range(3)] == [
            bytes([i]) * 100 for i in range(3)
        ]
    with store.writer("big", ".r") as w:
        w.add("a", b"\0" * 600)
        w.add("b", b"\0" * 600)  # past the 1,000-byte cap
        assert not w.finish({})
    with pytest.raises(RuntimeError), store.writer("cut", ".r") as w:
        w.add("a", b"\1" * 10)
        raise RuntimeError("the run stopped")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.r"]


def test_a_model_with_a_subgraph_runs_in_one_segment(monkeypatch):
    """An If's branches read the outer graph's tensors by name, which Extractor does not see: such a model is one
    segment, however small the budget."""
    branch = lambda out, op: helper.make_graph(  # noqa: E731
        [helper.make_node(op, ["m"], [out])], op, [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)]
    )
    nodes = [
        helper.make_node("Mul", ["x", "two"], ["m"], name="/mul"),
        helper.make_node("ReduceSum", ["m"], ["s"], name="/sum", keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"], name="/gt"),
        helper.make_node(
            "If", ["c"], ["y"], name="/if", then_branch=branch("p", "Relu"), else_branch=branch("q", "Neg")
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "branch",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.float32(v), k) for k, v in (("two", 2), ("zero", 0))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    monkeypatch.setenv("PLAYGROUND_MODEL_MAX_MB", "1")
    plan = stream.Plan(model, model, whole.feeds(model)[0])
    assert plan.cuts == [0, len(nodes)]
    monkeypatch.delenv("PLAYGROUND_MODEL_MAX_MB")
    assert len(stream.Plan(chain_model(), chain_model(), {"x": np.zeros(SHAPE, np.float32)}).cuts) == 2  # fits one


def test_a_tensor_onnx_runtime_cannot_hand_back_is_never_cut_across(monkeypatch, arena):
    """A bfloat16 tensor (a Cast to it and back) stays inside one segment: ONNX Runtime cannot hand it to NumPy nor
    take it again. The answer is one run's (the Casts listed, the float nodes judged); the chain's weight, which no
    node reads here, is handed to no session."""
    chain = [
        ("Mul", ["x", "two"], "m0"),
        ("Cast", ["m0"], "b1"),
        ("Cast", ["b1"], "f2"),
        ("Relu", ["f2"], "r3"),
        ("Sigmoid", ["r3"], "y"),
    ]
    model = chain_model(chain=chain)
    model.graph.node[1].attribute.append(helper.make_attribute("to", TensorProto.BFLOAT16))
    model.graph.node[2].attribute.append(helper.make_attribute("to", TensorProto.FLOAT))
    one = whole.analyze(_load(model), "cast.onnx", engine=False)
    assert "onnxruntime_error" not in one and one["counts"]["agreeing"] == 3, one
    monkeypatch.setenv("PLAYGROUND_MODEL_MAX_MB", "1")
    loaded = _load(model)
    plan = stream.Plan(loaded, loaded, whole.feeds(loaded)[0])
    assert len(plan.cuts) > 3 and 2 not in plan.cuts  # cut between every node but the two Casts
    cut = whole.analyze(loaded, "cast.onnx", engine=False)
    assert cut["nodes"] == one["nodes"] and cut["output"] == one["output"]
