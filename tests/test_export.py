"""playground.network.export: the standalone script for one configuration, and `python -m playground export`.

Each exported script is written to tmp_path and run with this interpreter in a fresh process whose
working directory is tmp_path (so `playground` is not importable there): it must build, print
TensorRT's output shape, and say why it cannot run the engine on this GPU-less machine. The GPU
path of the script (cuda-python + execute_async_v3) is exercised here against a fake cudart and a
fake engine; the `gpu` test runs it for real where TensorRT can run engines.
"""

from __future__ import annotations

import ast
import ctypes
import dataclasses
import os
import re
import subprocess
import sys
import types

import numpy as np
import pytest

from playground.base.errors import ValidationError
from playground.cli import main, parse_sets
from playground.layers import LAYERS, get_layer
from playground.network import export as E
from playground.network import presets as P
from playground.network.core import evaluate
from playground.trt.backend import detect
from playground.trt.cache import EngineCache

needs_trt = pytest.mark.skipif(not detect().can_build, reason="no TensorRT installed: the script cannot build")

# (id, layer, raw params, input) — input None: the layer's example
CONFIGS = (
    [(f"{name}-default", name, {}, None) for name in LAYERS]
    + [
        ("conv-stride", "convolution", {"stride_nd": "2,2"}, None),
        ("conv-same_upper", "convolution", {"stride_nd": "2,2", "padding_mode": "SAME_UPPER"}, None),
        ("conv-dilation", "convolution", {"dilation_nd": "2,2"}, None),
        (
            "conv-groups",
            "convolution",
            P.find("convolution", "num_groups_2").params,
            P.input_for(P.find("convolution", "num_groups_2")),
        ),
        (
            "conv-3d",
            "convolution",
            P.find("convolution", "conv_3d").params,
            P.input_for(P.find("convolution", "conv_3d")),
        ),
        ("conv-int8", "convolution", {"int8": "true", "quantize_scale": 1}, None),
        (
            "scale-channel_axis_0",
            "scale",
            P.find("scale", "channel_axis_0").params,
            P.input_for(P.find("scale", "channel_axis_0")),
        ),
        ("prelu-element", "prelu", {"granularity": "element", "slopes": "ramp"}, None),
        (
            "elementwise-broadcast-and",
            "elementwise",
            {"operation": "AND", "precision": "INT8"},
            {"a": np.float32([[0, 1, 2], [3, 0, 5]]).reshape(1, 1, 2, 3), "b": np.float32([0, 1]).reshape(1, 1, 2, 1)},
        ),
    ]
    + [
        (f"leaky_relu-{c}", "leaky_relu", {"alpha": 0.1, "construction": c}, None)
        for c in ("activation", "parametric_relu", "scale_relu_sum")
    ]
)
IDS = [c[0] for c in CONFIGS]
# What today's API replaced: implicit-batch bindings, execute_async_v2, the old cuda import.
LEGACY = re.compile(
    r"execute_async_v2|from cuda import cudart|get_binding_|num_bindings|binding_is_input|"
    r"bindings\s*=|\[int\(\w+\), int\(\w+\)\]|EXPLICIT_BATCH|max_batch_size|build_engine\("
)
IMPORTS = {
    "argparse",
    "importlib",
    "sys",
    "base64",
    "zlib",
    "numpy",
    "cuda.bindings",
    "ml_dtypes",
}  # TensorRT comes by importlib; ml_dtypes for BF16 only


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return EngineCache(tmp_path_factory.mktemp("engines"))


def run_script(path, *args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, str(path), *args], capture_output=True, text=True, timeout=120, cwd=cwd, env=env
    )


def printed_shape(stdout: str) -> tuple:
    m = re.search(r"^output shape: (\(.*\))$", stdout, re.M)
    assert m, stdout
    return ast.literal_eval(m.group(1))


def load(script: str) -> dict:
    """The script's namespace, main() not run."""
    ns = {"__name__": "exported_script"}
    exec(compile(script, "exported_script.py", "exec"), ns)
    return ns


# --- the scripts run ----------------------------------------------------------------------------


