"""A room full of people cannot break it: every kind of hostile input gets a clear message that names the
parameter and the rule, never a traceback, a hang or the server's memory.

Kinds: declared maxima beyond the work budget, values refused for the wrong reason, damaged engine-cache
files, settings from the environment, text that would render as markdown or HTML, shared state a client
can clear, and the CLI's files and paths. (Hostile text typed into the running app's text controls, read
back from the DOM: tests/test_browser.py::test_hostile_text_in_every_text_control_stays_text.)
"""

from __future__ import annotations

import json
import os
import resource
import struct
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from playground.base import budget, reference
from playground.base.errors import ValidationError
from playground.base.inputs import InputError, validate_shape
from playground.layers import LAYERS, get_layer
from playground.network import core
from playground.serve.shared import backend, engine_cache, prefetcher
from playground.trt.cache import MAGIC, EngineCache, encode
from playground.ui.messages import inert

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "main.py")


def cli(*args, env=None, timeout=60) -> subprocess.CompletedProcess:
    """`python -m playground ARGS` with its own time limit: a hang fails the test instead of stalling it."""
    return subprocess.run(
        [sys.executable, "-m", "playground", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


# -- the work budget ----------------------------------------------------------------------------
def test_the_declared_maximum_convolution_is_refused_naming_budget_cost_and_what_to_lower():
    layer = get_layer("convolution")
    with pytest.raises(ValidationError) as err:
        layer.resolve({"num_output_maps": 64, "kernel_size_nd": "15,15"}, (4, 8, 512, 512))
    message = str(err.value)
    assert "PLAYGROUND_MAX_ELEMENTS" in message and "63,489,024" in message and "4×64×498×498" in message
    assert "lower num_output_maps, kernel_size_nd, the input size" in message


def test_multiply_adds_over_the_budget_are_refused_before_anything_is_computed():
    layer = get_layer("convolution")
    raw, shape = {"num_output_maps": 32, "kernel_size_nd": "7,7"}, (1, 8, 128, 128)
    with pytest.raises(ValidationError) as err:
        layer.resolve(raw, shape)
    macs = 32 * 122 * 122 * 8 * 49
    assert f"needs {macs:,}" in str(err.value) and "PLAYGROUND_MAX_MACS" in str(err.value)
    assert macs > budget.max_macs()


@pytest.mark.parametrize("name", LAYERS)
def test_every_layer_refuses_the_largest_declared_input_before_allocating_it(name):
    layer = get_layer(name)
    shape = (4, 8, 8, 512, 512) if 5 in layer.ranks else (4, 8, 512, 512)
    shapes = {n: shape for n in layer.input_names} if layer.several else shape  # every input at the largest
    if np.prod(shape) <= budget.max_elements():
        try:
            layer.resolve({}, shapes)  # the 2-D maximum is exactly the budget: allowed
        except ValidationError as exc:  # a matrix product of two such inputs is past the work budget: its output
            assert exc.param == "output", exc
        return
    tracemalloc.start()
    try:
        with pytest.raises(ValidationError, match="PLAYGROUND_MAX_ELEMENTS"):
            layer.resolve({}, shapes)
        assert tracemalloc.get_traced_memory()[1] < 1 << 20  # refused before any tensor was made
    finally:
        tracemalloc.stop()
    with pytest.raises(InputError, match=r"input\.shape: the budget is 8,388,608 values per tensor"):
        validate_shape(shape)  # the sidebar's shape, checked before an input is made


def test_the_budget_moves_with_the_environment(monkeypatch):
    layer = get_layer("convolution")
    raw, shape = {"num_output_maps": 32, "kernel_size_nd": "7,7"}, (1, 8, 128, 128)
    monkeypatch.setenv("PLAYGROUND_MAX_MACS", str(10**9))
    assert layer.resolve(raw, shape)["num_output_maps"] == 32
    monkeypatch.setenv("PLAYGROUND_MAX_MACS", "lots")
    with pytest.raises(ValidationError, match=r"settings\.PLAYGROUND_MAX_MACS: must be a whole number between"):
        layer.resolve(raw, shape)


def test_the_convolution_reference_computes_in_slices_with_bounded_memory(monkeypatch):
    layer = get_layer("convolution")
    shape = (1, 4, 96, 96)
    p = layer.resolve({"num_output_maps": 4, "kernel_size_nd": "9,9", "kernel": "random"}, shape)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    whole = layer.reference(x, p)
    windows_bytes = 8 * 4 * 88 * 88 * 81  # every window at once, in float64
    monkeypatch.setattr(reference, "REFERENCE_CHUNK_BYTES", 256 << 10)
    tracemalloc.start()
    try:
        sliced = layer.reference(x, p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(sliced, whole, rtol=1e-6, atol=1e-5)
    assert peak < windows_bytes / 4, (peak, windows_bytes)


# -- valid parameters refused for the wrong reason -------------------------------------------------
def test_the_powers_of_ten_kernel_is_finite_for_every_size_the_slider_allows():
    layer = get_layer("convolution")
    high = layer.param("kernel_size_nd").high
    for kh in range(1, high + 1):
        for kw in range(1, high + 1):
            p = layer.resolve({"kernel_size_nd": f"{kh},{kw}"}, (1, 1, high, high))
            assert np.isfinite(p["kernel"]).all() and (p["kernel"] != 0).all(), (kh, kw)
    p = layer.resolve({"kernel_size_nd": "9,9"}, (1, 1, 12, 12))  # the example
    assert np.isfinite(layer.reference(np.ones((1, 1, 12, 12), np.float32), p)).all()


@pytest.mark.parametrize("value", ["1e400", "99999999999999999999", "1e30"])
def test_a_whole_number_too_large_is_named_by_its_range(value):
    for name in ("num_output_maps", "stride_nd"):
        with pytest.raises(ValidationError, match="must be between 1 and"):
            get_layer("convolution").resolve({name: value}, (1, 1, 6, 9))


# -- damaged engine-cache files -------------------------------------------------------------------
def _damage(path: Path, kind: str, good: bytes) -> None:
    path.unlink()
    start = len(MAGIC) + 4
    (n,) = struct.unpack("<I", good[len(MAGIC) : start])
    meta = json.loads(good[start : start + n])
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        os.symlink("/dev/zero", path)
    elif kind == "directory":
        path.mkdir()
    elif kind in ("missing_field", "wrong_type", "not_a_record"):
        if kind == "missing_field":
            del meta["build_ms"]
        elif kind == "wrong_type":
            meta["layers"] = [{"name": 1}]
        else:
            meta = ["built"]
        blob = json.dumps(meta).encode()
        path.write_bytes(MAGIC + struct.pack("<I", len(blob)) + blob + good[start + n :])
    elif kind == "huge_header":
        path.write_bytes(MAGIC + struct.pack("<I", 2**32 - 1) + b"{}")


@pytest.mark.parametrize(
    "kind", ["missing_field", "wrong_type", "not_a_record", "huge_header", "fifo", "dev_zero", "directory"]
)
def test_a_damaged_cache_file_is_rebuilt_with_a_note(kind, tmp_path):
    first = core.evaluate("activation", {"alpha": 0.25, "type": "LEAKY_RELU"}, cache=EngineCache(tmp_path))
    path = tmp_path / f"{first.cache_key}.engine"
    _damage(path, kind, encode(first.report))
    start = time.monotonic()
    again = core.evaluate("activation", {"alpha": 0.25, "type": "LEAKY_RELU"}, cache=EngineCache(tmp_path))
    assert time.monotonic() - start < 20  # no hang on a fifo
    if kind == "directory":  # not ours to delete: built again, kept in memory, and said so
        assert again.engine_status == "built" and any("engine cache" in m for m in again.messages)
        return
    assert again.engine_status == "built" and again.error is None
    assert any(m.startswith(f"engine cache file {path.name} was unreadable") for m in again.messages)
    assert path.is_file() and not path.is_symlink()  # rebuilt in place: the next session reads it
    third = core.evaluate("activation", {"alpha": 0.25, "type": "LEAKY_RELU"}, cache=EngineCache(tmp_path))
    assert third.engine_status == "cached" and not third.messages


@pytest.mark.parametrize(
    "variable, value",
    [
        ("PLAYGROUND_ENGINE_CACHE_MB", "abc"),
        ("PLAYGROUND_OPT_LEVEL", "abc"),
        ("PLAYGROUND_OPT_LEVEL", "9"),
        ("PLAYGROUND_MAX_ELEMENTS", "-5"),
        ("PLAYGROUND_MAX_MACS", "nan"),
    ],
)
def test_settings_from_the_environment_get_a_clear_message(variable, value):
    done = cli("run", "activation", env={variable: value})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: settings.{variable}: must be a ") and f"(got '{value}')" in done.stderr


def test_a_bad_setting_on_a_page_is_one_message_naming_it(monkeypatch):
    monkeypatch.setenv("PLAYGROUND_OPT_LEVEL", "abc")
    at = AppTest.from_function(_layer_page, args=("activation",), default_timeout=60).run()
    assert not at.exception
    assert [e.value for e in at.error if "PLAYGROUND\\_OPT\\_LEVEL" in e.value or "PLAYGROUND_OPT_LEVEL" in e.value]


def _layer_page(name):
    from playground.ui.page import layer_page

    layer_page(name)


# -- text shown inert -----------------------------------------------------------------------------
HOSTILE = "[click](http://evil.example) <img src=x onerror=alert(1)> :red[boom] **bold** `code` $x$ www.evil.example"


ACTIVE = ("[click]", "](http:", "<img", ":red[", "**bold**", "`code`", "$x$", "www.evil")


def live(text: str) -> list[str]:
    """The constructs of HOSTILE that markdown would still act on in `text` (not escaped by a backslash)."""
    import re

    return [a for a in ACTIVE if re.search(r"(?<!\\)" + re.escape(a), text)]


def test_inert_text_escapes_every_active_construct():
    assert live(HOSTILE) == list(ACTIVE)  # the check itself sees each construct
    text = inert(HOSTILE)
    assert live(text) == []
    assert text.replace("\\", "").replace("\u2060", "") == HOSTILE  # nothing else changes: it reads as typed


def test_a_hostile_value_comes_back_escaped_in_the_error():
    from urllib.parse import quote

    from apptest import ask, open_page

    at = open_page("prelu", **{"prelu.slopes": HOSTILE})  # a tampered link: named in a warning, inert
    shown = [w.value for w in at.warning]
    assert any("prelu.slopes" in v for v in shown) and all(live(v) == [] for v in shown), shown
    problem = ask(at, {"prelu.slopes": HOSTILE})["problem"]  # typed on the stage: the stage shows it as text
    assert problem["keys"] == ["prelu.slopes"] and quote(HOSTILE) not in problem["message"]


# -- shared state ---------------------------------------------------------------------------------
def test_what_sessions_share_survives_a_client_clearing_streamlits_caches():
    import streamlit as st

    shared = engine_cache(), backend(), prefetcher()
    st.cache_data.clear()  # what Streamlit does for a client's "Clear cache" (AppSession._handle_clear_cache_request)
    st.cache_resource.clear()
    assert (engine_cache(), backend(), prefetcher()) == shared


# -- the CLI's files and paths --------------------------------------------------------------------
@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    np.save(d / "complex.npy", np.ones((1, 1, 3, 3), np.complex64))
    np.save(d / "beyond_float32.npy", np.full((1, 1, 3, 3), 1e300))
    np.save(d / "objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with open(d / "enormous.npy", "wb") as f:  # a header that declares 10^10 values over 80 bytes
        np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (100000, 100000)})
    with open(d / "short.npy", "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (1, 1, 3, 3)})
        f.write(b"\0" * 8)
    (d / "text.npy").write_text("not an array")
    os.mkfifo(d / "fifo.npy")
    os.symlink("/dev/zero", d / "zero.npy")
    np.save(d / "ok.npy", np.ones((1, 1, 3, 3)))
    (d / "out").mkdir()
    (d / "a_file").write_text("x")
    return d


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["run", "activation", "--input", "{d}/complex.npy"],
            "input.--input: {d}/complex.npy: must hold real numbers, not complex64",
        ),
        (["run", "activation", "--input", "{d}/beyond_float32.npy"], "holds values beyond float32's range"),
        (["run", "activation", "--input", "{d}/objects.npy"], "must hold real numbers, not object"),
        (["run", "activation", "--input", "{d}/enormous.npy"], "the budget is 8,388,608 values per tensor"),
        (["run", "activation", "--input", "{d}/short.npy"], "is shorter than its header says"),
        (["run", "activation", "--input", "{d}/text.npy"], "is not a readable .npy array"),
        (["run", "activation", "--input", "{d}/fifo.npy"], "{d}/fifo.npy: is not a regular file"),
        (["run", "activation", "--input", "{d}/zero.npy"], "{d}/zero.npy: is not a regular file"),
        (["run", "prelu", "--set", "slopes=@{d}/fifo.npy"], "prelu.slopes: {d}/fifo.npy: is not a regular file"),
        (["run", "activation", "--output", "{d}/missing/y.npy"], "its directory {d}/missing does not exist"),
        (["run", "activation", "--output", "{d}/out"], "must name a .npy file"),
        (["run", "activation", "--output", "{d}/out.npy/"], "must name a .npy file"),
        (["export", "activation", "--out", "{d}/missing/s.py"], "its directory {d}/missing does not exist"),
        (["snapshot", "--out", "{d}/a_file"], "is a file; it must name a directory"),
    ],
)
def test_cli_files_and_paths_are_checked_before_any_work(args, message, files):
    done = cli(*[a.format(d=files) for a in args])
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert message.format(d=files) in done.stderr
    assert not list((files / "out").iterdir())  # nothing written, not even a hidden .npy


