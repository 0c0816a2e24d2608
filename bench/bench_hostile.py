"""One participant runs the largest configuration the work budget allows while the room goes on.

For each layer in turn, one websocket session opens that layer at the budget's largest configuration
(N4·C8·512·512 random input for the elementwise layers; for the convolution the most multiply-adds
within PLAYGROUND_MAX_MACS) and changes the input's seed back to back, so every change recomputes
the reference, redraws the figures and looks the engine up again; meanwhile 10 other sessions change
parameters once a second (bench_concurrency's websocket workload). Printed per phase: the 10
sessions' change latency (p50, p95, max) next to the same sessions with no heavy session (the
first phase), the heavy session's own change latency, errors, and the server's peak RSS.

    python bench/bench_hostile.py [--sessions 10] [--duration 20]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_browser import machine, pct, print_machine  # noqa: E402
from bench_concurrency import Session, WsClient, drive_ws, open_ws_session, server_usage  # noqa: E402

from playground import budget  # noqa: E402
from playground.chromium import browser as B  # noqa: E402
from playground.layers import LAYERS  # noqa: E402

LARGEST_INPUT = {"N": 4, "C": 8, "H": 512, "W": 512}  # = PLAYGROUND_MAX_ELEMENTS
# The convolution with the most multiply-adds under the default budget: 1·5·510·510 outputs × 8·9 products.
LARGEST_CONV = ({"N": 1, "C": 8, "H": 512, "W": 512}, {"num_output_maps": "5", "kernel_size_nd.h": "3",
                                                       "kernel_size_nd.w": "3"})


def heavy_query(layer: str) -> str:
    dims, params = (LARGEST_CONV if layer == "convolution" else (LARGEST_INPUT, {}))
    query = {f"{layer}.input.kind": "random", **{f"{layer}.input.{d}": str(v) for d, v in dims.items()},
             **{f"{layer}.{k}": v for k, v in params.items()}}
    return "&".join(f"{k}={v}" for k, v in query.items())


async def heavy(s: Session, client: WsClient, until: float, timeout: float) -> None:
    key = f"{s.page_name}.input.seed"
    seed = int(client.initial(key))
    while time.perf_counter() < until:
        seed += 1
        t0 = time.perf_counter()
        try:
            problems, _ = await client.rerun([client.state(key, seed)], timeout)
        except TimeoutError:
            s.error("timeout", f"{key}={seed}")
            return
        s.latency.append((time.perf_counter() - t0) * 1e3)
        for p in problems:
            s.error(p.split(":")[0], p)


async def phase(base: str, layer: str | None, args) -> dict:
    limit = asyncio.Semaphore(4)
    light = await asyncio.gather(*(open_ws_session(base, i, limit, args.timeout) for i in range(args.sessions)))
    hs = Session(99, layer or "-")
    client = None
    if layer:
        client = WsClient(base, layer, heavy_query(layer))
        await client.connect()
        t0 = time.perf_counter()
        problems, _ = await client.rerun(timeout=120)
        hs.latency.append((time.perf_counter() - t0) * 1e3)  # the first run: the largest configuration built
        for p in problems:
            hs.error(p.split(":")[0], p)
    start = time.perf_counter() + 0.5
    async with server_usage(base.pid) as use:
        tasks = [drive_ws(s, c, start, args.duration, args.period, args.period * s.index / args.sessions, args.timeout)
                 for s, c in light]
        if client:
            tasks.append(heavy(hs, client, start + args.duration, args.timeout))
        await asyncio.gather(*tasks)
    for _, c in light:
        await c.ws.close()
    if client:
        await client.ws.close()
    lat = [x for s, _ in light for x in s.latency]
    errors = sum(sum(s.errors.values()) for s, _ in light) + sum(hs.errors.values())
    examples = [e for s, _ in light for e in s.examples][:2] + hs.examples[:2]
    return {"layer": layer or "(none)", "p50": pct(lat, 50), "p95": pct(lat, 95), "max": max(lat, default=float("nan")),
            "changes": len(lat), "heavy_p50": pct(hs.latency[1:], 50), "heavy_first": hs.latency[0] if hs.latency else
            float("nan"), "heavy_changes": max(len(hs.latency) - 1, 0), "errors": errors, "examples": examples,
            "rss_max": use["max"]}


async def main_async(args) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as cache_dir, B.serve_app(env={"PLAYGROUND_ENGINE_CACHE": cache_dir}) as base:
        for layer in [None, *LAYERS]:
            row = await phase(base, layer, args)
            rows.append(row)
            print(f"  {row['layer']:<12} room p50 {row['p50']:5.0f} ms  p95 {row['p95']:5.0f} ms  max {row['max']:5.0f} ms"
                  f"  ({row['changes']} changes) | heavy first {row['heavy_first']:6.0f} ms, then p50 "
                  f"{row['heavy_p50']:5.0f} ms ({row['heavy_changes']} changes) | errors {row['errors']} | "
                  f"server RSS max {row['rss_max']:.0f} MB", flush=True)
            for e in row["examples"]:
                print("      ", e)
    base_p95 = rows[0]["p95"]
    print(f"\nroom p95 with a heavy session / without: " +
          ", ".join(f"{r['layer']} {r['p95'] / base_p95:.2f}×" for r in rows[1:]))
    print(f"worst room p95 {max(r['p95'] for r in rows):.0f} ms (target ≤ 1000); server peak RSS "
          f"{max(r['rss_max'] for r in rows):.0f} MB")


def main() -> None:
    os.environ.setdefault("PLAYGROUND_STAGE", "streamlit")  # this benchmark measures the Streamlit stage
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=10, help="the room: sessions changing a parameter each second")
    ap.add_argument("--duration", type=float, default=20, help="seconds per phase")
    ap.add_argument("--period", type=float, default=1.0)
    ap.add_argument("--timeout", type=float, default=30)
    args = ap.parse_args()
    print_machine(machine())
    print(f"budget: {budget.max_elements():,} values per tensor, {budget.max_macs():,} multiply-adds per configuration")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