@needs_trt
@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_script_builds_and_prints_tensorrt_shape(config, tmp_path, cache):
    _, layer, raw, x = config
    script = E.export_script(layer, raw, x)
    path = tmp_path / "script.py"
    path.write_text(script, encoding="utf-8")
    done = run_script(path, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    r = evaluate(layer, raw, x, cache=cache, run=False)
    assert r.error is None, r.error
    assert printed_shape(done.stdout) == tuple(r.report.output_shape) == r.reference.shape
    assert "inputH0 : " + str(r.input.shape) in done.stdout
    if not detect().can_run:
        assert "cannot run here" in done.stdout and "outputH0: " + str(r.reference.shape) in done.stdout
    assert not LEGACY.search(script), LEGACY.search(script)
    assert "create_network(network_flags())" in script and "build_serialized_network" in script
    assert "execute_async_v3" in script and "from cuda.bindings import runtime as cudart" in script


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_script_defines_exactly_the_resolved_configuration(config):
    _, layer_name, raw, x = config
    layer = get_layer(layer_name)
    xs = layer.feed(x)
    params = layer.resolve(raw, {n: a.shape for n, a in xs.items()})
    xs = {n: xs[n] for n in layer.used_inputs(params)}  # the script feeds the inputs the configuration reads
    script = E.export_script(layer_name, raw, x)
    ns = load(script)
    data = ns["data"] if layer.several else {layer.input_names[0]: ns["data"]}  # several inputs: a dict by name
    assert list(data) == list(xs)
    assert all(data[n].dtype == np.float32 and np.array_equal(data[n], xs[n]) for n in xs)
    assert ns["p"].keys() == params.keys()
    for k, v in params.items():
        got = ns["p"][k]
        if isinstance(v, np.ndarray):
            assert got.dtype == np.float32 and got.shape == v.shape and np.array_equal(got, v), k
        else:
            assert type(got) is type(v) and got == v, k
    modules = set()
    for node in ast.walk(ast.parse(script)):
        if isinstance(node, ast.Import):
            modules |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            modules.add(node.module)
    assert modules <= IMPORTS, modules - IMPORTS  # no playground, nothing beyond numpy/TensorRT/cuda-python
    assert f"def {layer.build.__name__}(trt, network, {'xs' if layer.several else 'x'}, p):" in script
    assert f"# TensorRT Layer Playground export: {layer.title}" in script


def test_header_names_layer_parameters_and_how_to_run():
    script = E.export_script("convolution", {"stride_nd": "2,2", "padding_mode": "CAFFE_ROUND_UP"})
    head = script.split('\n"""')[0]
    assert "Convolution (`convolution`)" in head and "float32 (1, 1, 6, 9)" in head
    assert re.search(r"#   stride_nd +=  ?2,2", head) and "EXPLICIT_ROUND_UP" in head
    assert "quantize_scale  = 1   (not used by this configuration)" in head
    assert "python THIS_SCRIPT.py" in head
    assert "python -m playground run convolution --set stride_nd=2,2 --set padding_mode=EXPLICIT_ROUND_UP\n" in script
    clip = E.export_script("activation", {"type": "CLIP"})  # alpha, beta: CLIP's own defaults, not repeated
    assert "python -m playground run activation --set type=CLIP\n" in clip
    assert "--input" not in head.split("python -m playground run")[1]


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_header_command_reproduces_the_configuration(config):
    _, layer_name, raw, x = config
    layer = get_layer(layer_name)
    xs = layer.feed(x)
    shapes = {n: a.shape for n, a in xs.items()}
    script = E.export_script(layer_name, raw, x)
    command = re.search(r"^#   (python -m playground run .*)$", script, re.M).group(1)
    assert f"PLAYGROUND_COMMAND = {command!r}" in script
    sets = re.findall(r"--set (\S+)", command)
    assert all("@" not in s for s in sets)  # these configurations are small enough to type
    resolved = layer.resolve(parse_sets(layer_name, sets), shapes)
    want = layer.resolve(raw, shapes)
    assert resolved.keys() == want.keys()
    for k in want:
        assert np.array_equal(resolved[k], want[k]) if isinstance(want[k], np.ndarray) else resolved[k] == want[k], k
    for n in layer.used_inputs(want):  # an input that is not its example is named: --input FILE, or NAME=FILE
        a = xs[n]
        flag = f"--input {n}={n}.npy" if layer.several else "--input input.npy"
        assert (flag in command) == (a.shape != layer.input_shape(n)), (n, command)


def test_exact_literals_nan_inf_and_base64_for_large_arrays(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1, 3, 40, 50)).astype(np.float32)  # 6000 > INLINE_LIMIT values
    x[0, 0, 0, :5] = [np.nan, np.inf, -np.inf, -0.0, np.float32(0.1)]
    script = E.export_script("prelu", {"granularity": "element", "slopes": "ramp"}, x)
    assert "unpack(" in script and "import base64" in script and "import zlib" in script
    assert len(script) < 80_000  # compact: base64 of compressed float32, not a decimal listing
    ns = load(script)
    assert np.array_equal(ns["data"], x, equal_nan=True) and np.signbit(ns["data"][0, 0, 0, 3])
    assert ns["p"]["slopes"].shape == (1, 3, 40, 50)
    assert "--input input.npy" in script and "slopes=@slopes.npy" in script
    small = E.export_script("activation", {}, np.float32([[[[np.nan, np.inf, -np.inf, 0.1, 1e-45, 3.4028235e38]]]]))
    assert "import base64" not in small and "np.nan, np.inf, -np.inf, 0.1," in small
    assert np.array_equal(
        load(small)["data"], np.float32([[[[np.nan, np.inf, -np.inf, 0.1, 1e-45, 3.4028235e38]]]]), equal_nan=True
    )


