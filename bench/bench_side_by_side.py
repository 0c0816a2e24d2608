"""This tree's stage against another checkout's (the code before a change), press by press in one Chromium, so that
both see the same load: a shared machine makes whole-bench runs back to back incomparable.

Each step of bench_browser's padding walk (the convolution on the spec's 1×1×6×9 input, no speculative builds) is
pressed on the other tree's stage, then on this tree's, then on the slider app (bench/slider_app.py); then the walk
back over them (the tab's cache); then the sweep (speculative builds on, 0.3 s between steps), alternating the same
way. A press is timed as bench_browser times it (its walk: the answer drawn and a frame painted; the next press after
the answer's follow-up). Prints the percentiles and where a press's time goes by each page's clock.

    python bench/bench_side_by_side.py OTHER_CHECKOUT [--changes 24]

OTHER_CHECKOUT: a checkout of the other code (e.g. `git worktree add ../before COMMIT`) with a .venv beside it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_browser as BB  # noqa: E402
from common import Series, machine, padding_walk, pct, print_machine, reverse, until_painted  # noqa: E402

from playground.chromium import browser as B  # noqa: E402
from playground.serve.launch import tuned_env  # noqa: E402


@contextlib.contextmanager
def serve(tree: Path, app: str = "app.py", env: dict | None = None, timeout: float = 120.0):
    """`streamlit run` of `tree`'s app in `tree` with its own .venv (B.serve_app serves this tree only)."""
    port = B.free_port()
    cmd = [str(tree / ".venv/bin/python"), "-m", "streamlit", "run", str(tree / app), "--server.headless", "true"]
    cmd += ["--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"]
    cmd += ["--server.fileWatcherType", "none"]
    proc = subprocess.Popen(
        cmd,
        cwd=tree,
        env=tuned_env({**os.environ, **(env or {})}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the app of {tree} did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("other", type=Path, help="a checkout of the other code, with its .venv")
    ap.add_argument("--changes", type=int, default=24)
    args = ap.parse_args()
    print_machine(machine())
    trees = {"before": args.other.resolve(), "after": ROOT}
    steps, _ = padding_walk(args.changes)
    times: dict[str, list[float]] = {}
    parts = {tag: {} for tag in trees}

    def press(tag, page, step, label):
        s = Series(label)
        page.bring_to_front()
        BB.stage_walk(page, [step], s, None, parts[tag].setdefault(label, {}) if label != "sweep" else None)
        times.setdefault(f"{tag}: {label}", []).extend(s.latency)

    with contextlib.ExitStack() as stack:
        cache = lambda: stack.enter_context(tempfile.TemporaryDirectory())  # noqa: E731
        urls = {t: stack.enter_context(serve(p, env={"PLAYGROUND_ENGINE_CACHE": cache(), "PLAYGROUND_PREFETCH": "0"}))
                for t, p in trees.items()}  # fmt: skip
        slider_url = stack.enter_context(serve(ROOT, app="bench/slider_app.py"))
        chrome = stack.enter_context(B.chromium())
        context = B.new_context(chrome, viewport=BB.VIEWPORT, reduced_motion="reduce")
        for url in urls.values():
            BB.open_stage(context, url, "convolution").close()  # each server's first build and imports
        pages = {t: BB.open_stage(context, url, "convolution") for t, url in urls.items()}
        for page in pages.values():
            page.evaluate(BB.PRESS_CLOCK_JS)
        slider = context.new_page()
        slider.goto(slider_url)
        slider.wait_for_selector("text=value is 0")
        B.wait_until_idle(slider, BB.TIMEOUT_MS)
        slider.locator(B.key_selector("slider.value")).get_by_role("slider").focus()
        for i, step in enumerate(steps):
            for tag, page in pages.items():
                press(tag, page, step, "new configuration")
            slider.bring_to_front()
            start = time.perf_counter()
            slider.keyboard.press("ArrowRight")
            until_painted(slider, "(i) => document.body.textContent.includes('value is ' + i)", i + 1)
            times.setdefault("slider app: one slider, one text", []).append((time.perf_counter() - start) * 1e3)
        for step in reverse(steps):
            for tag, page in pages.items():
                press(tag, page, step, "revisited configuration")
        context.close()
        urls = {t: stack.enter_context(serve(p, env={"PLAYGROUND_ENGINE_CACHE": cache()})) for t, p in trees.items()}
        context = B.new_context(chrome, viewport=BB.VIEWPORT, reduced_motion="reduce")
        query = "convolution?convolution.kernel_size_nd.h=2&convolution.kernel_size_nd.w=2"
        pages = {t: BB.open_stage(context, url, query) for t, url in urls.items()}
        for step in steps:
            for tag, page in pages.items():
                time.sleep(0.3)
                press(tag, page, step, "sweep")
        context.close()
    print(f"\n{'series':<42}{'n':>4}{'p25 ms':>9}{'p50 ms':>9}{'p75 ms':>9}{'p95 ms':>9}")
    for name, v in times.items():
        print(f"{name:<42}{len(v):>4}" + "".join(f"{pct(v, q):>9.0f}" for q in (25, 50, 75, 95)))
    print("\nwhere a press's time goes, p50 ms by the page's clock (a press drawn from the tab's cache asks nothing)")
    columns = [(tag, label) for label in ("new configuration", "revisited configuration") for tag in trees]
    print(f"  {'':<58}" + "".join(f"{tag + ' ' + label.split()[0]:>18}" for tag, label in columns))
    for k, what in BB.PARTS.items():
        cells = [parts[tag][label].get(k, []) for tag, label in columns]
        print(f"  {what:<58}" + "".join(f"{pct(v, 50):>18.1f}" if v else f"{'-':>18}" for v in cells))
    print("load average at the end: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
