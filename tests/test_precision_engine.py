"""The precision analysis' engine figures (`precision_engine`): each node's debug tensor against its FP32 real tensor,
in `nodes[i].precision.engine`; where no engine runs, `precision.engine` says why. The TensorRT calls it makes are
checked against the real bindings of full TensorRT 10.x and 11.x (as `test_tensorrt_api` checks the rest); the run
itself needs a GPU and full TensorRT (`-m gpu`)."""

from __future__ import annotations

import ast
import json
import sys

import numpy as np
import pytest

from playground.model import precision_engine as pe
from playground.model import precision_model as pm
from playground.model.precision_lessons import LESSONS
from playground.onnx import reading
from tests.tensorrt_api import static_uses
from tests.test_tensorrt_api import API, full_tensorrt, run, wheels  # noqa: F401 - fixtures


def _lesson(name):
    lesson = LESSONS[name]
    return reading.load_model(lesson.build().SerializeToString(), f"{name}.onnx"), lesson


def test_engine_tensors_land_in_the_json_against_the_fp32_tensors():
    model, lesson = _lesson("layernorm_fp16")
    seen = {}
    perturbed, fused = "std", "normed"  # the outputs of /ln/Sqrt and /ln/Div

    def fake_engine(planned: bytes, feeds: dict) -> dict:
        seen["model"], seen["feeds"] = planned, feeds
        tensors = {}
        for name, value in seen["values"].items():
            if name != fused:
                tensors[name] = value + (np.float32(0.25) if name == perturbed else np.float32(0))
        return tensors | {"internal_reformat_0": np.zeros(3, np.float32)}  # a tensor no node's output names

    # the FP32 tensors the fake engine echoes: the analysis' own (ONNX Runtime's), read from a first study
    _, c = pm.study(model, "lesson", None, lesson.precision)
    seen["values"] = {s.node.output[0]: c.values[s.node.output[0]] for s in c.steps}
    answer, c = pm.study(model, "lesson", None, lesson.precision, engine_tensors=fake_engine)
    answer = json.loads(json.dumps(answer))  # JSON-able as `--json` writes it

    # what the engine was given: the model with its casts placed (every opened node in FP16), and the feeds
    planned = reading.library().load_model_from_string(seen["model"])
    casts = [n for n in planned.graph.node if n.op_type == "Cast"]
    assert casts and {a.i for n in casts for a in n.attribute if a.name == "to"} == {1, 10}
    assert set(seen["feeds"]) == {i.name for i in model.graph.input} == set(answer["inputs"])

    info = answer["precision"]["engine"]
    opened = [s for s in c.steps if s.opened]
    assert info["ran"] is True and info["debug_tensors"] == len(seen["values"])
    assert info["nodes_matched"] == len(opened) - 1 and info["unmatched_tensors"] == 1
    by_output = {s.node.output[0]: n for s, n in zip(c.steps, answer["nodes"])}
    policy = pm.Policy()
    atol, rtol = policy.tolerances
    for output, node in by_output.items():
        figures = node["precision"]["engine"]
        if output == fused:
            assert figures == {"missing": pe.FUSED}
        elif output == perturbed:
            expected = pm.metrics(c.values[output] + np.float32(0.25), c.values[output], atol, rtol)
            assert figures == pytest.approx(json.loads(json.dumps(expected)))
            assert figures["max_abs"] == pytest.approx(0.25) and figures["elementwise"] is False
        else:
            assert figures["max_abs"] == 0 and figures["elementwise"] is True
            assert figures["cosine"] == pytest.approx(1.0)
        # the engine's figures sit beside the analysis' own, in the same metrics
        assert set(figures) == {"missing"} or set(figures) == set(node["precision"]["accumulated"])


def test_where_no_engine_runs_the_answer_says_why_and_no_node_has_engine_figures():
    model, lesson = _lesson("softmax_fp16")
    answer, _ = pm.study(model, "lesson", None, lesson.precision)  # this machine: no TensorRT runs an engine
    info = answer["precision"]["engine"]
    assert info["ran"] is False and info["why_not"].startswith(pe.WHY_NOT)
    assert all("engine" not in n["precision"] for n in answer["nodes"] if "precision" in n)


def test_an_engine_that_fails_is_said_and_the_analysis_stands():
    model, lesson = _lesson("softmax_fp16")

    def refusing(planned, feeds):
        raise RuntimeError("tensorrt refused the network: no kernel")

    answer, _ = pm.study(model, "lesson", None, lesson.precision, engine_tensors=refusing)
    info = answer["precision"]["engine"]
    assert info == {"ran": False, "why_not": "RuntimeError: tensorrt refused the network: no kernel"}
    assert answer["precision"]["first_divergence"]["node"] == lesson.first


# -- the TensorRT calls, against the real bindings ---------------------------------------------------------------
VARIABLES = {"network": "INetworkDefinition", "context": "IExecutionContext"}


def module_uses() -> list:
    """Every TensorRT use `precision_engine` makes: `trt.X`, the calls and settings on the network and the context,
    and the listener's override of IDebugListener.process_debug_tensor (called by TensorRT with its arguments)."""
    source = open(pe.__file__).read()
    uses = {u for u in static_uses(source) if u[0] in ("module", "member")}
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
            if isinstance(target, ast.Name) and target.id in VARIABLES:
                keywords = tuple(sorted(k.arg for k in node.keywords))
                uses.add(("call", VARIABLES[target.id], node.func.attr, len(node.args), keywords))
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in VARIABLES:
                    uses.add(("set", VARIABLES[t.value.id], t.attr))
        if isinstance(node, ast.ClassDef) and any(ast.unparse(b) == "trt.IDebugListener" for b in node.bases):
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef) and fn.name != "__init__":
                    uses.add(("call", "IDebugListener", fn.name, len(fn.args.args) - 1, ()))
    return sorted(([*u[:4], list(u[4])] if u[0] == "call" else list(u) for u in uses), key=repr)


