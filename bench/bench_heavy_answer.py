"""The heavy participant's answer on its own, this tree against another, side by side: the stage route's answer
(`server._answer`: the evaluation, the answer's figures and its frame) for a page at the element budget
(N4·C8·512·512) stepping its precision, with no room and no browser. Per layer, a fresh random input each round;
FP32, FP16 and BF16 are new configurations, FP16 and FP32 again are revisits. Each tree runs in a process of its
own (its memos cold, its imports made by a small page first), alternately, `--rounds` times; the medians over the
rounds are printed (of a round's new configurations' median, and of their worst) with the process's peak RSS.

    python bench/bench_heavy_answer.py --against DIR [--layers activation,softmax,prelu] [--rounds 3]

DIR: another tree of the playground (e.g. `git archive main playground | tar -x -C DIR`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NEW = ("FP32", "FP16", "BF16")
BACK = ("FP16", "FP32")


def measure(layers: list[str]) -> dict:
    """Per layer: {"new": [ms, ...], "back": [ms, ...]} of this process's tree (the first on sys.path)."""
    import numpy as np

    from playground.serve import server, shared

    for layer in layers:  # the process's first answers import and open what every later one uses: not timed
        small = np.random.default_rng(99).uniform(-4, 4, (1, 1, 8, 8)).astype(np.float32)
        seat = server.SEATS.take(server.SEATS.open(layer, small))
        for precision in NEW:
            server._answer(seat, {"params": {f"{layer}.precision": precision}})
    shared.prefetcher().idle()  # the small pages' neighbours, built ahead, done before the clock starts
    out = {}
    for i, layer in enumerate(layers):
        x = np.random.default_rng(i).uniform(-4, 4, (4, 8, 512, 512)).astype(np.float32)
        seat = server.SEATS.take(server.SEATS.open(layer, x))
        times = {"new": [], "back": []}
        for kind, steps in (("new", NEW), ("back", BACK)):
            for precision in steps:
                start = time.perf_counter()
                status, reply = server._answer(seat, {"params": {f"{layer}.precision": precision}})
                times[kind].append((time.perf_counter() - start) * 1e3)
                assert status == 200 and isinstance(reply, bytes), reply
        out[layer] = times
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def run(tree: Path, layers: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(tree), "--layers", ",".join(layers)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--against", type=Path, help="the other tree (its playground/ is imported)")
    ap.add_argument("--layers", default="activation,softmax,prelu")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    layers = args.layers.split(",")
    if args.child:
        sys.path.insert(0, str(args.child))
        print(json.dumps(measure(layers)))
        return
    if args.against is None:
        ap.error("--against DIR is required")
    trees = {"before": args.against.resolve(), "after": ROOT}
    results = {name: [] for name in trees}
    for _ in range(args.rounds):  # alternately, so that a busy moment falls on both
        for name, tree in trees.items():
            results[name].append(run(tree, layers))
    print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; {args.rounds} rounds; ms, median of rounds")
    print(
        f"{'layer':<12}{'new before':>12}{'new after':>11}{'worst before':>14}{'worst after':>13}"
        f"{'revisit before':>16}{'revisit after':>15}"
    )
    for layer in layers:
        cell = {
            (name, kind): statistics.median(statistics.median(r[layer][kind]) for r in rs)
            for name, rs in results.items()
            for kind in ("new", "back")
        }
        # the slowest new configuration of a round (FP16: the output, its float64 truth and the error map)
        worst = {name: statistics.median(max(r[layer]["new"]) for r in rs) for name, rs in results.items()}
        print(
            f"{layer:<12}{cell['before', 'new']:>12.0f}{cell['after', 'new']:>11.0f}"
            f"{worst['before']:>14.0f}{worst['after']:>13.0f}"
            f"{cell['before', 'back']:>16.0f}{cell['after', 'back']:>15.0f}"
        )
    print(
        "peak RSS MB: "
        + ", ".join(f"{name} {statistics.median(r['rss_mb'] for r in rs):.0f}" for name, rs in results.items())
    )


if __name__ == "__main__":
    main()
