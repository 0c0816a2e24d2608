"""`model --precision` on ONNX's light models, side by side with the FP32 `model` run of the same model, in one run:
each command a fresh process (as a person runs it), its wall time and its CPU time (user + system, the figure that
holds on a shared machine), then per precision the first divergence, the plan and whether the output meets the
policy with it.

    python bench/bench_precision.py [--models light_densenet121,...] [--precisions FP16,BF16,INT8] [--repeat 1]

The budgets are raised to open every node (PLAYGROUND_MAX_MACS=1e10, PLAYGROUND_MAX_ELEMENTS=2^27), as the
README's table of the `model` command was measured. The FP32 run builds TensorRT's engine through the cache (a
first build is not timed: one run comes before).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import machine, print_machine  # noqa: E402

ENV = os.environ | {"PLAYGROUND_MAX_MACS": "10000000000", "PLAYGROUND_MAX_ELEMENTS": "134217728"}


def light(name: str) -> str:
    import onnx

    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light", f"{name}.onnx")


def timed(args: list[str]) -> tuple[float, float, dict]:
    """(wall s, CPU s of the process, its JSON answer)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-m", "playground", "model", *args, "--json"],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=ROOT,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"model {' '.join(args)} failed ({r.returncode}): {r.stderr[-500:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, json.loads(r.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="light_squeezenet,light_resnet50,light_densenet121")
    parser.add_argument("--precisions", default="FP16,BF16,INT8")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print_machine(machine())
    rows = []
    for name in args.models.split(","):
        path = light(name)
        timed([path])  # the engine's first build, into the cache: not timed
        for _ in range(args.repeat):
            wall, cpu, answer = timed([path])
            rows.append((name, "FP32 model", wall, cpu, f"{answer['counts']['agreeing']} agreeing", "", ""))
            base_cpu = cpu
            for p in args.precisions.split(","):
                wall, cpu, answer = timed([path, "--precision", p])
                pr = answer["precision"]
                first = pr["first_divergence"]
                agrees = all(o["agrees"] for o in answer["output"].values())
                rows.append(
                    (
                        name,
                        f"{p} ({cpu / base_cpu:.1f}× CPU)",
                        wall,
                        cpu,
                        f"FP32 composed {'agrees' if agrees else 'DIFFERS'}; "
                        + (f"{first['node']} ({first['op_type']}, {first['metric']})" if first else "none"),
                        f"{len(pr['keep_fp32'])} kept, {pr['plan']['evaluations']} evaluations",
                        "meets" if pr["output"]["meets_with_plan"] else "does not meet",
                    )
                )
    print(f"{'model':<18} {'run':<22} {'wall s':>7} {'CPU s':>6}  first divergence / plan")
    for name, run, wall, cpu, first, plan, meets in rows:
        print(f"{name:<18} {run:<22} {wall:7.1f} {cpu:6.1f}  {first}" + (f"; {plan}; {meets}" if plan else ""))


if __name__ == "__main__":
    main()