def test_the_module_uses_are_read_from_its_source():
    uses = {tuple(u[:3]) for u in module_uses()}
    assert {
        ("module", "IDebugListener"),
        ("call", "INetworkDefinition", "mark_unfused_tensors_as_debug_tensors"),
        ("call", "IExecutionContext", "set_debug_listener"),
        ("call", "IExecutionContext", "set_all_tensors_debug_state"),
        ("set", "IExecutionContext", "unfused_tensors_debug_state"),
        ("call", "IDebugListener", "process_debug_tensor"),
    } <= uses


@pytest.mark.parametrize(
    "version, lacks",
    [
        (
            "10.0",
            [
                "INetworkDefinition.mark_unfused_tensors_as_debug_tensors does not exist",
                "IExecutionContext.unfused_tensors_debug_state does not exist",
            ],
        ),
        ("10.16", []),
        ("11.4", []),
    ],
)
def test_every_tensorrt_call_of_the_engine_figures_exists_in_full_tensorrt(version, lacks, full_tensorrt, tmp_path):  # noqa: F811
    uses = tmp_path / "uses.json"
    uses.write_text(json.dumps(module_uses() + [["call", "IDebugListener", "process_debug_tensor", 5, []]]))
    out = tmp_path / "problems.json"
    env = full_tensorrt(version)
    done = run([sys.executable, str(API), "check", str(uses), str(out)], env)
    assert done.returncode == 0, done.stderr[-3000:]
    # the sentinel (an override taking one argument too few) shows the signature is read, not only the name
    sentinel = "IDebugListener.process_debug_tensor takes no 5 positional arguments with keywords []"
    assert sorted(json.loads(out.read_text())["problems"]) == sorted(lacks + [sentinel])
    # where the API is missing (10.0), the module says so rather than failing mid-build
    code = (
        "import types, tensorrt as trt\nfrom playground.model.precision_engine import why_not\n"
        "print(why_not(types.SimpleNamespace(can_run=True, trt=trt, name='tensorrt', version=trt.__version__)))"
    )
    done = run([sys.executable, "-c", code], env)
    assert done.returncode == 0, done.stderr[-3000:]
    said = done.stdout.strip().splitlines()[-1]
    assert said == (
        "None"
        if not lacks
        else "tensorrt 10.0.1 has no mark_unfused_tensors_as_debug_tensors (TensorRT 10.x before it)"
    )


# -- for real ------------------------------------------------------------------------------------------------------
def _why_not_here() -> str | None:
    from playground.trt.backend import detect

    return pe.why_not(detect())


WHY_NOT_HERE = _why_not_here()


@pytest.mark.skipif(
    WHY_NOT_HERE is not None,
    reason=f"needs a GPU and full TensorRT (10.x with the debug-tensor API, or 11.x): {WHY_NOT_HERE}",
)
@pytest.mark.gpu
@pytest.mark.parametrize("name", ["int8_saturated_conv", "layernorm_fp16"])
def test_engine_figures_for_real_on_a_lesson(name):
    model, lesson = _lesson(name)
    answer, c = pm.study(model, name, None, lesson.precision)
    info = answer["precision"]["engine"]
    assert info["ran"] is True and info["debug_tensors"] >= 1, info
    policy = pm.Policy()
    out = next(n for s, n in zip(c.steps, answer["nodes"]) if s.node.output[0] == model.graph.output[0].name)
    engine, accumulated = out["precision"]["engine"], out["precision"]["accumulated"]
    assert "missing" not in engine  # the model's output is the engine's output: always there
    # the engine and the analysis' composition agree on whether the output meets the policy
    assert (policy.crosses(engine) is None) == (policy.crosses(accumulated) is None), (engine, accumulated)
    json.dumps(answer)


@pytest.mark.gpu
def test_the_listener_copies_a_device_tensor_to_the_host():
    """The listener's copy on a GPU without TensorRT: a stand-in module gives it its base class and the enum members
    by name; the address comes as TensorRT passes it, a capsule, and as a plain integer."""
    import ctypes
    import types

    import ml_dtypes

    from playground.trt import runner

    class Base:
        def __init__(self):
            pass

    member = lambda name: types.SimpleNamespace(name=name)  # noqa: E731
    listener = pe.listener_for(types.SimpleNamespace(IDebugListener=Base))
    make = ctypes.pythonapi.PyCapsule_New
    make.restype, make.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7.5
    b = (x / 3).astype(ml_dtypes.bfloat16)
    with runner.Stream() as stream, runner.DeviceBuffer(x.nbytes) as dx, runner.DeviceBuffer(b.nbytes) as db:
        dx.copy_from_host(x, stream)
        db.copy_from_host(b, stream)
        stream.synchronize()
        assert listener.process_debug_tensor(
            make(dx.ptr, None, None), member("DEVICE"), member("FLOAT"), (2, 3, 4), "x", stream.handle
        )
        assert listener.process_debug_tensor(db.ptr, member("DEVICE"), member("BF16"), [2, 3, 4], "b", stream.handle)
    np.testing.assert_array_equal(listener.tensors["x"], x)
    assert listener.tensors["b"].dtype == b.dtype and listener.tensors["b"].tobytes() == b.tobytes()
    h = np.ones(5, np.float32) * 3
    assert listener.process_debug_tensor(h.ctypes.data, member("HOST"), member("FLOAT"), (5,), "h", 0)
    np.testing.assert_array_equal(listener.tensors["h"], h)
