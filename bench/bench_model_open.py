"""A whole model opened twice by `python -m playground model` with the default budgets, side by side in one run: the
first open (loading and folding, ONNX Runtime's run, every node's reference, the parser's build, the answer and the
run's tensors kept) and the second (the kept answer read), each in a fresh process on a cache of its own, beside
ONNX Runtime's own run of the model (the same seeded input, in this process, the best of three).

Per model: nodes (and those folded), opened, agreeing, engine layers, the first and second open's seconds as the
command reports them and by the wall clock (the process's start and imports included), the first's CPU seconds (user
and system: the figure to compare on a loaded machine), the second as a share of the first, and the first's peak
memory.

    python bench/bench_model_open.py [--models light_resnet50,light_vgg19,FILE.onnx] [--no-engine]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parents[1]
LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MODELS = (
    "light_squeezenet",
    "light_shufflenet",
    "light_inception_v1",
    "light_inception_v2",
    "light_resnet50",
    "light_densenet121",
    "light_bvlc_alexnet",
    "light_zfnet512",
    "light_vgg19",
)
COUNTS = re.compile(
    r"^(\d+) nodes(?: \((\d+) constant nodes folded\))?, (\d+) opened as layers, (\d+) agreeing with ONNX Runtime"
    r"(?:, (\d+) engine layers)?; ([\d.]+) s",
    re.M,
)


def open_once(path: Path, cache: str, engine: bool) -> dict:
    """One `model` command in a fresh process: its counts, its own seconds, the wall clock's and its peak memory."""
    env = os.environ | {"PLAYGROUND_ENGINE_CACHE": cache}
    command = ["/usr/bin/time", "-f", "RSS %M CPU %U %S", sys.executable, "-m", "playground", "model", str(path)]
    start = time.perf_counter()
    ran = subprocess.run(
        command + ([] if engine else ["--no-engine"]), cwd=ROOT, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    m = COUNTS.search(ran.stdout)
    if ran.returncode != 0 or m is None:
        return {"error": (ran.stderr or ran.stdout).strip().splitlines()[-1:]}
    rss = re.search(r"RSS (\d+) CPU ([\d.]+) ([\d.]+)", ran.stderr)
    nodes, folded, opened, agreeing, layers, seconds = m.groups()
    return {
        "nodes": int(nodes),
        "folded": int(folded or 0),
        "opened": int(opened),
        "agreeing": int(agreeing),
        "layers": layers or "—",
        "seconds": float(seconds),
        "wall": wall,
        "rss_mb": int(rss.group(1)) / 1024 if rss else float("nan"),
        "cpu": float(rss.group(2)) + float(rss.group(3)) if rss else float("nan"),
    }


def onnxruntime_seconds(path: Path) -> float:
    """ONNX Runtime's run of the model (folded, on its seeded input), the best of three, session made beforehand."""
    sys.path.insert(0, str(ROOT))
    from playground.model import whole
    from playground.onnx import reading, runtime

    model = reading.load_model(path.read_bytes(), path.name)
    inputs, _ = whole.feeds(model)
    session = runtime.session(whole.for_runtime(model).SerializeToString())
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        session.run(None, inputs)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--no-engine", action="store_true", help="skip TensorRT's parser build")
    args = parser.parse_args()
    head = (
        f"{'model':<20} {'nodes':>5} {'folded':>6} {'opened':>6} {'agree':>5} {'engine':>6} "
        f"{'1st s':>7} {'1st wall':>8} {'1st CPU':>7} {'2nd s':>6} {'2nd wall':>8} {'2nd/1st':>7} {'1st MB':>6} "
        f"{'ORT s':>6}"
    )
    print(head)
    for name in args.models.split(","):
        path = Path(name) if name.endswith(".onnx") else LIGHT / f"{name}.onnx"  # a light model's name, or a file
        name = path.stem
        with tempfile.TemporaryDirectory(prefix="bench-model-") as cache:
            first = open_once(path, cache, not args.no_engine)
            second = open_once(path, cache, not args.no_engine)
        if "error" in first or "error" in second:
            print(f"{name:<20} error: {first.get('error') or second.get('error')}")
            continue
        ort = onnxruntime_seconds(path)
        print(
            f"{name:<20} {first['nodes']:>5} {first['folded']:>6} {first['opened']:>6} {first['agreeing']:>5} "
            f"{first['layers']:>6} {first['seconds']:>7.1f} {first['wall']:>8.1f} {first['cpu']:>7.1f} "
            f"{second['seconds']:>6.2f} "
            f"{second['wall']:>8.1f} {second['seconds'] / first['seconds']:>7.1%} {first['rss_mb']:>6.0f} {ort:>6.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
