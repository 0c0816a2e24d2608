"""Slider-to-render latency in the real browser, next to a bare build and the spec's workflow.

Per parameter change: time.perf_counter() from the key press until the output is drawn — the
output's stats caption changed, the output heatmap holds a new spec, and the app is idle
(its run finished and nothing is stale or a skeleton; playground.chromium.browser's run tracker). Series:

  small   convolution on the spec's 1×1×6×9 input, padding_nd w/h stepped with the arrow keys on
          the per-axis sliders (every step changes the output shape); cache miss = a configuration
          not built before, cache hit = the same configurations revisited in reverse order
  slider  leaky_relu alpha (a real slider thumb, ArrowRight / ArrowLeft) on the spec's 1×1×3×3
          input; the page builds the three constructions, so a miss is three builds
  large   convolution on a 1×3×512×512 input (C, H, W typed into the Input tab), padding_nd w
  precision  convolution's precision stepped with the arrow keys (FP32 → TF32 → FP16 → BF16 → INT8 → FP8: a
          miss each, back: hits), at a few paddings (the padding steps themselves are not counted)

  sweep   convolution padding_nd, 20 arrow-key steps with a pause between them (a presenter's sweep), on a
          server with speculative builds (prefetch) on and on one with them off: the hit rate, and the
          latency of every change side by side (speculative builds must not delay the foreground)

Baselines measured in this run: a bare Streamlit app (bench/bare_app.py: one slider, two heatmaps), the
bare build (playground.trt.engine.build_engine in this process, warm builder, same configurations; for the
slider the sum of the three constructions) and the spec's way (a fresh Python process importing TensorRT
and building: bench_core.SPEC_SCRIPT, the convolution on 1×1×6×9, for the same padding values; started as a
user starts the spec's script, and, for comparison, with the app's allocator settings). First page load: a
new session on a server that has served the page before. The app's servers and this process run with the
allocator settings scripts/start.sh starts the app with (playground.trt.launch).

    python bench/bench_browser.py [--changes 33] [--large-changes 10] [--precision-rounds 4] [--spec-runs 8]
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_core import spec_build_ms  # noqa: E402

from playground.chromium import browser as B  # noqa: E402
from playground.trt import launch  # noqa: E402
from playground.trt.backend import detect  # noqa: E402

TIMEOUT_MS = 60_000
VIEWPORT = {"width": 1400, "height": 1000}

# The output heatmap's stats caption ("shape (…) · min … · max …"): the last such caption (input, kernel, output).
OUTPUT_CAPTION_JS = "() => { const caps = (%s)(); return caps.length > 1 ? caps[caps.length - 1] : null; }" % B.STATS_CAPTIONS_JS
# Before a key press: remember the drawn output (caption text, the heatmap's spec object) and the run mark.
BEFORE_JS = """() => {
  const plot = (%s)();
  window.__benchBefore = {caption: (%s)(), data: plot ? plot.spec || plot.data : null};
  return window.__playgroundRuns.requested;
}""" % (B.OUTPUT_PLOT_JS, OUTPUT_CAPTION_JS)
# The change is drawn: the run asked for after the mark finished, nothing busy, a new heatmap spec and (unless the
# change may keep the stats the caption rounds to, as a precision change does) a new caption.
DRAWN_JS = """([after, captionChanges]) => {
  if (window.__playgroundBusy(after)) return false;
  const plot = (%s)(), caption = (%s)(), b = window.__benchBefore;
  const drawn = plot && (plot.spec || plot.data);
  return Boolean(drawn && caption && (caption !== b.caption || !captionChanges) && drawn !== b.data);
}""" % (B.OUTPUT_PLOT_JS, OUTPUT_CAPTION_JS)
# Where the time went, from the tracker: press -> run started -> run finished -> drawn (ms, in page).
SEGMENTS_JS = """(t0) => { const R = window.__playgroundRuns;
  return [R.lastStart - t0, R.lastFinish - R.lastStart, performance.now() - R.lastFinish]; }"""
# The stage's source badge ("… engine built now, not run here" / "… from cache …"); the engine tab, drawn only
# when open, is not needed.
ENGINE_STATUS_JS = """() => {
  const text = document.querySelector('[data-testid="stMain"]').innerText;
  return /engine built now/.test(text) ? 'built' : /engine from cache/.test(text) ? 'cached' : '?';
}"""


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
        chromium = subprocess.run([B.chromium_path() or "chromium", "--version"], capture_output=True,
                                  text=True).stdout.strip()
    except OSError:  # a machine that benchmarks the server alone (bench_room) may have none
        chromium = "no Chromium"
    import importlib.metadata as md
    return {"cpu": f"{cpu} × {os.cpu_count()} logical CPUs", "ram": f"{mem_kb / 2**20:.1f} GiB", "os": osname,
            "python": platform.python_version(), "backend": f"{b.name} {b.version or ''} (device: {b.device}; "
            f"builds: {'yes' if b.can_build else 'no'}, runs: {'yes' if b.can_run else 'no'})",
            "browser": f"{chromium}, headless; Streamlit {md.version('streamlit')}",
            "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
            "load": "load average %.2f %.2f %.2f" % os.getloadavg(), "code": code_version()}


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
    segments: list[list[float]] = field(default_factory=list)  # ms: press->start, run, finish->drawn
    status: list[str] = field(default_factory=list)  # engine status shown: built / cached

    def row(self) -> str:
        s = list(zip(*self.segments)) or [[], [], []]
        built = self.status.count("built")
        return (f"{self.name:<42}{len(self.latency):>4}{pct(self.latency, 50):>9.0f}{pct(self.latency, 95):>9.0f}"
                f"{max(self.latency, default=float('nan')):>9.0f}{pct(s[0], 50):>9.0f}{pct(s[1], 50):>9.0f}"
                f"{pct(s[2], 50):>9.0f}   {built} built / {self.status.count('cached')} cached")


HEADER = (f"{'series':<42}{'n':>4}{'p50':>9}{'p95':>9}{'max':>9}{'→start':>9}{'run':>9}{'→drawn':>9}   engine shown"
          f"\n{'':<42}{'':>4}{'ms':>9}{'ms':>9}{'ms':>9}{'p50 ms':>9}{'p50 ms':>9}{'p50 ms':>9}")


# -- browser steps ----------------------------------------------------------------------------
def timed_press(page, key: str, series: Series, caption_changes: bool = True) -> None:
    """Press `key` in the focused widget; record press -> the new output drawn and the app idle."""
    after = page.evaluate(BEFORE_JS)
    t0_page = page.evaluate("() => performance.now()")
    start = time.perf_counter()
    page.keyboard.press(key)
    page.wait_for_function(DRAWN_JS, arg=[after, caption_changes], polling="raf", timeout=TIMEOUT_MS)
    series.latency.append((time.perf_counter() - start) * 1e3)
    series.segments.append(page.evaluate(SEGMENTS_JS, t0_page))
    series.status.append(page.evaluate(ENGINE_STATUS_JS))


def focus(page, key: str, role: str | None = None):
    w = page.locator(B.key_selector(key))
    target = w.get_by_role(role) if role else w.locator("input")
    target.focus()
    return target


def walk(page, steps: list[tuple[str, str, str | None]], series: Series, caption_changes: bool = True) -> None:
    """steps: (widget key, key to press, role or None for the input). Focus moves only when the widget changes."""
    current = None
    for widget_key, press, role in steps:
        if widget_key != current:
            focus(page, widget_key, role)
            current = widget_key
        timed_press(page, press, series, caption_changes)


def reverse(steps):
    back = {"ArrowUp": "ArrowDown", "ArrowDown": "ArrowUp", "ArrowRight": "ArrowLeft", "ArrowLeft": "ArrowRight"}
    return [(k, back[p], r) for k, p, r in reversed(steps)]


def padding_walk(n: int, layer: str = "convolution") -> tuple[list, list[tuple[int, int]]]:
    """n one-key steps over the padding_nd sliders (w up to 16, then h + 1, then w back down ...), each to a new
    (h, w) padding; returns the steps and the paddings they reach."""
    steps, configs, h, w, up = [], [], 0, 0, True
    while len(steps) < n:
        if (up and w == 16) or (not up and w == 0):
            h, up = h + 1, not up
            steps.append((f"{layer}.padding_nd.h", "ArrowRight", "slider"))
        else:
            w += 1 if up else -1
            steps.append((f"{layer}.padding_nd.w", "ArrowRight" if up else "ArrowLeft", "slider"))
        configs.append((h, w))
    return steps, configs


def precision_walk(page, rounds: int, miss: Series, hit: Series) -> None:
    """Per round: one padding step (not counted: a configuration no other series built, with a random 3 × 1
    kernel, whose output every precision changes), then the precision slider across its choices (each a miss)
    and back (hits)."""
    from playground.layers import get_layer

    n = len(get_layer("convolution").param("precision").choices) - 1
    for r in range(rounds):
        walk(page, [("convolution.padding_nd.w", "ArrowRight", "slider")], Series("padding step"))
        walk(page, [("convolution.precision", "ArrowRight", "slider")] * n, miss, caption_changes=False)
        walk(page, [("convolution.precision", "ArrowLeft", "slider")] * n, hit, caption_changes=False)


def sweep(context, base: str, n: int, pause_s: float) -> Series:
    """n steps over the padding sliders with a pause between them (a presenter sweeping a parameter), with a
    2 × 2 kernel so that none of these configurations was built by the other series."""
    page = open_page(context, base, "convolution?convolution.kernel_size_nd.h=2&convolution.kernel_size_nd.w=2")
    series = Series(f"sweep padding, {n} steps, {pause_s:g} s apart")
    steps, _ = padding_walk(n)
    for i, step in enumerate(steps):
        if i:
            time.sleep(pause_s)
        walk(page, [step], series)
    page.close()
    return series


def first_load_ms(context, base: str, path: str) -> float:
    """A new session opening `path` on a server that has served it before: goto -> the page idle."""
    start = time.perf_counter()
    open_page(context, base, path).close()
    return (time.perf_counter() - start) * 1e3


def open_page(context, base: str, path: str):
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{base}/{path}")
    B.wait_until_idle(page, TIMEOUT_MS)
    return page


# -- baselines --------------------------------------------------------------------------------
def bare_app_series(changes: int, name: str, viewport: dict) -> Series:
    """bench/bare_app.py (one slider, two heatmaps) on a server of its own: `changes` arrow-key steps."""
    with B.serve_app(app=ROOT / "bench" / "bare_app.py") as base, B.chromium() as chrome:
        context = B.new_context(chrome, viewport=viewport, reduced_motion="reduce")
        series = Series(name)
        walk(open_page(context, base, ""), [("bare.scale", "ArrowRight", "slider")] * changes, series)
        context.close()
    return series


def bare_builds(layer_name: str, raws: list[dict], shape: tuple) -> list[float]:
    """build_engine in this process (warm builder) for each configuration: ms."""
    from playground.trt.engine import build_engine
    from playground.layers import get_layer

    backend, layer = detect(), get_layer(layer_name)
    build_engine(backend, layer, layer.resolve(raws[-1], shape), shape)  # warm the builder once, as the app is
    out = []
    for raw in raws:
        start = time.perf_counter()
        report = build_engine(backend, layer, layer.resolve(raw, shape), shape)
        out.append((time.perf_counter() - start) * 1e3)
        assert report.status == "built", report.error
    return out


def spec_runs(configs: list[tuple[int, int]], tuned: bool = False) -> list[float]:
    """bench_core.SPEC_SCRIPT (fresh process: import TensorRT, build the convolution on 1×1×6×9), started as a user
    starts it, or with the app's allocator settings (`tuned`)."""
    module = detect().name
    return [spec_build_ms(module, 1, 1, p, q, tuned) for p, q in configs]