@pytest.mark.parametrize(
    "a",
    [
        np.float32(3),
        np.arange(3, dtype=np.float32),
        np.ones((2, 2), np.float32),
        np.arange(5000, dtype=np.float32).reshape(50, 100),
    ],
)
def test_array_literal_keeps_shape_and_values(a):
    ns = {"np": np}
    exec("import base64, zlib\n" + E._UNPACK, ns)  # the script's unpack(), for the base64 case
    v = eval(E.array_literal(a), ns)
    assert v.dtype == np.float32 and v.shape == np.shape(a) and np.array_equal(v, a)


@pytest.mark.parametrize("value", [0.1, 1 / 3, 1e-45, 1.17549435e-38, 3.4028235e38, -2.5, 16777217.0, 123456.789])
def test_float_literal_round_trips(value):
    v = np.float32(value)
    assert np.float32(eval(E._float(v), {"np": np})).tobytes() == v.tobytes()


def test_every_build_is_self_contained():
    for layer in LAYERS.values():
        source = E.build_source(layer)
        inputs = "xs" if layer.several else "x"  # several inputs come as a dict by name
        assert source.startswith(f"def {layer.build.__name__}(trt, network, {inputs}, p):")


def helper(x):  # a module-level helper, which an exported script would not have
    return x


def test_build_using_a_module_helper_is_refused():
    def build(trt, network, x, p):
        return helper(network.add_activation(x, trt.ActivationType.RELU).get_output(0))

    layer = dataclasses.replace(get_layer("activation"), build=build)
    with pytest.raises(E.NotSelfContained, match="helper"):
        E.build_source(layer)

    def nested(trt, network, x, p):
        def inner(t):
            return helper(t)

        return inner(x)

    with pytest.raises(E.NotSelfContained, match="helper"):
        E.build_source(dataclasses.replace(get_layer("activation"), build=nested))


def test_invalid_parameters_raise_before_export():
    with pytest.raises(ValidationError, match="convolution.num_groups"):
        E.export_script("convolution", {"num_groups": 2})  # C = 1
    with pytest.raises(KeyError, match="unknown layer"):
        E.export_script("no_such_layer", {})


# --- the script's GPU path, against a fake cudart and a fake engine ---------------------------------------


