"""Chains: the model (keys, sources, shapes, budgets, refusals), the starter chains' outputs against an independent
NumPy composition, their engines built by TensorRT-RTX and mapped onto the chain, and the CLI's contract."""

import json
import math

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.cli import main
from playground.layers import LAYERS
from playground.network import chain as C
from playground.network import chains
from playground.trt import engine as eng
from playground.trt.backend import detect

needs_trt = pytest.mark.skipif(not detect().can_build, reason="no TensorRT module installed")


# -- the model ---------------------------------------------------------------------------------------------------
def test_a_repeated_layer_is_keyed_by_its_count():
    assert C.keys_of(["convolution", "activation", "convolution", "convolution"]) == (
        "convolution",
        "activation",
        "convolution2",
        "convolution3",
    )


def test_each_layer_reads_the_previous_output_and_a_second_input_the_chain_input():
    c = C.resolve(
        "convolution+elementwise+activation",
        {"convolution.padding_nd": "1,1", "convolution.stride_nd": "1,1"},
        (1, 1, 5, 7),
    )
    assert c.keys == ("convolution", "elementwise", "activation")
    assert c.links[1].sources == {"a": "convolution", "b": C.INPUT}
    assert c.links[2].sources == {"x": "elementwise"}
    assert [link.output_shape for link in c.links] == [(1, 1, 5, 7)] * 3


def test_a_chain_resolves_again_from_its_raw_parameters_and_sources():
    s = chains.find("leaky_by_hand")
    c = C.resolve(s.layers, s.params, s.input_shape)
    assert c.raw()["elementwise"]["from.b"] == "scale" and c.raw()["activation"]["from"] == "input"
    again = C.resolve(s.layers, c.raw(), s.input_shape)
    assert [link.sources for link in again.links] == [link.sources for link in c.links]
    assert "from" not in c.raw()["scale2"]  # the default source is not written


def test_shapes_follow_the_chain():
    c = C.resolve(
        ["convolution", "convolution"],
        {"convolution.stride_nd": "2,2", "convolution2.kernel_size_nd": "2,2"},
        (1, 1, 9, 11),
    )
    assert c.links[0].output_shape == (1, 1, 4, 5)  # (9 − 3) // 2 + 1, (11 − 3) // 2 + 1
    assert c.links[1].shapes == {"x": (1, 1, 4, 5)} and c.links[1].output_shape == (1, 1, 3, 4)


@pytest.mark.parametrize(
    "names, raw, needle",
    [
        ("convolution+convolution", {"convolution2.stride_nd": "0,2"}, "convolution2.stride_nd: must be between"),
        ("convolution+activation", {"convolution2.stride_nd": "2,2"}, "convolution2 names no layer of this chain"),
        ("convolution+activation", {"stride_nd": "2,2"}, "chain.stride_nd: must be KEY.PARAMETER"),
        ("convolution+activation", {"activation.nonsense": 1}, "activation.nonsense: is not a parameter"),
        (
            "convolution+elementwise",
            {},
            "elementwise.input.b: B (1, 1, 6, 9) does not broadcast against A (1, 1, 4, 7)",
        ),
        ("activation+activation", {"activation2.from": "activation3"}, "activation2.from: must be input or an earlier"),
        ("activation+activation", {"activation2.from.q": "input"}, "activation2.from.q: 'q' is not an input"),
        ("activation+activation", {"activation2.from": "input"}, "activation.from: its output feeds no later layer"),
        ("activation+nosuch", {}, "chain.layers: 'nosuch' is not a layer"),
        ("+".join(["activation"] * 7), {}, "chain.layers: at most 6 layers"),
    ],
)
def test_a_refused_layer_is_named_by_its_key_and_rule(names, raw, needle):
    with pytest.raises(ValidationError) as info:
        C.resolve(names, raw)
    assert needle in str(info.value)


