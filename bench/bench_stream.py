"""A whole model's run a segment at a time (`model.stream`) against one run that marks every tensor
(`whole.run_all`), side by side in one process: the scoped model of bench_graph.py (10,000 nodes by default) under
budgets that cut it into more and more segments. Per row: the segments, the seconds of the plan (shape inference and
the cuts), of `onnx.utils.Extractor`'s extractions, of the whole run (ONNX Runtime's sessions and runs included), and
the most tensors held at once against the model's total.

    python bench/bench_stream.py [--nodes 10000] [--budgets 1024,256,64,16]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_graph import scoped_model  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--budgets", default="1024,256,64,16", help="PLAYGROUND_MODEL_MAX_MB, one row each")
    args = parser.parse_args()
    import onnx

    from playground.base import budget
    from playground.model import stream, whole
    from playground.onnx import reading

    with tempfile.TemporaryDirectory() as work:
        path = scoped_model(args.nodes, Path(work) / "scoped.onnx")
        model = reading.load_model(path.read_bytes(), path.name)
    inputs, _ = whole.feeds(model)
    extract = onnx.utils.Extractor.extract_model
    spent = [0.0, 0]

    def timed(self, *a, **k):
        start = time.perf_counter()
        try:
            return extract(self, *a, **k)
        finally:
            spent[0] += time.perf_counter() - start
            spent[1] += 1

    onnx.utils.Extractor.extract_model = timed
    with budget.whole_model():
        start = time.perf_counter()
        total = len(whole.run_all(model, inputs))
        single = time.perf_counter() - start
    print(f"scoped model, {args.nodes:,} nodes, {total:,} tensors; one run marking every tensor: {single:.2f} s")
    print(f"{'MAX_MB':>6} {'segments':>8} {'plan s':>6} {'extract s':>9} {'run s':>6} {'run/one':>7} {'most held':>9}")
    for mb in args.budgets.split(","):
        os.environ["PLAYGROUND_MODEL_MAX_MB"] = mb
        spent[:] = [0.0, 0]
        with budget.whole_model():
            start = time.perf_counter()
            plan = stream.Plan(model, model, inputs)
            planned = time.perf_counter() - start
            start, most, segments = time.perf_counter(), 0, 0
            for _, values, _ in stream.run(model, inputs):
                most, segments = max(most, len(values)), segments + 1
            ran = time.perf_counter() - start
        assert segments == len(plan.cuts) - 1
        print(
            f"{mb:>6} {segments:>8} {planned:>6.2f} {spent[0]:>9.2f} {ran:>6.2f} {ran / single:>6.1f}× {most:>9,}",
            flush=True,
        )


if __name__ == "__main__":
    main()