class FakeCudart(types.ModuleType):
    """The slice of cuda.bindings.runtime the script uses; 'device' memory is host memory we own."""

    class cudaMemcpyKind:
        cudaMemcpyHostToDevice = "H2D"
        cudaMemcpyDeviceToHost = "D2H"

    def __init__(self, devices=1, count_error=0, cc=(8, 6)):
        super().__init__("cuda.bindings.runtime")
        self.devices, self.count_error, self.cc = devices, count_error, cc
        self.live, self.calls, self.streams = {}, [], set()

    def cudaGetDeviceCount(self):
        return (self.count_error, None if self.count_error else self.devices)

    def cudaGetDevice(self):
        return (0, 0)

    def cudaGetDeviceProperties(self, device):
        return (0, types.SimpleNamespace(name=b"Fake GPU\0\0\0", major=self.cc[0], minor=self.cc[1]))

    def cudaGetErrorName(self, error):
        return (0, f"cudaErrorFake{int(error)}".encode())

    def cudaStreamCreate(self):
        self.streams.add(77)
        return (0, 77)

    def cudaStreamSynchronize(self, stream):
        self.calls.append(("sync", stream))
        return (0,)

    def cudaStreamDestroy(self, stream):
        self.streams.remove(stream)
        return (0,)

    def cudaMalloc(self, nbytes):
        buf = np.zeros(nbytes, np.uint8)
        self.live[buf.ctypes.data] = buf
        return (0, buf.ctypes.data)

    def cudaFree(self, ptr):
        del self.live[ptr]
        return (0,)

    def cudaMemcpyAsync(self, dst, src, count, kind, stream):
        assert stream == 77 and (dst in self.live) == (kind == "H2D") and (src in self.live) == (kind == "D2H")
        ctypes.memmove(dst, src, count)
        self.calls.append((kind, count))
        return (0,)


class FakeEngine:
    """Runs `fn` on the input buffer into the output buffer, as an engine would on the stream."""

    def __init__(self, trt, in_shape, out_shape, fn, ok=True):
        self.trt, self.in_shape, self.out_shape, self.fn, self.ok = trt, in_shape, out_shape, fn, ok
        self.addresses, self.executed = {}, []

    def get_tensor_dtype(self, name):
        return self.trt.DataType.FLOAT

    def create_execution_context(self):
        return self

    def get_tensor_shape(self, name):
        return self.out_shape if name == "outputT0" else self.in_shape

    def set_tensor_address(self, name, ptr):
        self.addresses[name] = ptr
        return True

    def execute_async_v3(self, stream):
        self.executed.append(stream)
        if not self.ok:
            return False
        view = lambda name, shape: np.ctypeslib.as_array(  # noqa: E731
            (ctypes.c_float * int(np.prod(shape))).from_address(self.addresses[name])
        ).reshape(shape)
        view("outputT0", self.out_shape)[...] = self.fn(view("inputT0", self.in_shape))
        return True


@pytest.fixture
def gpu_script(monkeypatch):
    """Load an exported activation (RELU) script with cuda.bindings.runtime and trt.Runtime faked."""
    import cuda.bindings

    def setup(cudart, engine_ok=True, engine_loads=True):
        ns = load(E.export_script("activation", {}))
        trt = ns["trt"] = ns["tensorrt_that_builds"]()[0]  # what main() does first
        engine = FakeEngine(trt, (1, 1, 3, 3), (1, 1, 3, 3), lambda x: np.maximum(x, 0), ok=engine_ok)
        runtime = types.SimpleNamespace(deserialize_cuda_engine=lambda data: engine if engine_loads else None)
        monkeypatch.setattr(trt, "Runtime", lambda logger: runtime)
        monkeypatch.setitem(sys.modules, "cuda.bindings.runtime", cudart)
        monkeypatch.setattr(cuda.bindings, "runtime", cudart, raising=False)
        return ns, engine

    return setup


def test_gpu_path_runs_frees_and_prints_like_the_spec(gpu_script, tmp_path, capsys):
    cudart = FakeCudart()
    ns, engine = gpu_script(cudart)
    out = tmp_path / "out.npy"
    assert ns["main"](["--output", str(out)]) == 0
    printed = capsys.readouterr().out
    relu = np.maximum(np.arange(-4, 5, dtype=np.float32).reshape(1, 1, 3, 3), 0)
    assert np.array_equal(np.load(out), relu)
    assert "output shape: (1, 1, 3, 3)" in printed and "outputH0: (1, 1, 3, 3)\n[[[[0. 0. 0.]" in printed
    assert engine.executed == [77] and set(engine.addresses) == {"inputT0", "outputT0"}
    assert [c[0] for c in cudart.calls if c[0] != "sync"] == ["H2D", "D2H"]
    assert cudart.live == {} and cudart.streams == set()  # every buffer freed, the stream destroyed