def test_a_cell_is_traced_back_through_every_layer_to_the_input():
    c = C.resolve("convolution+activation+convolution", {}, (1, 1, 8, 8))
    field, stopped = C.receptive_field(c, "convolution2", (0, 0, 1, 2))
    assert not stopped and field["convolution2"] == [(0, 0, 1, 2)]
    assert sorted(field["activation"]) == sorted(field["convolution"])  # an activation reads the same cell
    assert sorted(field["convolution"]) == [(0, 0, h, w) for h in range(1, 4) for w in range(2, 5)]
    assert sorted(field[C.INPUT]) == [(0, 0, h, w) for h in range(1, 6) for w in range(2, 7)]  # 3 + 3 − 1 = 5
    # a residual reads the chain's input twice over: through the convolution's window and directly
    c = C.resolve("convolution+elementwise", {"convolution.padding_nd": "1,1"}, (1, 1, 6, 9))
    field, _ = C.receptive_field(c, "elementwise", (0, 0, 0, 0))
    assert sorted(field[C.INPUT]) == [(0, 0, 0, 0), (0, 0, 0, 1), (0, 0, 1, 0), (0, 0, 1, 1)]  # padding reads none
    with pytest.raises(ValidationError, match="must be a cell of elementwise"):
        C.receptive_field(c, "elementwise", (0, 0, 6, 0))


def test_budgets_are_summed_over_the_chain(monkeypatch):
    shape = (1, 1, 64, 64)  # 4096 values; each activation costs one multiply-add per value
    monkeypatch.setenv("PLAYGROUND_MAX_MACS", str(3 * 4096))
    C.resolve("activation+activation+activation", {}, shape)  # each within the budget, and all three together
    with pytest.raises(ValidationError, match=r"chain\.budget: .*12,288 multiply-adds .* needs 16,384"):
        C.resolve("activation+activation+activation+activation", {}, shape)
    monkeypatch.delenv("PLAYGROUND_MAX_MACS")
    monkeypatch.setenv("PLAYGROUND_MAX_ELEMENTS", str(4096))  # every tensor fits; the chain's five do not
    with pytest.raises(ValidationError, match=r"chain\.budget: .*20,480 values together"):
        C.resolve("activation+activation+activation+activation", {}, shape)


