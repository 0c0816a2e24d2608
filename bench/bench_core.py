"""Per parameter change: the spec's workflow vs the core, measured side by side in one run.

(a) spec: a fresh Python process imports TensorRT and builds the one-layer network, started as a user starts the
    spec's script; (a') the same, with the allocator settings the app starts with (playground.serve.launch);
(b) core, warm process, cache miss: `evaluate` on a configuration it has not seen;
(c) core, revisit: the same configuration again (engine cache hit).

This process runs with the app's allocator settings (it restarts itself with them), as the app does.

    python bench/bench_core.py [--changes 12]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playground.network.core import evaluate  # noqa: E402
from playground.serve import launch  # noqa: E402
from playground.trt.backend import detect  # noqa: E402
from playground.trt.cache import EngineCache  # noqa: E402

SPEC_SCRIPT = """
import numpy as np
import {module} as trt
logger = trt.Logger(trt.Logger.ERROR)
builder = trt.Builder(logger)
network = builder.create_network(0)
config = builder.create_builder_config()
x = network.add_input('inputT0', trt.DataType.FLOAT, (1, 1, 6, 9))
w = np.power(10, range(4, -5, -1), dtype=np.float32).reshape(1, 1, 3, 3)
conv = network.add_convolution_nd(x, 1, (3, 3), w, np.zeros(1, np.float32))
conv.stride_nd = ({s}, {t})
conv.padding_nd = ({p}, {q})
network.mark_output(conv.get_output(0))
assert builder.build_serialized_network(network, config) is not None
"""


def changes(n: int):
    """n distinct convolution configurations, as a person moving stride and padding sliders would make."""
    combos = [(s, t, p, q) for p in (0, 1, 2) for q in (0, 1) for s in (1, 2, 3) for t in (1, 2)]
    return combos[:n]


def ms(seconds: float) -> float:
    return seconds * 1e3


def spec_build_ms(module: str, s: int, t: int, p: int, q: int, tuned: bool = False) -> float:
    """The spec's way, timed: a fresh Python process runs SPEC_SCRIPT (import TensorRT, build the convolution),
    started as a user starts it, or with the app's allocator settings (`tuned`)."""
    env = launch.tuned_env() if tuned else launch.untuned_env()
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", SPEC_SCRIPT.format(module=module, s=s, t=t, p=p, q=q)], check=True, env=env)
    return ms(time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--changes", type=int, default=12)
    args = ap.parse_args()
    launch.restart_tuned()
    backend = detect()
    if not backend.can_build:
        sys.exit("no TensorRT module installed: nothing to build")
    configs = changes(args.changes)
    spec, spec_tuned, miss, hit = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        cache = EngineCache(tmp)
        evaluate("convolution", {"stride_nd": "7,7"}, cache=cache)  # warm the process once, as the app is
        for s, t, p, q in configs:
            raw = {"stride_nd": f"{s},{t}", "padding_nd": f"{p},{q}"}
            spec.append(spec_build_ms(backend.name, s, t, p, q))
            spec_tuned.append(spec_build_ms(backend.name, s, t, p, q, tuned=True))
            start = time.perf_counter()
            r = evaluate("convolution", raw, cache=cache)
            miss.append(ms(time.perf_counter() - start))
            assert r.engine_status == "built", r.engine_status
            start = time.perf_counter()
            r = evaluate("convolution", raw, cache=cache)
            hit.append(ms(time.perf_counter() - start))
            assert r.engine_status == "cached", r.engine_status
    med = {
        name: statistics.median(v)
        for name, v in (("spec", spec), ("spec_tuned", spec_tuned), ("miss", miss), ("hit", hit))
    }
    print(f"backend: {backend.name} {backend.version}, device: {backend.device}; {len(configs)} parameter changes")
    print(f"{'workflow':<44}{'median ms':>12}{'min ms':>10}{'max ms':>10}")
    for label, key, values in (
        ("(a) spec: fresh process, import + build", "spec", spec),
        ("(a') the same, app's allocator settings", "spec_tuned", spec_tuned),
        ("(b) core, warm process, cache miss", "miss", miss),
        ("(c) core, revisit (cache hit)", "hit", hit),
    ):
        print(f"{label:<44}{med[key]:>12.2f}{min(values):>10.2f}{max(values):>10.2f}")
    print(
        f"ratio (a)/(b): {med['spec'] / med['miss']:.1f}x  (target ≥ 3x); (a')/(b): "
        f"{med['spec_tuned'] / med['miss']:.1f}x"
    )
    print(f"ratio (a)/(c): {med['spec'] / med['hit']:.0f}x;  (c) median {med['hit']:.2f} ms (target < 5 ms)")


if __name__ == "__main__":
    main()