# -- main -------------------------------------------------------------------------------------
def main() -> None:
    os.environ.setdefault("PLAYGROUND_STAGE", "streamlit")  # this benchmark measures the Streamlit stage
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--changes", type=int, default=33, help="changes per small series (miss and hit each)")
    ap.add_argument("--large-changes", type=int, default=10)
    ap.add_argument("--spec-runs", type=int, default=8, help="fresh-process spec builds for the baseline")
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--precision-rounds", type=int, default=4, help="rounds of the precision series")
    ap.add_argument("--sweep", type=int, default=20, help="steps of the prefetch sweep")
    ap.add_argument("--pause", type=float, default=0.6, help="seconds between the sweep's steps")
    args = ap.parse_args()
    launch.restart_tuned()  # the bare build is timed as the app builds
    if not detect().can_build:
        sys.exit("no TensorRT module installed: nothing to build")
    m = machine()
    print_machine(m)

    small_steps, small_cfg = padding_walk(args.changes)
    slider_steps = [("leaky_relu.alpha", "ArrowRight", "slider")] * args.changes
    large_steps, large_cfg = padding_walk(args.large_changes)
    results: list[Series] = []
    with tempfile.TemporaryDirectory() as cache_dir, \
            B.serve_app(env={"PLAYGROUND_ENGINE_CACHE": cache_dir}) as base, B.chromium() as chrome:
        context = B.new_context(chrome, viewport=VIEWPORT, reduced_motion="reduce")
        t_setup = time.perf_counter()
        page = open_page(context, base, "convolution")
        print(f"\nfirst page load (server's first TensorRT build included): {time.perf_counter() - t_setup:.1f} s")
        warm_loads = [first_load_ms(context, base, "convolution") for _ in range(5)]
        miss, hit = Series("small conv padding: cache miss"), Series("small conv padding: cache hit")
        walk(page, small_steps, miss)
        walk(page, reverse(small_steps), hit)
        results += [miss, hit]
        page.close()

        page = open_page(context, base, "leaky_relu")
        miss, hit = Series("slider leaky_relu alpha: miss (3 builds)"), Series("slider leaky_relu alpha: hit")
        walk(page, slider_steps, miss)
        walk(page, reverse(slider_steps), hit)
        results += [miss, hit]
        page.close()

        page = open_page(context, base, "convolution?convolution.kernel_size_nd.h=3&convolution.kernel_size_nd.w=1"
                                        "&convolution.kernel=random")
        miss, hit = Series("precision change: cache miss"), Series("precision change: cache hit")
        precision_walk(page, args.precision_rounds, miss, hit)
        results += [miss, hit]
        page.close()

        if not args.skip_large:
            page = open_page(context, base, "convolution?convolution.input.C=3&convolution.input.H=512"
                                                    "&convolution.input.W=512")
            assert "Input (1, 3, 512, 512)" in page.locator('[data-testid="stMain"]').inner_text()
            miss, hit = Series("large 1×3×512×512 conv: cache miss"), Series("large 1×3×512×512 conv: cache hit")
            walk(page, large_steps, miss)
            walk(page, reverse(large_steps), hit)
            results += [miss, hit]
            page.close()
        sweeps = {"on": sweep(context, base, args.sweep, args.pause)}
        context.close()
    with tempfile.TemporaryDirectory() as cache_dir, B.serve_app(env={"PLAYGROUND_ENGINE_CACHE": cache_dir,
                                                                     "PLAYGROUND_PREFETCH": "0"}) as base, \
            B.chromium() as chrome:
        context = B.new_context(chrome, viewport=VIEWPORT, reduced_motion="reduce")
        open_page(context, base, "convolution").close()
        sweeps["off"] = sweep(context, base, args.sweep, args.pause)
        context.close()
    bare_app = bare_app_series(args.changes, "bare Streamlit app: slider → two heatmaps", VIEWPORT)
    results += [sweeps["on"], sweeps["off"], bare_app]

    # Baselines, after the browser is closed (the same machine, one thing at a time).
    conv_raws = [{"padding_nd": f"{h},{w}"} for h, w in small_cfg]
    bare_small = bare_builds("convolution", conv_raws, (1, 1, 6, 9))
    alphas = [round(0.1 + 0.01 * (i + 1), 2) for i in range(args.changes)]
    from playground.layers.leaky_relu import CONSTRUCTIONS
    per_construction = {c: bare_builds("leaky_relu", [{"alpha": a, "construction": c} for a in alphas], (1, 1, 3, 3))
                        for c in CONSTRUCTIONS}
    bare_slider = [sum(v) for v in zip(*per_construction.values())]
    bare_large = [] if args.skip_large else bare_builds(
        "convolution", [{"padding_nd": f"{h},{w}"} for h, w in large_cfg], (1, 3, 512, 512))
    step = max(1, len(small_cfg) // max(1, args.spec_runs))
    spec = spec_runs(small_cfg[::step][: args.spec_runs])
    spec_tuned = spec_runs(small_cfg[::step][: args.spec_runs], tuned=True)

    print("\nbrowser: press -> output drawn and app idle (ms); →start: press to the server starting the run, "
          "run: the script run, →drawn: run finished to drawn")
    print(HEADER)
    for s in results:
        print(s.row())
    print(f"\n{'baseline':<44}{'n':>4}{'p50 ms':>10}{'p95 ms':>10}")
    for label, v in (("bare build_engine, small conv (same configs)", bare_small),
                     ("bare build_engine, 3 leaky constructions", bare_slider),
                     ("bare build_engine, large conv (same configs)", bare_large),
                     ("spec: fresh process import + build (small)", spec),
                     ("  the same, app's allocator settings", spec_tuned)):
        if v:
            print(f"{label:<44}{len(v):>4}{pct(v, 50):>10.0f}{pct(v, 95):>10.0f}")
    by = {s.name: s for s in results}
    p50 = lambda name: pct(by[name].latency, 50)  # noqa: E731
    on, off = sweeps["on"], sweeps["off"]
    hits = lambda s: s.status.count("cached") / max(len(s.status), 1)  # noqa: E731
    print(f"\nfirst page load on a warm server (new session): p50 {pct(warm_loads, 50):.0f} ms "
          f"(n={len(warm_loads)}, max {max(warm_loads):.0f} ms)")
    print(f"sweep of {args.sweep} steps: cache hits {hits(on):.0%} with prefetch, {hits(off):.0%} without; "
          f"change p50 {pct(on.latency, 50):.0f} vs {pct(off.latency, 50):.0f} ms, "
          f"p95 {pct(on.latency, 95):.0f} vs {pct(off.latency, 95):.0f} ms")
    print("\ntargets")
    bare50 = pct(bare_app.latency, 50)
    checks = [
        ("small conv cache hit p50 ≤ 150 ms", p50("small conv padding: cache hit"), 150),
        ("slider cache hit p50 ≤ 150 ms", p50("slider leaky_relu alpha: hit"), 150),
        ("precision change cache hit p50 ≤ 150 ms", p50("precision change: cache hit"), 150),
        ("precision change cache miss p50 ≤ bare app p50 + 120 ms", p50("precision change: cache miss"), bare50 + 120),
        ("small conv cache miss p50 ≤ bare app p50 + 120 ms", p50("small conv padding: cache miss"), bare50 + 120),
        ("first page load, warm server, p50 ≤ 2500 ms", pct(warm_loads, 50), 2500),
        ("small conv cache miss p50 ≤ bare build p50 + 150 ms", p50("small conv padding: cache miss"),
         pct(bare_small, 50) + 150),
        ("slider cache miss p50 ≤ bare builds p50 + 150 ms", p50("slider leaky_relu alpha: miss (3 builds)"),
         pct(bare_slider, 50) + 150),
    ]
    if not args.skip_large:
        checks += [("large conv cache miss p50 ≤ 1000 ms", p50("large 1×3×512×512 conv: cache miss"), 1000),
                   ("large conv cache hit p50 ≤ 1000 ms", p50("large 1×3×512×512 conv: cache hit"), 1000)]
    for label, value, limit in checks:
        print(f"  {label:<56}{value:>8.0f} ms vs {limit:>6.0f} ms  {'met' if value <= limit else 'NOT met'}")
    print(f"  {'sweep cache hit rate with prefetch ≥ 80 %':<56}{hits(on):>8.0%}    vs    80 %  "
          f"{'met' if hits(on) >= 0.8 else 'NOT met'}")
    spec50 = pct(spec, 50)
    ratio = spec50 / p50("small conv padding: cache miss")
    print(f"  {'built change ≥ 1.5× faster than the spec (fresh process)':<56}{ratio:>8.1f}×   vs   1.5×  "
          f"{'met' if ratio >= 1.5 else 'NOT met'}")
    print(f"\nratio spec (fresh process) / browser, small conv: miss {spec50 / p50('small conv padding: cache miss'):.1f}x, "
          f"hit {spec50 / p50('small conv padding: cache hit'):.1f}x")
    print("load average at the end: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