def test_the_reference_keeps_every_tensor_and_composes_the_layers():
    x = np.random.default_rng(1).uniform(-3, 3, (1, 2, 4, 5)).astype(np.float32)
    r = C.evaluate(
        "activation+scale+activation",
        {"activation.type": "TANH", "scale.scale": 2, "scale.shift": 0.5, "activation2.type": "RELU"},
        x,
        build_engine=False,
    )
    assert list(r.tensors) == [C.INPUT, "activation", "scale", "activation2"]
    np.testing.assert_allclose(r.tensors["activation"], np.tanh(x), rtol=1e-6)
    np.testing.assert_allclose(r.tensors["scale"], np.tanh(x) * 2 + 0.5, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(r.output, np.maximum(np.tanh(x) * 2 + 0.5, 0), rtol=1e-6, atol=1e-6)


# -- an independent NumPy composition of each starter chain ------------------------------------------------------
def conv2d(x, w, b, pad=0):
    """Cross-correlation by loops, stride 1, symmetric zero padding."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    k, _c, kh, kw = w.shape
    out = np.zeros((n, k, h - kh + 1, wd - kw + 1))
    for o in range(k):
        for i in range(out.shape[2]):
            for j in range(out.shape[3]):
                out[:, o, i, j] = (x[:, :, i : i + kh, j : j + kw] * w[o]).sum(axis=(1, 2, 3)) + b[o]
    return out


def leaky(v, alpha=0.1):
    return np.where(v >= 0, v, alpha * v)


def gelu(v):
    return 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2)))


def fake_int8(v, scale):
    """Quantize to INT8 by the float32 reciprocal of the scale (ties to even, clamped), dequantize."""
    s = np.float32(scale)
    return np.clip(np.rint(np.float32(v) * (np.float32(1) / s)), -128, 127).astype(np.float64) * float(s)


def int8_conv(x, w, b):
    s = np.float32(np.abs(x).max() / 127)  # quantize_scale 0: from the data
    return conv2d(fake_int8(x, s), fake_int8(w, s), b)


def expected(starter, params):
    x = starter.input().astype(np.float64)
    w, b = (params["convolution"][k] for k in ("kernel", "bias")) if "convolution" in params else (None, None)

    def conv(**kw):
        return conv2d(x, params["convolution"]["kernel"], params["convolution"]["bias"], **kw)

    return {
        "leaky_by_hand": lambda: 0.1 * x + 0.9 * np.maximum(x, 0),
        "leaky_activation": lambda: leaky(x),
        "conv_relu": lambda: np.maximum(conv(), 0),
        "conv_prelu": lambda: leaky(conv()),
        "conv_leaky_relu": lambda: leaky(conv()),
        "conv_gelu": lambda: gelu(conv()),
        "conv_bn_relu": lambda: np.maximum(
            conv() * np.array([0.5, 2]).reshape(1, 2, 1, 1) + np.array([1, -1]).reshape(1, 2, 1, 1), 0
        ),
        "conv_residual_relu": lambda: np.maximum(conv(pad=1) + x, 0),
        "conv_int8_relu": lambda: np.maximum(int8_conv(x, w, b), 0),
        "conv_int8_qdq_relu": lambda: np.maximum(
            fake_int8(int8_conv(x, w, b), np.abs(int8_conv(x, w, b)).max() / 127), 0
        ),
        "shuffle_shuffle": lambda: x.transpose(0, 1, 3, 2).transpose(0, 1, 3, 2),
    }[starter.name]()


@pytest.mark.parametrize("starter", chains.STARTERS, ids=lambda s: s.name)
def test_each_starter_chain_matches_an_independent_composition(starter):
    r = C.evaluate(starter.layers, starter.params, starter.input(), build_engine=False)
    params = {link.key: link.params for link in r.chain.links}
    want = expected(starter, params)
    assert r.output.shape == want.shape
    np.testing.assert_allclose(r.output, want, rtol=1e-5, atol=1e-5)
    for link in r.chain.links:  # every activation sees both signs, so the comparison exercises it
        if link.layer.name in ("activation", "prelu"):
            seen = r.tensors[link.first_source]
            assert seen.min() < 0 < seen.max(), link.key


def test_the_leaky_relu_by_hand_equals_the_activation():
    by_hand, one = chains.find("leaky_by_hand"), chains.find("leaky_activation")
    a = C.evaluate(by_hand.layers, by_hand.params, by_hand.input(), build_engine=False).output
    b = C.evaluate(one.layers, one.params, one.input(), build_engine=False).output
    np.testing.assert_allclose(a, b, atol=4e-7)  # 0.1·x + 0.9·x rounds in float32


# -- the engine: one network, built by TensorRT-RTX, mapped onto the chain --------------------------------------
@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from playground.trt.cache import EngineCache

    cache = EngineCache(tmp_path_factory.mktemp("chain-engines"))
    return {s.name: C.evaluate(s.layers, s.params, s.input(), cache=cache).engine for s in chains.STARTERS}


@pytest.mark.parametrize("starter", chains.STARTERS, ids=lambda s: s.name)
def test_a_chain_evaluation_resolves_each_layer_once_and_exports_nothing(starter, monkeypatch, tmp_path):
    """One evaluation (references and the engine, built or found in the cache) resolves each layer of the chain once
    and writes no export: neither script, nor command line, nor ONNX model (they are made when asked for)."""
    from playground.base.layer import Layer
    from playground.network import chain_export, export
    from playground.onnx import chain as onnx_chain
    from playground.onnx import writing
    from playground.trt.cache import EngineCache

    resolved, exported, real = [], [], Layer.resolve

    def counted(self, raw, shape):
        resolved.append(self.name)
        return real(self, raw, shape)

    monkeypatch.setattr(Layer, "resolve", counted)
    for module, name in [
        (export, "export_script"),
        (export, "playground_command"),
        (export, "essential_params"),
        (chain_export, "export_chain_script"),
        (chain_export, "playground_command"),
        (onnx_chain, "export_chain_model"),
        (writing, "export_model"),
    ]:
        monkeypatch.setattr(module, name, lambda *a, name=name, **k: exported.append(name))
    cache = EngineCache(tmp_path)
    for _ in range(2):  # built, then found in the cache: neither resolves again
        resolved.clear()
        r = C.evaluate(starter.layers, starter.params, starter.input(), cache=cache)
        assert sorted(resolved) == sorted(starter.layers), r.engine.status
    assert exported == []


def compute_layers(engine):
    return [layer for layer in engine.layers if layer["role"] == "compute"]


def owner(engine, key):
    """The one engine layer that computes `key` (several would be a different fact)."""
    found = [layer for layer in engine.layers if key in layer["fuses"]]
    assert len(found) == 1, (key, engine.layers)
    return found[0]


@needs_trt
def test_every_starter_chain_builds_as_one_engine(built):
    for name, engine in built.items():
        assert engine.status in ("built", "cached") and engine.report.bytes > 1000, (name, engine.report.error)
        assert engine.builder.startswith(detect().name)
        assert all(
            set(layer["fuses"])
            <= set(chains.find(name).layers) | {f"{n}{i}" for n in chains.find(name).layers for i in range(2, 7)}
            for layer in engine.layers
        )
        for layer in engine.layers:  # a layer that computes nothing of the chain only moves data
            assert bool(layer["fuses"]) == (layer["role"] == "compute"), (name, layer)


@needs_trt
def test_relu_folds_into_the_convolution(built):
    e = built["conv_relu"]
    conv = owner(e, "convolution")
    assert "activation" in conv["fuses"] and len(compute_layers(e)) == 1
    assert all(layer["role"] == "data movement" for layer in e.layers if layer is not conv)


@needs_trt
@pytest.mark.parametrize(
    "name, key", [("conv_prelu", "prelu"), ("conv_leaky_relu", "activation"), ("conv_gelu", "activation")]
)
def test_prelu_leaky_relu_and_gelu_keep_a_kernel_of_their_own(built, name, key):
    e = built[name]
    own, conv = owner(e, key), owner(e, "convolution")
    assert own is not conv and own["fuses"] == [key]
    assert e.layers.index(own) > e.layers.index(conv)  # after the convolution, reading its output


@needs_trt
def test_the_leaky_relu_by_hand_becomes_one_kernel_as_leaky_relu_does(built):
    by_hand, one = built["leaky_by_hand"], built["leaky_activation"]
    assert len(compute_layers(by_hand)) == len(compute_layers(one)) == 1
    assert compute_layers(by_hand)[0]["fuses"] == ["scale", "activation", "scale2", "elementwise"]


@needs_trt
def test_the_residual_sum_and_relu_fold_into_the_convolution(built):
    conv = owner(built["conv_residual_relu"], "convolution")
    assert conv["fuses"] == ["convolution", "elementwise", "activation"]


@needs_trt
def test_batchnorm_as_scale_and_relu_share_one_kernel_after_the_convolution(built):
    e = built["conv_bn_relu"]
    shared = owner(e, "scale")
    assert shared is owner(e, "activation") and shared["type"] != "correlation"
    conv = [layer for layer in e.layers if layer["type"] == "correlation"]
    assert len(conv) == 1 and "convolution" in conv[0]["fuses"] and e.layers.index(conv[0]) < e.layers.index(shared)


@needs_trt
def test_a_qdq_pair_between_the_convolution_and_its_relu_keeps_the_relu_apart(built):
    conv = next(layer for layer in built["conv_int8_relu"].layers if layer["type"] == "correlation")
    assert "activation" in conv["fuses"] and conv["inputs"][0]["format"].startswith("Int8")
    apart = built["conv_int8_qdq_relu"]
    conv = next(layer for layer in apart.layers if layer["type"] == "correlation")
    assert conv["fuses"] == ["convolution"] and conv["inputs"][0]["format"].startswith("Int8")
    relu = owner(apart, "activation")
    assert relu["fuses"] == ["activation"] and apart.layers.index(relu) > apart.layers.index(conv)


@needs_trt
def test_two_inverse_transposes_leave_only_data_movement(built):
    e = built["shuffle_shuffle"]
    assert not compute_layers(e) and e.layers
    assert e.absorbed == ["shuffle", "shuffle2"]


@needs_trt
def test_marking_an_intermediate_as_an_output_changes_what_is_fused(tmp_path, capsys, monkeypatch):
    from playground.network import core
    from playground.trt.cache import EngineCache

    monkeypatch.setattr(core, "_default_cache", EngineCache(tmp_path))
    assert main(["run", "convolution+activation", "--mark-intermediates", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    deployed, marked = out["engine"], out["engine_marked"]
    assert not deployed["marked_intermediates"] and marked["marked_intermediates"]
    assert any(layer["fuses"] == ["convolution", "activation"] for layer in deployed["layers"])
    assert not any(len(layer["fuses"]) > 1 for layer in marked["layers"])  # the ReLU leaves the convolution
    assert any(layer["fuses"] == ["activation"] for layer in marked["layers"])


@needs_trt
def test_intermediates_are_not_marked_as_outputs():
    from playground.trt import engine as eng

    trt = detect().trt
    c = C.resolve("convolution+activation")
    with eng._builders_for(trt).builder() as builder:
        network, _ = eng.network_from(trt, builder, C.network_of(c))
        assert network.num_outputs == 1 and network.get_output(0).name == eng.OUTPUT_NAME
        names = [network.get_layer(i).name for i in range(network.num_layers)]
    assert names[-1] == "activation" and "convolution" in names


# -- the CLI -----------------------------------------------------------------------------------------------------
@needs_trt
def test_cli_runs_a_chain_with_json_intermediates_and_output(tmp_path, capsys, monkeypatch):
    from playground.network import core
    from playground.trt.cache import EngineCache

    monkeypatch.setattr(core, "_default_cache", EngineCache(tmp_path / "cache"))
    x = np.random.default_rng(2).uniform(-5, 5, (1, 1, 7, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    code = main(
        [
            "run",
            "convolution+activation",
            "--set",
            "convolution.stride_nd=2,2",
            "--set",
            "activation.type=RELU",
            "--input",
            str(tmp_path / "x.npy"),
            "--output",
            str(tmp_path / "y.npy"),
            "--intermediates",
            str(tmp_path / "t"),
            "--json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["network"]["layers"] == ["convolution", "activation"]
    assert out["params"]["convolution"]["stride_nd"] == [2, 2] and out["output_shape"] == [1, 1, 3, 3]
    layers = out["engine"]["layers"]
    assert layers and all(isinstance(layer["fuses"], list) for layer in layers)
    assert any(layer["fuses"] == ["convolution", "activation"] for layer in layers)
    y = np.load(tmp_path / "y.npy")
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == ["activation.npy", "convolution.npy", "input.npy"]
    np.testing.assert_array_equal(np.load(tmp_path / "t" / "input.npy"), x)
    np.testing.assert_array_equal(np.load(tmp_path / "t" / "activation.npy"), y)
    np.testing.assert_allclose(y, np.maximum(np.load(tmp_path / "t" / "convolution.npy"), 0))


@pytest.mark.parametrize(
    "args, needle",
    [
        (
            ["convolution+activation", "--set", "convolution2.stride_nd=2,2"],
            "convolution2.stride_nd: convolution2 names",
        ),
        (["convolution+convolution", "--set", "convolution2.padding_mode=NOPE"], "convolution2.padding_mode:"),
        (["convolution+nosuch"], "chain.layers: 'nosuch' is not a layer"),
        (["convolution+activation", "--compare", "FP16"], "--compare, --onnx and --node: not with a chain"),
        (["activation", "--intermediates", "/tmp"], "--intermediates and --mark-intermediates: only with a chain"),
        (
            ["convolution+activation", "--intermediates", "/no/such/dir/t"],
            "--intermediates: /no/such/dir/t: its parent",
        ),
    ],
)
def test_cli_refusals_exit_2_and_name_the_key(args, needle, capsys):
    assert main(["run", *args]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


@needs_trt
@pytest.mark.parametrize("starter", chains.STARTERS, ids=lambda s: s.name)
def test_each_starter_runs_from_the_cli_as_on_the_page(starter, tmp_path, capsys, monkeypatch):
    from playground.network import core
    from playground.trt.cache import EngineCache

    monkeypatch.setattr(core, "_default_cache", EngineCache(tmp_path / "cache"))
    np.save(tmp_path / "x.npy", starter.input())
    assert (
        main(["run", *starter.cli(), "--input", str(tmp_path / "x.npy"), "--output", str(tmp_path / "y.npy"), "--json"])
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    want = C.evaluate(starter.layers, starter.params, starter.input(), build_engine=False)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), want.output)
    if len(starter.layers) > 1:
        assert out["network"]["layers"] == list(want.chain.keys)


def test_a_chain_exports_as_a_script_that_builds_it(tmp_path):
    import ast
    import subprocess
    import sys

    s = chains.find("conv_residual_relu")
    np.save(tmp_path / "x.npy", s.input())
    args = ["export", *s.cli(), "--format", "script", "--out", str(tmp_path / "chain.py")]
    assert main(args) == 0
    text = (tmp_path / "chain.py").read_text()
    assert "import playground" not in text and "def build_convolution(" in text and "def build_elementwise(" in text
    command = next(line for line in text.splitlines() if line.startswith("PLAYGROUND_COMMAND = "))
    again = C.resolve(*_run_args(ast.literal_eval(command.split(" = ", 1)[1])))
    assert again.flat_params().keys() == C.resolve(s.layers, s.params).flat_params().keys()
    if not detect().can_build:
        return
    run = subprocess.run(
        [sys.executable, str(tmp_path / "chain.py")], check=False, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    assert "output shape: (1, 1, 6, 9)" in run.stdout and "engine: built by" in run.stdout


def _run_args(command: str):
    """(names, raw) of a `python -m playground run A+B --set K=V …` line."""
    from playground.cli import parse_sets

    words = command.split()
    sets = [words[i + 1] for i, w in enumerate(words) if w == "--set"]
    return C.parse_names(words[4]), parse_sets(C.CHAIN, sets)


# -- the chain as an ONNX model, and the two second opinions -----------------------------------------------------
ONNX_STARTERS = chains.STARTERS


@needs_trt
@pytest.mark.parametrize("starter", ONNX_STARTERS, ids=lambda s: s.name)
def test_onnx_runtime_agrees_and_the_parser_fuses_as_the_chain_build_does(starter, built, tmp_path):
    from playground.onnx.chain import opinions
    from playground.trt.cache import EngineCache

    cache = EngineCache(tmp_path)
    r = C.evaluate(starter.layers, starter.params, starter.input(), cache=cache)
    o = opinions(r, cache=cache)
    assert o["onnxruntime"]["status"] == "ran" and o["onnxruntime"]["agrees"], o["onnxruntime"]
    parser = o["onnx_parser"]
    assert parser["status"] in ("built", "cached") and parser["same_fusion"] is True, parser
    if not any(k.endswith(".precision") for k in starter.params):  # else the model is the chain's FP32 configuration
        assert parser["compared_to"] == "the chain's build"
        assert [layer["fuses"] for layer in parser["layers"]] == [
            layer["fuses"] for layer in built[starter.name].layers
        ]
    else:
        assert parser["compared_to"].startswith("the chain's FP32 build")


def test_a_residual_chain_exports_as_an_onnx_model_whose_sum_reads_the_input_twice_over(tmp_path, capsys):
    """The residual's SUM reads the convolution and the chain's input: the model's one input feeds both."""
    import onnx

    out = tmp_path / "residual.onnx"
    args = ["convolution+elementwise", "--set", "convolution.padding_nd=1,1", "--format", "onnx", "--out", str(out)]
    assert main(["export", *args]) == 0, capsys.readouterr().err
    graph = onnx.load(out).graph
    assert len(graph.input) == 1
    readers = [node for node in graph.node if graph.input[0].name in node.input]
    assert {node.name.split("_")[0] for node in readers} == {"convolution", "elementwise"}


def test_cli_exports_a_chain_as_an_onnx_model(tmp_path, capsys):
    import onnx

    assert (
        main(
            [
                "export",
                "convolution+activation+activation",
                "--set",
                "activation2.type=TANH",
                "--format",
                "onnx",
                "--out",
                str(tmp_path / "c.onnx"),
            ]
        )
        == 0
    )
    model = onnx.load(str(tmp_path / "c.onnx"))
    onnx.checker.check_model(model)
    assert [n.op_type for n in model.graph.node] == ["Conv", "Relu", "Tanh"]
    assert [n.name for n in model.graph.node] == ["convolution_0", "activation_0", "activation2_0"]


# -- reading an engine layer's chain layers in either TensorRT's words -------------------------------------------
@pytest.mark.parametrize(
    "layer, fuses",
    [
        (
            {"name": "__myl_MulAddRelu_myl0_2", "metadata": "[activation][convolution][scale]"},
            ["convolution", "scale", "activation"],
        ),  # TensorRT-RTX's metadata, put in chain order
        ({"name": "convolution + activation", "metadata": ""}, ["convolution", "activation"]),  # full TensorRT's names
        ({"name": "convolution/2 + activation", "metadata": ""}, ["convolution", "activation"]),  # a helper layer's
        (
            {"name": "{ForeignNode[convolution...activation2]}", "metadata": ""},
            ["convolution", "scale", "activation", "activation2"],
        ),  # a Myelin range
        ({"name": "Reformatting CopyNode for Input Tensor 0 to convolution", "metadata": ""}, []),
    ],
)
def test_an_engine_layers_chain_layers_are_read_from_its_metadata_or_its_name(layer, fuses):
    keys = ("convolution", "scale", "activation", "activation2")
    assert eng.fuses_of(layer, keys) == fuses


@pytest.mark.parametrize(
    "layer, role",
    [
        ({"name": "__myl_Move_myl0_0", "type": "kgen", "fuses": []}, "data movement"),
        ({"name": "__myl_Tran_myl0_2", "type": "kgen", "fuses": []}, "data movement"),
        ({"name": "Reformatting CopyNode for Input Tensor 0", "type": "Reformat", "fuses": []}, "data movement"),
        ({"name": "__myl_MulLtSele_myl0_2", "type": "kgen", "fuses": ["prelu"]}, "compute"),
        ({"name": "__myl_MoveMulMax_myl0_0", "type": "kgen", "fuses": []}, "compute"),  # Mul and Max compute
    ],
)
def test_a_move_transpose_or_reformat_kernel_is_named_as_data_movement(layer, role):
    assert eng.role_of(layer) == role


@pytest.mark.parametrize("name", [n for n in LAYERS if n != "activation"])
def test_every_layer_exports_in_a_chain_reading_its_sources_by_name(name):
    """A layer after another in a chain is in the chain's ONNX export, each of its inputs read from its source (a
    layer of several inputs: the previous layer's output and the chain's input), and the model passes the checker."""
    from playground.onnx.chain import export_chain_model

    chain = C.resolve(f"activation+{name}")
    graph = export_chain_model(chain).graph
    read = {i for node in graph.node if node.name.startswith(f"{name}_") for i in node.input}
    produced = {o for node in graph.node if node.name.startswith("activation_") for o in node.output}
    assert read & produced  # reads the activation's output
    if LAYERS[name].several:  # its other inputs: the chain's input
        assert graph.input[0].name in read


@needs_trt
def test_a_layer_and_the_chain_of_that_layer_alone_are_one_network(tmp_path):
    """A layer's page evaluates the network of one layer: the chain of that layer alone is the same network, so it
    has the same cache key, and the second of the two finds the first's engine in the cache."""
    from playground.network import core
    from playground.trt.cache import EngineCache

    cache = EngineCache(tmp_path)
    raw = {"stride_nd": "2,2", "padding_nd": "1,1"}
    layer = core.evaluate("convolution", raw, cache=cache, run=False)
    chain = C.evaluate("convolution", {"convolution": raw}, layer.input, cache=cache)
    assert layer.engine_status == "built" and chain.engine.status == "cached"
    assert chain.engine.cache_key == layer.cache_key and cache.builds == 1
    np.testing.assert_array_equal(chain.output, layer.reference)
    other = C.evaluate("convolution+activation", {"convolution": raw}, layer.input, cache=cache)
    assert other.engine.cache_key != layer.cache_key
