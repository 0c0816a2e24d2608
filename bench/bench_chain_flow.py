"""What drawing a chain's flow and trace costs, side by side in one run, per chain: on the server, the read maps of
the hover trace (`chaintrace.trace_maps`: made once per geometry, then kept) cold and warm and their JSON's size and
encoding time; in Chromium, on the chain page, the flow's drawing (arcs and engine boxes) alone and the figures'
drawing with it, and one hover's trace (composed and outlined), medians over `--rounds`.

    python bench/bench_chain_flow.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import machine, print_machine  # noqa: E402

CHAINS = {  # name: (page query, layers, shape)
    "conv_relu starter (1×1×6×9)": ("starter=conv_relu", "convolution+activation", (1, 1, 6, 9)),
    "conv+act+conv+act (1×3×32×32)": (
        "layers=convolution,activation,convolution,activation&input.shape=1,3,32,32",
        "convolution+activation+convolution+activation",
        (1, 3, 32, 32),
    ),
}


def server(layers: str, shape: tuple) -> dict:
    from playground.network import chain as C
    from playground.serve import chaintrace

    chain = C.resolve(layers, {}, shape)
    t = time.perf_counter()
    maps = chaintrace.trace_maps(chain)
    cold = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    chaintrace.trace_maps(chain)
    warm = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    text = json.dumps(maps)
    return {
        "maps cold ms": cold,
        "maps warm ms": warm,
        "JSON KB": len(text) / 1024,
        "JSON ms": (time.perf_counter() - t) * 1e3,
    }


BROWSER = """(n) => {
  const s = document.querySelector('.pg-stage').__stage, med = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
  const time = (fn) => { const xs = []; for (let i = 0; i < n; i++) { const t = performance.now(); fn(i); document.body.offsetHeight; xs.push(performance.now() - t); } return med(xs); };
  const keys = s.answer.chain.layers.map((l) => l.key), last = keys.at(-1), shape = s.figures.figs[last].t.shape;
  return {
    "flow ms": time(() => s.chainDrawing.draw()),
    "figures + flow ms": time(() => s.figures.draw()),
    "hover trace ms": time((i) => s.chainDrawing.trace.draw({ key: last, index: [0, 0, i % shape[2], (i * 7) % shape[3]] })),
  };
}"""


def browser(rounds: int) -> dict:
    from playground.chromium import browser as B

    out = {}
    with B.serve_app() as app, B.chromium() as br:
        for name, (query, _, _) in CHAINS.items():
            ctx = B.new_context(br, viewport={"width": 1600, "height": 1000})
            page = ctx.new_page()
            page.goto(f"{app}/chain?{query}")
            page.wait_for_selector(".pg-engine-line:not([data-status='pending'])", timeout=120_000)
            page.wait_for_function("Boolean(document.querySelector('.pg-stage').__stage.answer.trace)")
            out[name] = page.evaluate(BROWSER, rounds)
            ctx.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    print_machine(machine())
    rows = {name: server(layers, shape) for name, (_, layers, shape) in CHAINS.items()}
    for name, figures in browser(args.rounds).items():
        rows[name] |= figures
    cols = list(next(iter(rows.values())))
    print(f"{'':34}" + "".join(f"{c:>20}" for c in cols))
    for name, row in rows.items():
        print(f"{name:34}" + "".join(f"{row[c]:>20.2f}" for c in cols))
    print(f"(browser figures: medians of {args.rounds}; server: one cold and one warm call)")


if __name__ == "__main__":
    main()
