"""The CLI contract: arguments, JSON keys, exit codes, files."""

import json
import subprocess
import sys

import numpy as np
import pytest

from playground.cli import main


def run_json(capsys, *args):
    code = main(["run", *args, "--json"])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out.strip() else None), out.err


def test_json_has_every_key_of_the_contract(capsys):
    code, d, _ = run_json(capsys, "convolution", "--set", "stride_nd=2,2", "--set", "padding_mode=SAME_UPPER")
    assert code == 0
    assert set(d) >= {
        "layer",
        "params",
        "input_shape",
        "output_shape",
        "output_source",
        "backend",
        "engine",
        "max_abs_diff",
        "messages",
        "error",
    }
    assert set(d["backend"]) >= {"name", "version", "can_build", "can_run", "device"}
    assert set(d["engine"]) >= {"status", "build_ms", "bytes", "output_shape", "cache_key", "layers"}
    assert d["output_shape"] == [1, 1, 3, 5] and d["params"]["stride_nd"] == [2, 2]
    assert d["output_source"] in ("tensorrt", "reference") and d["error"] is None
    if d["backend"]["can_build"]:
        assert d["engine"]["status"] in ("built", "cached") and d["engine"]["output_shape"] == [1, 1, 3, 5]
    if d["output_source"] == "reference":
        assert d["max_abs_diff"] is None


def test_values_of_every_spelling(tmp_path, capsys):
    kernel = tmp_path / "k.npy"
    np.save(kernel, np.ones((1, 1, 3, 3), np.float32))
    code, d, _ = run_json(
        capsys,
        "convolution",
        "--set",
        f"kernel=@{kernel}",
        "--set",
        "int8=true",
        "--set",
        "padding_mode=CAFFE_ROUND_DOWN",
        "--set",
        "bias=0.5",
    )
    assert code == 0 and d["params"]["padding_mode"] == "EXPLICIT_ROUND_DOWN"
    assert any("legacy name" in m for m in d["messages"])
    code, d, _ = run_json(capsys, "activation", "--set", "type=CLIP")
    assert (d["params"]["alpha"], d["params"]["beta"]) == (-2, 2)
    code, d, _ = run_json(capsys, "prelu", "--set", "slopes=leaky")
    assert np.allclose(d["params"]["slopes"], 0.1)


def test_output_file_is_the_shown_tensor(tmp_path, capsys):
    x = np.arange(-4, 5, dtype=np.float32).reshape(1, 1, 3, 3)
    np.save(tmp_path / "in.npy", x)
    code = main(
        [
            "run",
            "activation",
            "--set",
            "type=CLIP",
            "--input",
            str(tmp_path / "in.npy"),
            "--output",
            str(tmp_path / "out.npy"),
        ]
    )
    assert code == 0
    out = np.load(tmp_path / "out.npy")
    assert out.dtype == np.float32 and out.tolist() == [[[[-2, -2, -2], [-1, 0, 1], [2, 2, 2]]]]
    assert "outputH0: (1, 1, 3, 3)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, needle",
    [
        (["convolution", "--set", "num_groups=2"], "convolution.num_groups: must divide"),
        (["scale", "--set", "mode=CHANNEL", "--set", "shift=1,2"], "scale.shift:"),
        (["activation", "--set", "alpha"], "--set takes NAME=VALUE"),
        (["activation", "--set", "nonsense=1"], "activation.nonsense: is not a parameter"),
        (
            ["convolution", "--set", "kernel=@/no/such/file.npy"],
            "convolution.kernel: /no/such/file.npy: No such file or directory",
        ),
        (["activation", "--input", "/no/such.npy"], "--input: /no/such.npy: No such file or directory"),
    ],
)
def test_invalid_parameters_exit_2_and_name_the_parameter(args, needle, capsys):
    assert main(["run", *args]) == 2
    assert needle in capsys.readouterr().err


def test_unknown_layer_is_a_usage_error():
    with pytest.raises(SystemExit) as info:
        main(["run", "no_such_layer"])
    assert info.value.code == 2


def test_module_entry_point_and_exit_codes():
    ok = subprocess.run([sys.executable, "-m", "playground", "run", "scale", "--json"], capture_output=True, text=True)
    assert ok.returncode == 0 and json.loads(ok.stdout)["output_shape"] == [1, 3, 3, 3]
    bad = subprocess.run(
        [sys.executable, "-m", "playground", "run", "scale", "--set", "power=nan"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "scale.power: must hold finite numbers" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_layers_command_lists_every_parameter(capsys):
    from playground.layers import LAYERS

    assert main(["layers"]) == 0
    text = capsys.readouterr().out
    for layer in LAYERS.values():
        for p in layer.params:
            assert f"  {p.name} (" in text


needs_rtx = pytest.mark.skipif(
    __import__("playground.trt.backend", fromlist=["detect"]).detect().name != "tensorrt_rtx",
    reason="the refusal is TensorRT for RTX's",
)


@needs_rtx
def test_a_builders_refusal_is_an_answer_with_an_exit_status_of_its_own(tmp_path, capsys):
    # TensorRT for RTX builds no BF16 deconvolution (full TensorRT does): said before the build, refused by it
    out = tmp_path / "y.npy"
    code, d, err = run_json(capsys, "deconvolution", "--set", "precision=BF16", "--output", str(out))
    assert code == 3 and err.startswith("refused: tensorrt_rtx")
    assert d["engine"]["status"] == "refused" and "refused the network" in d["engine"]["refusal"]
    assert "no BF16 deconvolution" in d["engine"]["refusal"]
    assert any(m.startswith("Expected refusal: TensorRT for RTX builds no BF16") for m in d["messages"])
    assert d["output_source"] == "reference" and np.load(out).shape == tuple(d["output_shape"])


def test_a_0d_input_is_reported_as_0d(tmp_path, capsys):
    np.save(tmp_path / "z.npy", np.float32(3))
    assert main(["run", "scale", "--input", str(tmp_path / "z.npy")]) == 2
    assert "scale.input: must have rank 4 or 5, not 0 (got ())" in capsys.readouterr().err
