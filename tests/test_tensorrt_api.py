"""Full TensorRT 10.x and 11.x, checked as far as a machine without their libraries allows.

PyPI's TensorRT bindings wheels are the real Python extension modules; only their libraries
(`libnvinfer` and two more) are not to be had. Nine no-op functions compiled here stand in for them:
the module imports, every class, enum, method signature and property is the real one, and
`trt.Builder` fails exactly as it does on a machine without a GPU TensorRT can use ("factory function
returned nullptr").

- Every use of TensorRT that the playground and its exported scripts make (recorded by
  `tests/tensorrt_api.py` while TensorRT for RTX builds every layer) must exist, with the arguments
  used, in the oldest and newest 10.x and in 11.x.
- With full TensorRT that cannot build, the playground falls back to TensorRT for RTX (or NumPy) and
  says why: in `run --json`, on the home page, and in an exported script.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "tests" / "tensorrt_api.py"
# (wheel, version): the first 10.x, the last 10.x, and 11.x.
BINDINGS = {
    "10.0": ("tensorrt_cu12_bindings", "10.0.1"),
    "10.16": ("tensorrt_cu12_bindings", "10.16.1.11"),
    "11.4": ("tensorrt_cu13_bindings", "11.4.0.106"),
}
# Everything the bindings take from TensorRT's libraries (`nm -D --undefined-only tensorrt.so`), returning
# "nothing": no builder, no runtime, no parser, no plugin registry.
STUB_C = """
#include <stddef.h>
void *createInferBuilder_INTERNAL(void *logger, int version) { return NULL; }
void *createInferRuntime_INTERNAL(void *logger, int version) { return NULL; }
void *createInferRefitter_INTERNAL(void *engine, void *logger, int version) { return NULL; }
void *createNvOnnxParser_INTERNAL(void *network, void *logger, int version) { return NULL; }
void *createNvOnnxParserRefitter_INTERNAL(void *refitter, void *logger, int version) { return NULL; }
int getNvOnnxParserVersion(void) { return 0; }
void *getPluginRegistry(void) { return NULL; }
void *getBuilderPluginRegistry(int capability) { return NULL; }
int initLibNvInferPlugins(void *logger, const char *ns) { return 0; }
"""
SHIM = (
    "from tensorrt_bindings import *  # noqa: F401,F403  as PyPI's `tensorrt` package exposes it\n"
    "from tensorrt_bindings import __version__  # noqa: F401\n"
)
NULLPTR = "factory function returned nullptr"

try:
    import tensorrt_rtx  # noqa: F401

    HAVE_RTX = True
except ImportError:
    HAVE_RTX = False
needs_rtx = pytest.mark.skipif(not HAVE_RTX, reason="TensorRT for RTX (in requirements.txt) is not installed")


@pytest.fixture(scope="session")
def wheels(request) -> Path:
    """The bindings wheels, downloaded once into pytest's cache (the registry is needed the first time only)."""
    where = request.config.cache.mkdir("tensorrt-bindings")
    for name, version in BINDINGS.values():
        if not list(where.glob(f"{name}-{version}-*.whl")):
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "--only-binary=:all:",
                    "-q",
                    "-d",
                    str(where),
                    f"{name}=={version}",
                ],
                capture_output=True,
                text=True,
            )
            assert done.returncode == 0, f"could not download {name}=={version}: {done.stderr[-2000:]}"
    return where