def test_gpu_path_failure_frees_everything_and_says_why(gpu_script, capsys):
    cudart = FakeCudart()
    ns, _ = gpu_script(cudart, engine_ok=False)
    with pytest.raises(RuntimeError, match=r"Fake GPU \(compute capability 8.6\): execute_async_v3 failed"):
        ns["run_on_gpu"](None, b"engine")
    assert cudart.live == {} and cudart.streams == set()
    assert ns["main"]([]) == 1
    assert "error: running the engine failed on Fake GPU" in capsys.readouterr().err


def test_no_gpu_and_unsupported_gpu_say_why(gpu_script, capsys):
    ns, _ = gpu_script(FakeCudart(count_error=100))
    with pytest.raises(ns["CannotRun"], match="no usable CUDA GPU .*cudaErrorFake100"):
        ns["run_on_gpu"](None, b"engine")
    ns, _ = gpu_script(FakeCudart(devices=0))
    with pytest.raises(ns["CannotRun"], match="no CUDA GPU"):
        ns["run_on_gpu"](None, b"engine")
    ns, _ = gpu_script(FakeCudart(cc=(9, 0)), engine_loads=False)
    with pytest.raises(ns["CannotRun"], match=r"could not load the engine on Fake GPU \(compute capability 9.0\)"):
        ns["run_on_gpu"](None, b"engine")
    assert ns["main"]([]) == 0
    printed = capsys.readouterr().out
    assert "outputH0: (1, 1, 3, 3), not computed: the engine was built but cannot run here" in printed
    if ns["trt"].__name__ == "tensorrt_rtx":
        assert "TensorRT for RTX runs engines only on" in printed


# --- the CLI subcommand --------------------------------------------------------------------------------


