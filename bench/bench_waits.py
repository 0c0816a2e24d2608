"""How a benchmark waits changes what it measures: the slider app (bench/slider_app.py) pressed with each way of
waiting for its new text, alternated in rounds in one Chromium, side by side.

  until painted   common.until_painted: one evaluation whose promise checks at each frame's start and resolves at
                  the next (every series of bench_browser ends so)
  wait polling    Playwright's wait_for_function(..., polling="raf") on the same condition, then nothing more
                  (how bench_browser waited for the slider app before: the stage's walks waited as above)

    python bench/bench_waits.py [--rounds 4] [--presses 8]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import machine, pct, print_machine, until_painted  # noqa: E402

from playground.chromium import browser as B  # noqa: E402

HAS_TEXT = "(i) => document.body.textContent.includes('value is ' + i)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--presses", type=int, default=8)
    args = ap.parse_args()
    print_machine(machine())
    ways = {
        "until painted": lambda page, i: until_painted(page, HAS_TEXT, i),
        "wait polling": lambda page, i: page.wait_for_function(HAS_TEXT, arg=i, polling="raf"),
    }
    times: dict[str, list[float]] = {w: [] for w in ways}
    with B.serve_app(app=ROOT / "bench" / "slider_app.py") as base, B.chromium() as chrome:
        page = B.new_context(chrome, viewport={"width": 1280, "height": 720}).new_page()
        page.goto(base)
        page.wait_for_selector("text=value is 0")
        B.wait_until_idle(page)
        page.locator(B.key_selector("slider.value")).get_by_role("slider").focus()
        value = 0
        for r in range(args.rounds):
            for way in list(ways)[:: 1 if r % 2 == 0 else -1]:  # each way first in every other round
                for _ in range(args.presses):
                    value += 1
                    start = time.perf_counter()
                    page.keyboard.press("ArrowRight")
                    ways[way](page, value)
                    times[way].append((time.perf_counter() - start) * 1e3)
    print(f"\n{'the slider app, press → its text':<36}{'n':>4}{'p50 ms':>9}{'p95 ms':>9}")
    for way, v in times.items():
        print(f"  {way:<34}{len(v):>4}{pct(v, 50):>9.1f}{pct(v, 95):>9.1f}")
    a, b = pct(times["wait polling"], 50), pct(times["until painted"], 50)
    print(f"\nwait polling / until painted: {a / b:.2f}× ({a - b:+.1f} ms at p50)")


if __name__ == "__main__":
    main()
