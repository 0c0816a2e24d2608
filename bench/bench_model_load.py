"""Loading a whole model (`reading.load_model`: the checker, shape inference, ONNX Runtime's constant folding) alone,
each in a fresh process: its peak memory (the process's, its imports paid before) and its CPU seconds, for this
checkout and, side by side, another (`--baseline`: a checkout of the code before a change).

    python bench/bench_model_load.py [--models light_vgg19,light_resnet50] [--baseline ../other-checkout]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parents[1]
LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"

# run in the checkout measured: its weights' MiB, the peak MB before and after loading, the CPU seconds it took
PROBE = """
import json, resource, sys
import onnxruntime
from playground.onnx import reading
data = open(sys.argv[1], "rb").read()
use = lambda: resource.getrusage(resource.RUSAGE_SELF)
before = use()
model = reading.load_model(data, "model.onnx")
after = use()
print(json.dumps({
    "weights": sum(len(t.raw_data) for t in model.graph.initializer) / 2**20,
    "imports_mb": before.ru_maxrss / 1024,
    "peak_mb": after.ru_maxrss / 1024,
    "cpu": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
}))
"""


def load_once(checkout: Path, path: Path) -> dict:
    ran = subprocess.run([sys.executable, "-c", PROBE, str(path)], cwd=checkout, capture_output=True, text=True)
    if ran.returncode != 0:
        return {"error": (ran.stderr or ran.stdout).strip().splitlines()[-1:]}
    return json.loads(ran.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="light_vgg19,light_densenet121,light_resnet50")
    parser.add_argument("--baseline", type=Path, help="another checkout, measured the same way beside this one")
    args = parser.parse_args()
    checkouts = [("this", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    print(f"{'model':<20} {'weights MiB':>11} " + " ".join(f"{c + ' MB':>12} {c + ' CPU s':>14}" for c, _ in checkouts))
    for name in args.models.split(","):
        path = Path(name) if name.endswith(".onnx") else LIGHT / f"{name}.onnx"
        runs = [load_once(root, path) for _, root in checkouts]
        if any("error" in r for r in runs):
            print(f"{path.stem:<20} error: {[r.get('error') for r in runs]}")
            continue
        print(
            f"{path.stem:<20} {runs[0]['weights']:>11.0f} "
            + " ".join(f"{r['peak_mb']:>12.0f} {r['cpu']:>14.1f}" for r in runs),
            flush=True,
        )


if __name__ == "__main__":
    main()