def test_cli_export_writes_the_script(tmp_path, capsys):
    out = tmp_path / "conv.py"
    assert main(["export", "convolution", "--set", "stride_nd=2,2", "--out", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert out.read_text() == E.export_script("convolution", {"stride_nd": "2,2"})


def test_cli_export_to_stdout_with_input_and_preset(tmp_path, capsys):
    x = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4) - 12
    np.save(tmp_path / "x.npy", x)
    assert main(["export", "prelu", "--set", "slopes=0.25", "--input", str(tmp_path / "x.npy")]) == 0
    ns = load(capsys.readouterr().out)
    assert np.array_equal(ns["data"], x) and np.array_equal(ns["p"]["slopes"], np.full((1, 2, 1, 1), 0.25, np.float32))

    assert main(["export", "convolution", "--preset", "num_groups_2", "--set", "stride_nd=2,2"]) == 0
    ns = load(capsys.readouterr().out)
    assert ns["data"].shape == (1, 2, 6, 9) and ns["p"]["num_groups"] == 2 and ns["p"]["stride_nd"] == (2, 2)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["export", "convolution", "--set", "num_groups=2"], "convolution.num_groups"),
        (["export", "convolution", "--set", "stride_nd"], "--set takes NAME=VALUE"),
        (["export", "scale", "--preset", "nope"], "scale has no preset 'nope'"),
        (["export", "scale", "--input", "/nonexistent.npy"], "/nonexistent.npy: No such file or directory"),
    ],
)
def test_cli_export_invalid_exits_2_and_names_the_rule(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_cli_export_registers_choices():
    with pytest.raises(SystemExit):
        main(["export", "no_such_layer"])


# --- on a GPU that TensorRT runs on ---------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_script_output_on_gpu_equals_reference(config, tmp_path, cache):
    if not detect().can_run:
        pytest.skip(detect().why_not_run)
    _, layer, raw, x = config
    path = tmp_path / "script.py"
    path.write_text(E.export_script(layer, raw, x), encoding="utf-8")
    done = run_script(path, "--output", str(tmp_path / "out.npy"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    r = evaluate(layer, raw, x, cache=cache)
    out = np.load(tmp_path / "out.npy")
    assert f"outputH0: {r.reference.shape}" in done.stdout
    np.testing.assert_allclose(out, r.reference, rtol=1e-5, atol=1e-5)


# --- the scripts' runner, a module of its own ----------------------------------------------------------


def test_every_script_ends_with_the_runner_module_verbatim():
    from playground.network import script_runner

    tail = E.runner_source()
    assert tail.lstrip().startswith("class CannotBuild") and "def main(argv):" in tail
    assert E.export_script("scale").endswith(tail)
    assert script_runner.CannotRun.__doc__ and callable(script_runner.main)  # it imports on its own


def test_runner_cuda_check_names_the_call_and_the_error():
    from playground.network import script_runner as R

    class FakeRuntime:
        @staticmethod
        def cudaGetErrorName(error):
            return 0, b"cudaErrorMemoryAllocation"

    assert R.cuda_check(FakeRuntime, (0, 7), "cudaMalloc") == 7
    assert R.cuda_check(FakeRuntime, (0, 1, 2), "two") == (1, 2) and R.cuda_check(FakeRuntime, 0, "none") is None
    with pytest.raises(RuntimeError, match="cudaMalloc failed: cudaErrorMemoryAllocation"):
        R.cuda_check(FakeRuntime, (2, None), "cudaMalloc")


def test_float32_values_are_written_as_the_shortest_text_that_reads_back():
    from playground.network.export import playground_command

    layer = get_layer("resize")
    x = layer.example_input(layer.example_shape)
    line = playground_command(layer, layer.resolve({"scales": "1.4"}, x.shape), x)
    assert "--set scales=1.4" in line and "1.399999976158142" not in line
    q = get_layer("activation").resolve(
        {"precision": "INT8", "quantize_scale": float(np.float32(9 / 127))}, (1, 1, 3, 3)
    )
    text = get_layer("activation").param("quantize_scale").to_text(q["quantize_scale"])
    assert text == "0.070866145" and np.float32(float(text)) == np.float32(q["quantize_scale"])
    assert get_layer("activation").param("alpha").to_text(0.1) == "0.1"  # a float64 stays itself


def test_every_gallery_reproduce_line_runs_as_written(tmp_path, monkeypatch):
    """snapshot's index.md: each example's `python -m playground run …` line names only files the gallery writes
    beside it, and run as written in that folder it gives the example's output."""
    import re
    import shlex
    from pathlib import Path

    from playground import cli
    from playground.chromium.snapshot import gallery, shots_from
    from playground.network import core

    shots = shots_from([], ["all"])
    files: dict = {}
    text = gallery(shots, [Path(f"{s.name}--{i}.png") for i, s in enumerate(shots)], "", files)
    lines = re.findall(r"- Reproduce: `([^`]+)`", text)
    assert len(lines) == len(shots)
    named = {f for line in lines for f in re.findall(r"[\w.-]+\.npy", line)}
    assert named == set(files) and any(".input.npy" in f for f in named)  # some examples have their own input
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PLAYGROUND_ENGINE_CACHE", str(tmp_path / "cache"))
    for name, array in files.items():
        np.save(name, array)
    with_files = [(s, line) for s, line in zip(shots, lines) if ".npy" in line]
    for shot, line in with_files[:: max(1, len(with_files) // 6)]:  # a spread of them: each run builds an engine
        args = shlex.split(line)[3:] + ["--output", "out.npy"]
        assert cli.main(args) == 0, line
        p = P.find(shot.page, shot.preset)
        want = core.evaluate(shot.page, p.params, P.input_for(p), build=False).output
        np.testing.assert_array_equal(np.load("out.npy"), want, err_msg=line)


def test_a_configurations_essential_parameters_are_worked_out_once(monkeypatch):
    """The command line a page shows and the script it offers both ask for the same configuration's essential
    parameters: the second ask resolves nothing; another configuration is worked out afresh."""
    from playground.base.layer import Layer

    layer, x = get_layer("convolution"), get_layer("convolution").example_input(get_layer("convolution").example_shape)
    calls, real = [], Layer.resolve

    def counted(self, raw, shape):
        calls.append(self.name)
        return real(self, raw, shape)

    monkeypatch.setattr(Layer, "resolve", counted)
    E._essential.clear()
    params = real(layer, {"stride_nd": "2,2"}, x.shape)
    first = E.playground_command(layer, params, x)
    asked = len(calls)
    assert asked >= len(layer.params) and "--set stride_nd=2,2" in first
    assert E.playground_command(layer, params, x) == first and len(calls) == asked
    other = real(layer, {"stride_nd": "1,2"}, x.shape)
    assert "--set stride_nd=1,2" in E.playground_command(layer, other, x) and len(calls) > asked
