"""Process RSS over many rebuilds: no unbounded growth, and the engine cache stays under its cap. This process
runs with the allocator settings the app starts with (playground.serve.launch: it restarts itself with them).

    python bench/bench_memory.py [--rebuilds 500] [--cap-mb 16]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playground.network.core import evaluate  # noqa: E402
from playground.serve import launch  # noqa: E402
from playground.trt.cache import EngineCache  # noqa: E402


def rss_mb(pid: int | str = "self") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def configs(n: int):
    """n distinct configurations spread over every layer (each a cache miss)."""
    out = []
    i = 0
    while len(out) < n:
        a = round(0.001 * (i + 1), 4)
        out += [
            ("activation", {"type": "LEAKY_RELU", "alpha": a}),
            ("scale", {"shift": a}),
            ("prelu", {"slopes": a}),
            ("leaky_relu", {"alpha": a}),
            ("convolution", {"bias": a, "stride_nd": f"{1 + i % 2},{1 + i % 3}"}),
        ]
        i += 1
    return out[:n]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rebuilds", type=int, default=500)
    ap.add_argument("--cap-mb", type=float, default=16)
    args = ap.parse_args()
    launch.restart_tuned()
    with tempfile.TemporaryDirectory() as tmp:
        cache = EngineCache(tmp, cap_bytes=int(args.cap_mb * 2**20))
        start, samples = time.perf_counter(), []
        for i, (layer, raw) in enumerate(configs(args.rebuilds), 1):
            r = evaluate(layer, raw, cache=cache)
            assert r.engine_status in ("built", "not_built"), (layer, raw, r.engine_status, r.error)
            if i % 50 == 0 or i == 1:
                samples.append((i, rss_mb(), cache.disk_bytes() / 2**20))
        elapsed = time.perf_counter() - start
    print(
        f"{args.rebuilds} rebuilds in {elapsed:.1f} s ({elapsed / args.rebuilds * 1e3:.1f} ms each); cache cap {args.cap_mb} MB"
    )
    print(f"{'rebuild':>8}{'RSS MB':>10}{'cache MB':>10}")
    for i, rss, disk in samples:
        print(f"{i:>8}{rss:>10.1f}{disk:>10.2f}")
    mid_i, mid_rss, _ = samples[len(samples) // 2]
    biggest = max(s[2] for s in samples)
    print(
        f"RSS growth over the second half: {samples[-1][1] - mid_rss:+.1f} MB (from {mid_rss:.1f} MB at rebuild "
        f"{mid_i}); max cache size {biggest:.2f} MB ≤ cap {args.cap_mb} MB: {biggest <= args.cap_mb}"
    )


if __name__ == "__main__":
    main()
