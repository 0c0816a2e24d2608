"""What the browser tests' wait for an idle app costs the machine: wait_until_idle polled from Python (a round trip to
the page every 25 ms, as it was) against polled in the page (one call, as it is), alternated in rounds in one
Chromium on one app, side by side. A round: a layer page opened afresh, then three script runs (a new query each),
each waited until idle. CPU: Chromium's and Playwright's processes and this one, read from /proc (the app's apart).

    python bench/bench_idle_wait.py [--rounds 6]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common import machine, print_machine  # noqa: E402

from playground.chromium import browser as B  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu(root: int) -> float:
    """CPU seconds of `root` and every process under it, the ones they have reaped too."""
    parent, cpu = {}, {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                s = Path(f"/proc/{p}/stat").read_text()
            except OSError:
                continue
            fields = s[s.rindex(")") + 2 :].split()
            parent[int(p)], cpu[int(p)] = int(fields[1]), sum(int(x) for x in fields[11:15]) / TICK
    tree, todo = set(), [root]
    while todo:
        q = todo.pop()
        tree.add(q)
        todo += [p for p, pp in parent.items() if pp == q and p not in tree]
    return sum(cpu.get(p, 0.0) for p in tree)


def polled_from_python(page, timeout_ms: float = 60_000) -> None:
    """wait_until_idle as it was: the app's busy state read by a round trip to the page every 25 ms."""
    page.wait_for_selector('[data-testid="stMain"] [data-testid="stElementContainer"]:visible', timeout=timeout_ms)
    deadline, quiet_since = time.monotonic() + timeout_ms / 1e3, None
    while time.monotonic() < deadline:
        if page.evaluate(B.BUSY_JS, None):
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= 0.1:
            return
        page.wait_for_timeout(25)
    raise TimeoutError("the app was still running")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args()
    print_machine(machine())
    ways = {"polled from Python": polled_from_python, "polled in the page": B.wait_until_idle}
    cpu, wall = dict.fromkeys(ways, 0.0), dict.fromkeys(ways, 0.0)
    with B.serve_app(env={"PLAYGROUND_ENGINE_CACHE": tempfile.mkdtemp()}) as url, B.chromium() as chrome:
        ctx = B.new_context(chrome, viewport={"width": 1280, "height": 720})
        for r in range(args.rounds + 1):
            order = list(ways) if r % 2 else list(reversed(ways))
            for name in order:
                wait = ways[name]
                c0, t0 = tree_cpu(os.getpid()) - tree_cpu(url.pid), time.monotonic()
                page = ctx.new_page()
                for query in (
                    "",
                    "?convolution.stride_nd.h=2",
                    "?convolution.stride_nd.h=3",
                    "?convolution.num_output_maps=2",
                ):
                    page.goto(f"{url}/convolution{query}")
                    wait(page)
                page.close()
                if r:  # round 0 builds the engines: left out
                    cpu[name] += tree_cpu(os.getpid()) - tree_cpu(url.pid) - c0
                    wall[name] += time.monotonic() - t0
        ctx.close()
    print(f"\nper round (a page, four loads each waited until idle), mean of {args.rounds}:")
    for name in ways:
        print(f"  {name:<20} CPU {cpu[name] / args.rounds:6.2f} s   wall {wall[name] / args.rounds:6.2f} s")


if __name__ == "__main__":
    main()
