"""What the benchmarks share: the machine's description, percentiles, a series of latencies, the convolution's padding
walk, and the baselines (the bare Streamlit app, the bare build, the spec's fresh process)."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_core import spec_build_ms  # noqa: E402

from playground.chromium import browser as B  # noqa: E402
from playground.trt.backend import detect  # noqa: E402

TIMEOUT_MS = 60_000


# -- machine ----------------------------------------------------------------------------------
def machine() -> dict:
    cpu = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem_kb = next(int(l.split()[1]) for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal"))
    osname = platform.platform()
    with open("/etc/os-release") as f:
        for line in f:
            if line.startswith("PRETTY_NAME="):
                osname = line.split("=", 1)[1].strip().strip('"') + f" (kernel {platform.release()})"
    b = detect()
    try:
        chromium = subprocess.run(
            [B.chromium_path() or "chromium", "--version"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:  # a machine that benchmarks the server alone (bench_room) may have none
        chromium = "no Chromium"
    import importlib.metadata as md

    return {
        "cpu": f"{cpu} × {os.cpu_count()} logical CPUs",
        "ram": f"{mem_kb / 2**20:.1f} GiB",
        "os": osname,
        "python": platform.python_version(),
        "backend": f"{b.name} {b.version or ''} (device: {b.device}; "
        f"builds: {'yes' if b.can_build else 'no'}, runs: {'yes' if b.can_run else 'no'})",
        "browser": f"{chromium}, headless; Streamlit {md.version('streamlit')}",
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "load": "load average %.2f %.2f %.2f" % os.getloadavg(),
        "code": code_version(),
    }


def code_version() -> str:
    git = lambda *a: subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()  # noqa: E731
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return f"git {git('rev-parse', '--short', 'HEAD') or '?'}" + (" + uncommitted changes" if dirty else "")


def print_machine(m: dict) -> None:
    for k, v in m.items():
        print(f"{k:>8}: {v}")


# -- statistics -------------------------------------------------------------------------------
def pct(values, q: float) -> float:
    """q-th percentile (numpy's linear interpolation); NaN for no values."""
    return float(np.percentile(values, q)) if len(values) else float("nan")


@dataclass
class Series:
    name: str
    latency: list[float] = field(default_factory=list)  # ms, press -> drawn


# -- the convolution's padding walk ---------------------------------------------------------------
def padding_walk(n: int, layer: str = "convolution") -> tuple[list, list[tuple[int, int]]]:
    """n one-key steps over the padding_nd sliders (w up to 16, then h + 1, then w back down ...), each to a new
    (h, w) padding; returns the steps (query key, key to press) and the paddings they reach."""
    steps, configs, h, w, up = [], [], 0, 0, True
    while len(steps) < n:
        if (up and w == 16) or (not up and w == 0):
            h, up = h + 1, not up
            steps.append((f"{layer}.padding_nd.h", "ArrowRight"))
        else:
            w += 1 if up else -1
            steps.append((f"{layer}.padding_nd.w", "ArrowRight" if up else "ArrowLeft"))
        configs.append((h, w))
    return steps, configs


def reverse(steps):
    back = {"ArrowUp": "ArrowDown", "ArrowDown": "ArrowUp", "ArrowRight": "ArrowLeft", "ArrowLeft": "ArrowRight"}
    return [(k, back[p]) for k, p in reversed(steps)]


# -- baselines --------------------------------------------------------------------------------
# The bare app's output caption ("shape … · min … · max …", the last st.caption), and nothing in flight.
_CAPTION_JS = """() => { const c = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')];
  return c.length ? c[c.length - 1].innerText : null; }"""


def until_painted(page, holds: str, arg=None) -> None:
    """Wait until `holds(arg)` (a JS function's source) is true at a frame's start and that frame has been painted:
    the next frame has started (requestAnimationFrame). Every series of a key press to its pixels ends so (the
    stage's, the floor's and the Streamlit baselines'): one end point for all."""
    page.evaluate(
        """([holds, arg]) => new Promise((done) => { const f = (0, eval)('(' + holds + ')');
  const check = () => { if (f(arg)) requestAnimationFrame(() => done(true)); else requestAnimationFrame(check); };
  check(); })""",
        [holds, arg],
    )


def bare_app_series(changes: int, name: str, viewport: dict) -> Series:
    """bench/bare_app.py (one slider, two Plotly heatmaps) on a server of its own: `changes` arrow-key steps, each
    press -> its new caption drawn and the app idle."""
    with B.serve_app(app=ROOT / "bench" / "bare_app.py") as base, B.chromium() as chrome:
        context = B.new_context(chrome, viewport=viewport, reduced_motion="reduce")
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(base)
        B.wait_until_idle(page, TIMEOUT_MS)
        page.locator(B.key_selector("bare.scale")).get_by_role("slider").focus()
        series = Series(name)
        for _ in range(changes):
            before, after = page.evaluate(_CAPTION_JS), page.evaluate("() => window.__playgroundRuns.requested")
            start = time.perf_counter()
            page.keyboard.press("ArrowRight")
            until_painted(
                page,
                f"([before, after]) => ({_CAPTION_JS})() !== before && !window.__playgroundBusy(after)",
                [before, after],
            )
            series.latency.append((time.perf_counter() - start) * 1e3)
        context.close()
    return series


def bare_builds(layer_name: str, raws: list[dict], shape: tuple) -> list[float]:
    """build_engine in this process (warm builder) for each configuration: ms."""
    from playground.layers import get_layer
    from playground.trt.engine import build_engine

    backend, layer = detect(), get_layer(layer_name)
    build_engine(backend, layer, layer.resolve(raws[-1], shape), shape)  # warm the builder once, as the app is
    out = []
    for raw in raws:
        start = time.perf_counter()
        report = build_engine(backend, layer, layer.resolve(raw, shape), shape)
        out.append((time.perf_counter() - start) * 1e3)
        assert report.status == "built", report.error
    return out


def spec_runs(configs: list[tuple[int, int]]) -> list[float]:
    """bench_core.SPEC_SCRIPT (fresh process: import TensorRT, build the convolution on 1×1×6×9), started as a user
    starts it."""
    module = detect().name
    return [spec_build_ms(module, 1, 1, p, q, False) for p, q in configs]
