"""The chain on the stage against a layer page, side by side in one run, from key press to pixels in Chromium.

Series:
  chain new       the 4-layer starter leaky_by_hand (Scale → ReLU → Scale → ElementWise SUM) on a 1×3×32×32 input:
                  the second Scale's scale stepped with the arrow key, each a configuration not drawn before
  layer new       the same press on the Scale layer page, on the same 1×3×32×32 input
  chain back      the chain's steps in reverse: configurations drawn before (the tab's own cache)
  layer back      the layer page's likewise
  first paint     a new session opening each page on a warm server, from the navigation's start to the first frame
                  after the stage drew its first answer, by the page's own clock (data-painted-at)
  reruns          Streamlit script runs started while the chain's steps were answered, per step
Each press ends as bench_browser's do (common.until_painted): the stage's data-drawn counter past the press, then a
frame painted. Engines are built by the follow-up (`finish`) where no engine runs: a press is timed to its drawing,
the follow-up waited for before the next press. Speculative builds are off (PLAYGROUND_PREFETCH=0): the layer page
gets no neighbour built ahead that the chain could not have.

    python bench/bench_chain_stage.py [--changes 12] [--loads 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_browser import DRAWN_JS, SETTLED_JS, STAGE, TIMEOUT_MS, VIEWPORT  # noqa: E402
from common import Series, machine, pct, print_machine, until_painted  # noqa: E402

from playground.chromium import browser as B  # noqa: E402

CHAIN = ("chain?starter=leaky_by_hand&input.shape=1,3,32,32", "scale2.scale.0")
LAYER = ("scale?scale.input.n=1&scale.input.c=3&scale.input.h=32&scale.input.w=32", "scale.scale.0")
FRAME_MS = 1000 / 60


def open_page(context, base: str, path: str):
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{base}/{path}")
    page.wait_for_selector(f"{STAGE}[data-drawn] [data-figure] canvas", timeout=TIMEOUT_MS)
    B.wait_until_idle(page, TIMEOUT_MS)
    page.wait_for_function(SETTLED_JS, polling="raf")
    return page


def walk(page, param: str, key: str, n: int, name: str, draws: dict) -> Series:
    """`n` presses of `key` on `param`'s slider: press -> the answer drawn and a frame painted; each press's
    follow-up (the engine's build) waited for before the next; into `draws[name]`, the stage's own time drawing
    each answer (data-draw-ms: controls, text, figures)."""
    series, draws[name] = Series(name), []
    page.focus(f'{STAGE} [data-param="{param}"]')
    for _ in range(n):
        before = int(page.get_attribute(STAGE, "data-drawn"))
        start = time.perf_counter()
        page.keyboard.press(key)
        until_painted(page, DRAWN_JS, before)
        series.latency.append((time.perf_counter() - start) * 1e3)
        draws[name].append(float(page.get_attribute(STAGE, "data-draw-ms")))
        page.wait_for_function(SETTLED_JS, polling="raf")
    return series


def runs(page) -> int:
    return page.evaluate("() => window.__playgroundRuns.started")


def first_paints(context, base: str, path: str, n: int) -> list[float]:
    out = []
    for _ in range(n):
        page = open_page(context, base, path)
        page.wait_for_function(f"() => document.querySelector('{STAGE}').dataset.paintedAt")
        out.append(float(page.get_attribute(STAGE, "data-painted-at")))
        page.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--changes", type=int, default=12)
    ap.add_argument("--loads", type=int, default=5)
    args = ap.parse_args()
    print_machine(machine())
    with (
        tempfile.TemporaryDirectory() as cache_dir,
        B.serve_app(env={"PLAYGROUND_ENGINE_CACHE": cache_dir, "PLAYGROUND_PREFETCH": "0"}) as base,
        B.chromium() as chrome,
    ):
        context = B.new_context(chrome, viewport=VIEWPORT, reduced_motion="reduce")
        series, reruns, draws = {}, None, {}
        for what, (path, param) in (("chain", CHAIN), ("layer", LAYER)):
            page = open_page(context, base, path)  # the server's first imports and builds, before any timing
            started = runs(page)
            series[f"{what} new"] = walk(page, param, "ArrowRight", args.changes, f"{what} new", draws)
            if what == "chain":
                reruns = (runs(page) - started) / args.changes
            series[f"{what} back"] = walk(page, param, "ArrowLeft", args.changes, f"{what} back", draws)
            page.close()
        paints = {
            what: first_paints(context, base, path, args.loads)
            for what, (path, _) in (("chain", CHAIN), ("layer", LAYER))
        }
        context.close()

    print(f"\nkey press -> pixels, ms ({args.changes} presses each; chain: {CHAIN[0]}, layer: {LAYER[0]})")
    print(f"  {'series':<14}{'p50':>8}{'p90':>8}{'max':>8}   {'of it, drawing (p50)':>20}")
    for s in series.values():
        print(
            f"  {s.name:<14}{pct(s.latency, 50):>8.1f}{pct(s.latency, 90):>8.1f}{max(s.latency):>8.1f}"
            f"   {pct(draws[s.name], 50):>20.1f}"
        )
    new = pct(series["chain new"].latency, 50) / pct(series["layer new"].latency, 50)
    back = pct(series["chain back"].latency, 50) - pct(series["layer back"].latency, 50)
    print("\nchain against layer (p50)")
    print(f"  new configuration   {new:.2f}×  (target ≤ 1.5×)")
    print(f"  revisit             {back:+.1f} ms  (target: within one frame, {FRAME_MS:.1f} ms)")
    print(f"\nfirst paint, ms since navigation by the page's clock ({args.loads} loads, warm server)")
    for what, times in paints.items():
        print(
            f"  {what:<8}p50 {pct(times, 50):>7.0f}   max {max(times):>7.0f}"
            + ("   (target ≤ 1500)" if what == "chain" else "")
        )
    print(f"\nStreamlit script runs per chain edit: {reruns:g} (target 0)")


if __name__ == "__main__":
    main()