@pytest.fixture(scope="session")
def full_tensorrt(wheels, tmp_path_factory):
    """version → environment variables under which `import tensorrt` is that full TensorRT, with stand-in
    libraries (so it imports everywhere and can build nowhere)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the stand-in TensorRT libraries")
    root = tmp_path_factory.mktemp("full-tensorrt")
    (root / "stub.c").write_text(STUB_C)
    made = {}

    def environment(key: str) -> dict:
        if key not in made:
            name, version = BINDINGS[key]
            major = version.split(".")[0]
            libs, site = root / key / "lib", root / key / "site"
            libs.mkdir(parents=True)
            for lib in ("nvinfer", "nvinfer_plugin", "nvonnxparser"):
                subprocess.run(
                    [compiler, "-shared", "-fPIC", "-o", str(libs / f"lib{lib}.so.{major}"), str(root / "stub.c")],
                    check=True,
                )
            with zipfile.ZipFile(next(wheels.glob(f"{name}-{version}-*.whl"))) as wheel:
                wheel.extractall(site)
            (site / "tensorrt").mkdir()
            (site / "tensorrt" / "__init__.py").write_text(SHIM)
            made[key] = {
                **os.environ,
                "LD_LIBRARY_PATH": str(libs),
                "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
                "PLAYGROUND_PREFETCH": "0",
            }
        return dict(made[key])

    return environment


@pytest.fixture(scope="session")
def recorded_uses(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("uses") / "uses.json"
    done = subprocess.run(
        [sys.executable, str(API), "record", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def run(args, env, cwd=ROOT, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


# Uses no TensorRT 10 or 11 has: the check must name each, so that a pass means something.
SENTINELS = [
    ["module", "add_convolution"],
    ["member", "ActivationType", "SWISH_NOPE"],
    ["call", "INetworkDefinition", "add_activation", 5, []],
    ["call", "INetworkDefinition", "add_convolution_nd", 4, ["padding"]],
    ["set", "ICudaEngine", "num_io_tensors"],
]


@needs_rtx
@pytest.mark.parametrize("version", BINDINGS)
def test_every_tensorrt_api_the_playground_uses_exists_in_full_tensorrt(
    version, full_tensorrt, recorded_uses, tmp_path
):
    uses = json.loads(recorded_uses.read_text())
    # The recording covers what builds every layer, what runs an engine and what the exported script calls.
    assert {
        ("INetworkDefinition", "add_convolution_nd"),
        ("IExecutionContext", "execute_async_v3"),
        ("IExecutionContext", "set_tensor_address"),
        ("Builder", "build_serialized_network"),
        ("IConvolutionLayer", "padding_mode"),
    } <= {tuple(u[1:3]) for u in uses}
    checked = tmp_path / "uses.json"
    checked.write_text(json.dumps(uses + SENTINELS))
    out = tmp_path / "problems.json"
    done = run([sys.executable, str(API), "check", str(checked), str(out)], full_tensorrt(version))
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["version"] == BINDINGS[version][1]
    assert result["problems"] == [
        "trt.add_convolution does not exist",
        "ActivationType.SWISH_NOPE does not exist",
        "INetworkDefinition.add_activation takes no 5 positional arguments with keywords []",
        "INetworkDefinition.add_convolution_nd takes no 4 positional arguments with keywords ['padding']",
        "ICudaEngine.num_io_tensors cannot be set",
    ]


def test_full_tensorrt_that_cannot_make_a_builder_is_what_the_stand_in_gives(full_tensorrt):
    code = (
        "import tensorrt as trt\ntry:\n    trt.Builder(trt.Logger(trt.Logger.WARNING))\n"
        "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
    )
    done = run([sys.executable, "-c", code], full_tensorrt("11.4"))
    assert done.returncode == 0 and NULLPTR in done.stdout, done.stderr


@needs_rtx
def test_cli_falls_back_to_tensorrt_rtx_and_says_why(full_tensorrt):
    done = run([sys.executable, "-m", "playground", "run", "activation", "--json"], full_tensorrt("11.4"))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    backend = result["backend"]
    assert backend["name"] == "tensorrt_rtx" and backend["can_build"]
    assert len(backend["passed_over"]) == 1
    assert backend["passed_over"][0].startswith("tensorrt 11.4.0.106 is installed but cannot make a builder here")
    assert NULLPTR in backend["passed_over"][0]
    assert result["engine"]["status"] in ("built", "cached")


def test_cli_with_full_tensorrt_chosen_and_unable_to_build_shows_the_reference(full_tensorrt):
    env = full_tensorrt("10.16") | {"PLAYGROUND_BACKEND": "tensorrt"}
    done = run([sys.executable, "-m", "playground", "run", "activation", "--json"], env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    result = json.loads(done.stdout)
    assert result["backend"]["name"] == "numpy" and not result["backend"]["can_build"]
    assert result["backend"]["passed_over"][0].startswith("tensorrt 10.16.1.11 is installed but cannot make a builder")
    assert result["engine"]["status"] == "not_built" and result["output_source"] == "reference"
    assert any(m.startswith("Not used: tensorrt 10.16.1.11") for m in result["messages"])


@needs_rtx
def test_home_page_says_why_full_tensorrt_is_not_used(full_tensorrt, tmp_path):
    out = tmp_path / "page.json"
    code = (
        f"import json, pathlib\nfrom streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({str(ROOT / 'main.py')!r}, default_timeout=120).run()\n"
        "texts = [e.value for e in at.text] + [e.value for e in at.markdown]\n"
        "metrics = {m.label: m.value for m in at.metric}\n"
        f"pathlib.Path({str(out)!r}).write_text(json.dumps({{'texts': texts, 'metrics': metrics, "
        "'exceptions': [e.value for e in at.exception]}))\n"
    )
    done = run([sys.executable, "-c", code], full_tensorrt("11.4"))
    assert done.returncode == 0, done.stderr[-3000:]
    page = json.loads(out.read_text())
    assert page["exceptions"] == [] and page["metrics"]["Backend"] == "tensorrt_rtx"
    assert [
        t
        for t in page["texts"]
        if t.startswith("Not used: tensorrt 11.4.0.106 is installed but cannot make a builder here") and NULLPTR in t
    ]


@needs_rtx
def test_exported_script_falls_back_or_says_why_it_cannot_build(full_tensorrt, tmp_path):
    script = tmp_path / "activation.py"
    env = full_tensorrt("11.4")
    done = run([sys.executable, "-m", "playground", "export", "activation", "--out", str(script)], env)
    assert done.returncode == 0, done.stderr
    done = run([sys.executable, str(script)], env, cwd=tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert (
        f"note: tensorrt 11.4.0.106 cannot make a builder here (pybind11::init(): {NULLPTR}); building with "
        "tensorrt_rtx" in done.stderr
    )
    assert "engine: built by tensorrt_rtx" in done.stdout and "output shape: (1, 1, 3, 3)" in done.stdout
    # Without TensorRT for RTX (a package that refuses to import stands in for it), nothing can build.
    hidden = tmp_path / "hidden"
    (hidden / "tensorrt_rtx").mkdir(parents=True)
    (hidden / "tensorrt_rtx" / "__init__.py").write_text("raise ImportError('hidden for this test')\n")
    env["PYTHONPATH"] = os.pathsep.join([str(hidden), env["PYTHONPATH"]])
    done = run([sys.executable, str(script)], env, cwd=tmp_path)
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr
    assert (
        f"error: no engine can be built here: tensorrt 11.4.0.106 cannot make a builder here (pybind11::init(): "
        f"{NULLPTR}); tensorrt_rtx is installed but does not import (hidden for this test)"
    ) in done.stderr


@pytest.mark.parametrize("version, flags", [("10.0", 1 << 1), ("10.16", 1 << 1), ("11.4", 1 << 0)])
def test_networks_are_created_strongly_typed(version, flags, full_tensorrt):
    """10.x numbers STRONGLY_TYPED 1 (after EXPLICIT_BATCH), 11.x numbers it 0: the flag is read by name."""
    code = (
        "import tensorrt as trt\nfrom playground.trt.engine import network_flags\n"
        "print(network_flags(trt), int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED))"
    )
    done = run([sys.executable, "-c", code], full_tensorrt(version))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == str(flags)