def test_cli_writes_the_output_under_exactly_the_name_given(files, tmp_path):
    done = cli("run", "activation", "--input", str(files / "ok.npy"), "--output", str(tmp_path / "y.npy"))
    assert done.returncode == 0, done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["y.npy"] and np.load(tmp_path / "y.npy").shape == (1, 1, 3, 3)


def test_the_largest_configuration_within_the_budget_stays_within_memory(tmp_path):
    """The 2-D maximum (N4 C8 512×512 = the element budget) through the whole CLI: a bounded peak."""
    np.save(tmp_path / "x.npy", np.random.default_rng(0).standard_normal((4, 8, 512, 512)).astype(np.float32))
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = cli("run", "activation", "--input", str(tmp_path / "x.npy"), "--json", timeout=120)
    assert done.returncode == 0, done.stderr
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert peak_mb < 1024 or before / 1024 >= 1024, f"peak RSS {peak_mb:.0f} MB"


# -- what one change at the budget's largest input sends and computes ---------------------------------
def test_the_activation_curve_marks_look_at_a_bounded_sample():
    from playground.layers import activation

    x = np.linspace(-4, 4, 4 * 8 * 512 * 512, dtype=np.float32).reshape(4, 8, 512, 512)
    start = time.perf_counter()
    mx, my, step = activation.curve_marks(x, np.maximum(x, 0))
    assert time.perf_counter() - start < 2 and step == 128 and 0 < len(mx) <= activation.MAX_CURVE_MARKS
    np.testing.assert_array_equal(my, np.maximum(mx, 0))
