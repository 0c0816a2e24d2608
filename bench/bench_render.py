"""Where a cached change's time goes in the browser: Streamlit's render passes, on the convolution page and on
the bare app (bench/bare_app.py), side by side in one run.

A change is drawn in several React render passes (the run starting, its elements arriving, the run finishing),
and each pass re-renders the elements of the fragment that runs. This traces Chromium's main thread (the
Performance panel's timeline) over cached changes and prints, per change: the latency (as bench_browser.py
measures it), the main thread's React work, how many passes of more than 3 ms it took and what one costs on
average, and the elements on the page. The pages alternate (page, bare, page, bare) so that the machine's
drift hits both.

With --against REV, the convolution page of another version of the code (a git worktree of REV, served from a
temporary directory) takes its turn too, and the p50s of all rounds are compared at the end.

    python bench/bench_render.py [--changes 8] [--rounds 2] [--against REV]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_browser as BB  # noqa: E402

from playground.chromium import browser as B  # noqa: E402

PASS_MS = 3.0  # a React scheduler task longer than this is a render pass over the tree, not a stray update
ELEMENTS_JS = "() => document.querySelectorAll('[data-testid=\"stElementContainer\"]').length"


def react_tasks(trace_path: str) -> list[float]:
    """The durations (ms) of React's scheduler tasks on the page's main thread: its render and commit work."""
    events = json.loads(Path(trace_path).read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    calls = [e for e in events if e.get("name") == "FunctionCall" and "dur" in e]
    main = Counter((e["pid"], e["tid"]) for e in calls).most_common(1)[0][0]
    tasks = [e["dur"] / 1e3 for e in calls if (e["pid"], e["tid"]) == main
             and "react-dom" in e.get("args", {}).get("data", {}).get("url", "")]
    if not tasks:  # Streamlit's frontend bundles React as react-dom.HASH.js; another layout needs another rule
        raise SystemExit(f"no React task (script react-dom.*.js) on the main thread of {trace_path}")
    return tasks


def traced(chrome, page, steps, series: BB.Series) -> list[float]:
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        chrome.start_tracing(page=page, path=f.name, categories=["devtools.timeline"])
        BB.walk(page, steps, series)
        chrome.stop_tracing()
        return react_tasks(f.name)


def row(name: str, series: BB.Series, tasks: list[float], elements: int) -> str:
    n = len(series.latency)
    passes = [t for t in tasks if t > PASS_MS]
    per_pass = sum(passes) / len(passes) if passes else float("nan")
    return (f"{name:<30}{n:>4}{BB.pct(series.latency, 50):>9.0f}{sum(tasks) / n:>10.0f}{len(passes) / n:>9.1f}"
            f"{per_pass:>10.1f}{elements:>10}")


@contextlib.contextmanager
def checkout(rev: str):
    """A git worktree of `rev` in a temporary directory (its app.py runs its own code), removed after."""
    with tempfile.TemporaryDirectory() as parent:
        where = Path(parent) / "tree"
        subprocess.run(["git", "-C", str(BB.ROOT), "worktree", "add", "--detach", str(where), rev], check=True,
                       capture_output=True)
        try:
            yield where
        finally:
            subprocess.run(["git", "-C", str(BB.ROOT), "worktree", "remove", "--force", str(where)],
                           capture_output=True)


def main() -> None:
    os.environ.setdefault("PLAYGROUND_STAGE", "streamlit")  # this benchmark measures the Streamlit stage
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--changes", type=int, default=8, help="cached changes per round and page")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of page, then bare app")
    ap.add_argument("--against", metavar="REV", help="also the convolution page of this git revision")
    args = ap.parse_args()
    BB.print_machine(BB.machine())
    steps, _ = BB.padding_walk(args.changes)
    bare_steps = [("bare.scale", "ArrowRight", "slider"), ("bare.scale", "ArrowLeft", "slider")] * (args.changes // 2)
    print(f"\n{'cached change':<30}{'n':>4}{'p50 ms':>9}{'React ms':>10}{'passes':>9}{'ms/pass':>10}{'elements':>10}")
    latencies: dict[str, list[float]] = {}
    with contextlib.ExitStack() as stack, B.chromium() as chrome:
        def app(path: Path | None = None) -> str:
            cache_dir = stack.enter_context(tempfile.TemporaryDirectory())
            return stack.enter_context(B.serve_app(app=path, env={"PLAYGROUND_ENGINE_CACHE": cache_dir}))

        context = B.new_context(chrome, viewport=BB.VIEWPORT, reduced_motion="reduce")
        pages = {"convolution padding (hit)": BB.open_page(context, app(), "convolution")}
        if args.against:
            other = stack.enter_context(checkout(args.against))
            pages[f"  the same at {args.against}"[:30]] = BB.open_page(context, app(other / "app.py"), "convolution")
        bare = BB.open_page(context, stack.enter_context(B.serve_app(app=BB.ROOT / "bench" / "bare_app.py")), "")
        for page in pages.values():
            BB.walk(page, steps, BB.Series("builds"))  # every configuration built once: what follows are cache hits
        for _ in range(args.rounds):
            for name, page in [*pages.items(), ("bare app slider", bare)]:
                page.bring_to_front()
                for walk in ((BB.reverse(steps), steps) if page is not bare else (bare_steps,)):
                    s = BB.Series("")
                    print(row(name, s, traced(chrome, page, walk, s), page.evaluate(ELEMENTS_JS)))
                    latencies.setdefault(name, []).extend(s.latency)
        context.close()
    print("\nReact ms: the browser's main thread in React per change; passes: React tasks over "
          f"{PASS_MS:g} ms per change; ms/pass: their mean; elements: Streamlit elements on the page.")
    p50 = {name: statistics.median(v) for name, v in latencies.items()}
    first = next(iter(p50))
    print("\np50 over all rounds: " + " · ".join(f"{name.strip()} {v:.0f} ms" for name, v in p50.items()))
    for name, v in p50.items():
        if name != first:
            print(f"ratio {first.strip()} / {name.strip()}: {p50[first] / v:.2f}")


if __name__ == "__main__":
    main()
