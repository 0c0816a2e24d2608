"""One participant runs the largest configuration the work budget allows while the room goes on.

For each layer in turn, one participant opens that layer's page at the budget's largest configuration
(N4·C8·512·512 random input for the elementwise layers; for the convolution the most multiply-adds within
PLAYGROUND_MAX_MACS) and steps its precision back to back through the stage's route, so every change computes the
reference (or its emulation) at that size and builds its engine; meanwhile 10 other participants change a parameter
on their pages once a second (bench_room's participants: a Streamlit session for the page, then the route, as the
stage asks). Printed per phase: the 10 participants' change latency (p50, p95, max) next to the same room with no
heavy participant (the first phase), the heavy participant's own latency (it runs in a process of its own, so that
parsing its answers does not hold up the room's clients), errors, and the server's peak RSS.

    python bench/bench_hostile.py [--sessions 10] [--duration 20] [--layers activation,resize]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_memory import rss_mb  # noqa: E402
from bench_room import PAGES, Participant, drive  # noqa: E402
from common import machine, pct, print_machine  # noqa: E402

from playground.base import budget  # noqa: E402
from playground.chromium import browser as B  # noqa: E402
from playground.layers import LAYERS  # noqa: E402

LARGEST_INPUT = {"N": 4, "C": 8, "H": 512, "W": 512}  # = PLAYGROUND_MAX_ELEMENTS
# The convolution with the most multiply-adds under the default budget: 1·5·510·510 outputs × 8·9 products.
LARGEST_CONV = (
    {"N": 1, "C": 8, "H": 512, "W": 512},
    {"num_output_maps": "5", "kernel_size_nd.h": "3", "kernel_size_nd.w": "3"},
)


def heavy_query(layer: str) -> dict:
    dims, params = LARGEST_CONV if layer == "convolution" else (LARGEST_INPUT, {})
    return {
        f"{layer}.input.kind": "random",
        **{f"{layer}.input.{d}": str(v) for d, v in dims.items()},
        **{f"{layer}.{k}": v for k, v in params.items()},
    }


def heavy_process(base: str, layer: str, start: float, duration: float) -> Participant:
    """The heavy participant, in a process of its own: parsing its 100 MB answers must not hold up the room's
    clients, whose latency this measures (in one process it did: the room's p95 counted the heavy one's parsing)."""
    p = Participant(
        99, base, layer, closed=True, query=heavy_query(layer), walk=[(f"{layer}.precision", ["FP32", "FP16", "BF16"])]
    )
    asyncio.run(drive(p, start, duration, 0, p.i))
    p.ws = None  # not picklable, and closed
    return p


async def phase(base, layer: str | None, args) -> dict:
    from concurrent.futures import ProcessPoolExecutor

    light = [Participant(i, base, PAGES[i % len(PAGES)]) for i in range(args.sessions)]
    start = time.monotonic() + 0.5  # CLOCK_MONOTONIC: one clock for every process of this machine
    seen = {"max": rss_mb(base.pid)}

    async def watch_rss() -> None:
        while time.monotonic() < start + args.duration:
            seen["max"] = max(seen["max"], rss_mb(base.pid))
            await asyncio.sleep(1)

    with ProcessPoolExecutor(1) as pool:
        loop = asyncio.get_running_loop()
        heavy = [loop.run_in_executor(pool, heavy_process, str(base), layer, start, args.duration)] if layer else []
        await asyncio.gather(watch_rss(), *(drive(p, start, args.duration, args.period, p.i) for p in light))
        heavy = [await h for h in heavy]
    lat = [ms for p in light for _, ms in p.latency]
    heavy_lat = [ms for p in heavy for _, ms in p.latency]
    heavy_bytes = [b for p in heavy for b in p.answer_bytes]
    # the heavy page's changes to a configuration it had not asked for (its evaluation made now) and its revisits
    heavy_new = [ms for p in heavy for (_, ms), new in zip(p.latency, p.new) if new]
    heavy_back = [ms for p in heavy for (_, ms), new in zip(p.latency, p.new) if not new]
    errors = [e for p in light + heavy for e in p.errors]
    return {
        "layer": layer or "(none)",
        "p50": pct(lat, 50),
        "p95": pct(lat, 95),
        "max": max(lat, default=float("nan")),
        "changes": len(lat),
        "heavy_p50": pct(heavy_lat, 50),
        "heavy_changes": len(heavy_lat),
        "heavy_max": max(heavy_lat, default=float("nan")),
        "heavy_new": f"{len(heavy_new)} new p50 {pct(heavy_new, 50):.0f} max {max(heavy_new, default=float('nan')):.0f}",
        "heavy_back": f"{len(heavy_back)} back p50 {pct(heavy_back, 50):.0f}",
        "heavy_mb": max(heavy_bytes, default=0) / 1e6,
        "errors": len(errors),
        "examples": errors[:3],
        "rss_max": seen["max"],
    }


async def main_async(args) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as cache_dir, B.serve_app(env={"PLAYGROUND_ENGINE_CACHE": cache_dir}) as base:
        for layer in [None, *(args.layers.split(",") if args.layers else LAYERS)]:
            row = await phase(base, layer, args)
            rows.append(row)
            print(
                f"  {row['layer']:<12} room p50 {row['p50']:5.0f} ms  p95 {row['p95']:5.0f} ms  max {row['max']:5.0f} ms"
                f"  ({row['changes']} changes) | heavy p50 {row['heavy_p50']:6.0f} ms max {row['heavy_max']:6.0f} ms "
                f"({row['heavy_changes']} changes: {row['heavy_new']}, {row['heavy_back']} ms; answers ≤ "
                f"{row['heavy_mb']:.1f} MB) | errors {row['errors']} | server RSS max {row['rss_max']:.0f} MB",
                flush=True,
            )
            for e in row["examples"]:
                print("      ", e)
    base_p95 = rows[0]["p95"]
    print(
        "\nroom p95 with a heavy participant / without: "
        + ", ".join(f"{r['layer']} {r['p95'] / base_p95:.2f}×" for r in rows[1:])
    )
    print(
        f"worst room p95 {max(r['p95'] for r in rows):.0f} ms (target ≤ 300); server peak RSS "
        f"{max(r['rss_max'] for r in rows):.0f} MB"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=10, help="the room: participants changing a parameter each second")
    ap.add_argument("--duration", type=float, default=20, help="seconds per phase")
    ap.add_argument("--period", type=float, default=1.0)
    ap.add_argument("--layers", default="", help="the heavy participant's layers, comma-separated (default: all)")
    args = ap.parse_args()
    print_machine(machine())
    print(f"budget: {budget.max_elements():,} values per tensor, {budget.max_macs():,} multiply-adds per configuration")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
