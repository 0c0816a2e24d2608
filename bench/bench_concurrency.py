"""Many simultaneous sessions, each changing a parameter every second: latency and errors.

Every session is a real page in one headless system Chromium (one browser context each, so one
Streamlit session each), driven concurrently with Playwright's async API. Sessions are spread
over three pages: convolution (padding_nd w, arrow keys on its slider), scale (shift,
arrow keys in its number input) and leaky_relu (alpha, arrow keys on the slider thumb); each
steps its parameter 5 up, 5 down, over and over, so the first pass builds engines and the later
ones (and the other sessions on the same page) hit the engine cache.

A session acts as a person would: every second (its own phase) it presses a key, then waits until
the change is drawn — new output caption, a new output heatmap, the app idle (playground.chromium.browser's run
tracker) — before the next press; a change that takes longer than the period delays the next one.
Latency: press -> drawn. Errors: exception boxes, error alerts (none is expected for these
changes), timeouts (not drawn within --timeout), uncaught page errors and websocket closes.

--clients websocket replaces the browsers by websocket clients that speak Streamlit's protocol
(BackMsg rerun_script with the widget's new value, the page's URL and, as the browser does, the id of the
fragment that drew the widget, so only that fragment runs, and then the stage its callback asks for;
latency: sent -> the ForwardMsg script_finished of that last run),
so the server is measured without 20 renderers competing with it for the CPU; errors there:
exception elements, error alerts, runs not finished successfully, timeouts, closed connections.

    python bench/bench_concurrency.py [--clients browser|websocket] [--sessions 20] [--duration 60]
                                      [--period 1] [--timeout 30]
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_browser import BEFORE_JS, DRAWN_JS, machine, pct, print_machine  # noqa: E402
from bench_memory import rss_mb  # noqa: E402

from playground.chromium import browser as B  # noqa: E402
from playground.ui import heatmap  # noqa: E402

VIEWPORT = {"width": 1280, "height": 900}
# page, widget key, role of the focused element (None: the widget's <input>), key up, key down, step
WORKLOADS = [("convolution", "convolution.padding_nd.w", "slider", "ArrowRight", "ArrowLeft", 1),
             ("scale", "scale.shift.0", None, "ArrowUp", "ArrowDown", 0.1),
             ("leaky_relu", "leaky_relu.alpha", "slider", "ArrowRight", "ArrowLeft", 0.01)]
LOADED_JS = """() => window.__playgroundRuns && window.__playgroundRuns.finished > 0
  && !window.__playgroundBusy(null) && Boolean((%s)())""" % B.OUTPUT_PLOT_JS  # the output heatmap is drawn
PROBLEMS_JS = """() => ({
  exceptions: document.querySelectorAll('[data-testid="stException"]').length,
  errors: Array.from(document.querySelectorAll('[data-testid="stAlertContentError"]')).map(e => e.innerText.slice(0, 200)),
})"""


FIRST_PASS = 10  # 5 up, 5 down: after these a session only revisits configurations (cache hits)


@dataclass
class Session:
    index: int
    page_name: str
    latency: list[float] = field(default_factory=list)  # ms
    errors: collections.Counter = field(default_factory=collections.Counter)
    examples: list[str] = field(default_factory=list)
    over: bool = False  # measuring ended: closes after this are ours
    late: int = 0  # presses that came later than their 1-second slot (the previous change was slow)

    def error(self, kind: str, detail: str = "") -> None:
        self.errors[kind] += 1
        if len(self.examples) < 3:
            self.examples.append(f"{kind}: {detail}"[:300])


async def open_session(browser, base: str, i: int, limit: asyncio.Semaphore, timeout_ms: float):
    name, key, role, up, down, _ = WORKLOADS[i % len(WORKLOADS)]
    s = Session(i, name)
    context = await browser.new_context(viewport=VIEWPORT, reduced_motion="reduce")
    await context.add_init_script(B.RUN_TRACKER_JS)
    page = await context.new_page()
    page.on("pageerror", lambda exc: s.error("page error", str(exc)))
    page.on("websocket", lambda ws: ws.on("close", lambda _: None if s.over else s.error("websocket closed", ws.url)))
    async with limit:  # pages load a few at a time; the measurement starts when all are ready
        await page.goto(f"{base}/{name}", timeout=timeout_ms)
        await page.wait_for_function(LOADED_JS, polling=100, timeout=max(timeout_ms, 120_000))
    w = page.locator(B.key_selector(key))
    target = w.get_by_role(role) if role else w.locator("input")
    await target.focus()
    return s, context, page, (up, down)


def pace(start: float, duration: float, period: float, offset: float, s: Session):
    """Async iterator of slots, one per `period` from `start + offset`, for `duration`; a slot that
    passed while the previous change was still being drawn is taken at once and counted late, the
    slots missed meanwhile are dropped (a person waits to see the result)."""
    async def gen():
        k = 0
        while True:
            slot = start + offset + k * period
            now = time.perf_counter()
            if slot - start >= duration:
                return
            if now < slot:
                await asyncio.sleep(slot - now)
            elif now - slot > period:
                s.late += 1
                k = int((now - start - offset) / period)
            yield k
            k += 1
    return gen()


async def drive(s: Session, page, keys, start: float, duration: float, period: float, offset: float,
                timeout_ms: float) -> None:
    up, down = keys
    n = 0  # changes made: 5 up, 5 down, ... (by change, not by slot, so the value stays in range)
    async for _ in pace(start, duration, period, offset, s):
        key = up if (n // 5) % 2 == 0 else down
        n += 1
        try:
            after = await page.evaluate(BEFORE_JS)
            t0 = time.perf_counter()
            await page.keyboard.press(key)
            await page.wait_for_function(DRAWN_JS, arg=[after, True], polling="raf", timeout=timeout_ms)
            s.latency.append((time.perf_counter() - t0) * 1e3)
        except Exception as exc:  # Playwright's TimeoutError, or the page gone
            s.error("timeout" if "Timeout" in type(exc).__name__ else type(exc).__name__, str(exc).splitlines()[0])
        try:
            p = await page.evaluate(PROBLEMS_JS)
        except Exception as exc:
            s.error(type(exc).__name__, str(exc).splitlines()[0])
            return
        if p["exceptions"]:
            s.error("exception box", f"{p['exceptions']} on {s.page_name}")
        for e in p["errors"]:
            s.error("error message", e)


# -- websocket clients ------------------------------------------------------------------------
class WsClient:
    """One Streamlit session over the websocket, without a browser."""

    def __init__(self, base: str, page_name: str, query: str = ""):
        self.url = base.replace("http://", "ws://") + "/_stcore/stream"
        self.page_url = f"{base}/{page_name}"  # as a browser reports it (the app reruns controls by it: ui.widgets)
        self.page_name, self.page_hash, self.widgets = page_name, "", {}  # widgets: id -> (kind, proto, fragment)
        self.query = query  # the page's link (?…): its controls are set from it

    async def connect(self):
        from websockets.asyncio.client import connect

        self.ws = await connect(self.url, subprotocols=["streamlit"], max_size=None)

    async def rerun(self, states=(), timeout: float = 30) -> tuple[list[str], str | None]:
        """Run the page with these widget states; return the problems its output shows and the
        output's stats caption ("shape … · min … · max …")."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = BackMsg()
        cs = msg.rerun_script
        cs.page_name, cs.page_script_hash, cs.query_string = self.page_name, self.page_hash, self.query
        cs.context_info.url = self.page_url
        cs.widget_states.widgets.extend(states)
        cs.fragment_id = next((self.widgets[w.id][2] for w in states if w.id in self.widgets), "")
        await self.ws.send(msg.SerializeToString())
        problems, captions = [], []
        async with asyncio.timeout(timeout):
            while True:
                f = ForwardMsg.FromString(await self.ws.recv())
                kind = f.WhichOneof("type")
                if kind == "navigation":
                    self.page_hash = f.navigation.page_script_hash
                elif kind == "delta" and f.delta.WhichOneof("type") == "new_element":
                    el = f.delta.new_element
                    t = el.WhichOneof("type")
                    if t in ("number_input", "slider"):
                        self.widgets[getattr(el, t).id] = (t, getattr(el, t), f.delta.fragment_id)
                    elif t == "exception":
                        problems.append("exception box: " + el.exception.message[:200])
                    elif t == "bidi_component" and el.bidi_component.component_name == heatmap.NAME:
                        caption = json.loads(el.bidi_component.json).get("caption", "")
                        if caption.startswith("shape ("):  # the stats caption each heatmap writes under it
                            captions.append(caption)
                    elif t == "alert" and el.alert.format == 1:  # Alert.ERROR
                        problems.append("error message: " + el.alert.body[:200])
                elif kind == "script_finished":
                    if f.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                        continue  # a control's callback replaced this run by the stage's (ui.widgets.Changed)
                    if f.script_finished not in (ForwardMsg.FINISHED_SUCCESSFULLY,
                                                 ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY):
                        problems.append(f"run ended with status {f.script_finished}")
                    return problems, captions[-1] if len(captions) > 1 else None  # the output: last

    def _widget(self, key: str):
        """(widget id, kind, proto) of the widget whose user key is `key`."""
        wid = next(i for i in self.widgets if i.endswith("-" + key))
        return (wid, *self.widgets[wid][:2])

    def state(self, key: str, value):
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        wid, kind, w = self._widget(key)
        ws = WidgetState(id=wid)
        if kind == "slider":
            ws.double_array_value.data.append(float(value))
        elif w.data_type == 0:  # NumberInput.INT
            ws.int_value = int(value)
        else:
            ws.double_value = float(value)
        return ws

    def initial(self, key: str) -> float:
        _, kind, w = self._widget(key)
        if kind == "number_input" and w.HasField("value"):
            return w.value
        return w.default[0] if kind == "slider" else w.default


async def open_ws_session(base: str, i: int, limit: asyncio.Semaphore, timeout: float):
    name, key, *_ = WORKLOADS[i % len(WORKLOADS)]
    s, client = Session(i, name), WsClient(base, name)
    async with limit:
        await client.connect()
        problems, client.caption = await client.rerun(timeout=max(timeout, 120))
        for p in problems:
            s.error(p.split(":")[0], p)
    return s, client


async def drive_ws(s: Session, client: WsClient, start: float, duration: float, period: float, offset: float,
                   timeout: float) -> None:
    _, key, _, _, _, step = WORKLOADS[s.index % len(WORKLOADS)]
    value = client.initial(key)
    n = 0
    async for _ in pace(start, duration, period, offset, s):
        value = round(value + (step if (n // 5) % 2 == 0 else -step), 6)
        n += 1
        t0 = time.perf_counter()
        try:
            problems, caption = await client.rerun([client.state(key, value)], timeout)
            s.latency.append((time.perf_counter() - t0) * 1e3)
            if caption is None or caption == client.caption:
                problems.append(f"output unchanged: {key}={value} still shows {caption}")
            client.caption = caption
        except TimeoutError:
            s.error("timeout", f"{s.page_name} {key}={value}")
            return  # the connection still carries the late run's messages
        except Exception as exc:  # connection closed
            s.error(type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")
            return
        for p in problems:
            s.error(p.split(":")[0], p)


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


@contextlib.asynccontextmanager
async def server_usage(pid: int):
    """The server's RSS while the sessions run (at the start, its maximum sampled each second, at the end)
    and the CPU time it used."""
    seen = {"start": rss_mb(pid), "max": rss_mb(pid), "cpu0": cpu_s(pid)}

    async def sample():
        while True:
            await asyncio.sleep(1)
            seen["max"] = max(seen["max"], rss_mb(pid))

    task = asyncio.create_task(sample())
    try:
        yield seen
    finally:
        task.cancel()
        seen["end"], seen["cpu"] = rss_mb(pid), cpu_s(pid) - seen["cpu0"]


async def run_ws(args) -> tuple[list[Session], float]:
    with tempfile.TemporaryDirectory() as cache_dir, B.serve_app(env={"PLAYGROUND_ENGINE_CACHE": cache_dir}) as base:
        t = time.perf_counter()
        limit = asyncio.Semaphore(args.open_at_once)
        opened = await asyncio.gather(*(open_ws_session(base, i, limit, args.timeout) for i in range(args.sessions)))
        print(f"{args.sessions} websocket sessions open and run in {time.perf_counter() - t:.1f} s; "
              f"driving for {args.duration:.0f} s")
        start = time.perf_counter() + 0.5
        async with server_usage(base.pid) as use:
            await asyncio.gather(*(drive_ws(s, c, start, args.duration, args.period,
                                            args.period * s.index / args.sessions, args.timeout) for s, c in opened))
        wall = time.perf_counter() - start
        print_usage(use, [s for s, _ in opened])
        for _, c in opened:
            await c.ws.close()
    return [s for s, _ in opened], wall


# -- browsers ---------------------------------------------------------------------------------
async def run(args) -> tuple[list[Session], float]:
    from playwright.async_api import async_playwright

    path = B.chromium_path()
    if path is None:
        sys.exit("no system Chromium found: apt-get install chromium")
    with tempfile.TemporaryDirectory() as cache_dir, B.serve_app(env={"PLAYGROUND_ENGINE_CACHE": cache_dir}) as base:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=path, headless=True, args=B.CHROMIUM_ARGS)
            t = time.perf_counter()
            limit = asyncio.Semaphore(args.open_at_once)
            opened = await asyncio.gather(*(open_session(browser, base, i, limit, args.timeout * 1e3)
                                            for i in range(args.sessions)))
            setup = time.perf_counter() - t
            print(f"{args.sessions} sessions open and drawn in {setup:.1f} s; driving for {args.duration:.0f} s")
            start = time.perf_counter() + 0.5
            async with server_usage(base.pid) as use:
                await asyncio.gather(*(drive(s, page, keys, start, args.duration, args.period,
                                             args.period * s.index / args.sessions, args.timeout * 1e3)
                                       for s, _, page, keys in opened))
            wall = time.perf_counter() - start
            print_usage(use, [s for s, *_ in opened])
            for s, context, _, _ in opened:
                s.over = True
                await context.close()
            await browser.close()
    return [s for s, *_ in opened], wall


def print_usage(use: dict, sessions: list[Session]) -> None:
    changes = sum(len(s.latency) for s in sessions)
    print(f"server RSS: {use['start']:.0f} MB when driving began, max {use['max']:.0f} MB, {use['end']:.0f} MB at the "
          f"end; server CPU {use['cpu']:.1f} s for {changes} changes = {1e3 * use['cpu'] / max(changes, 1):.0f} ms each")


def main() -> None:
    os.environ.setdefault("PLAYGROUND_STAGE", "streamlit")  # this benchmark measures the Streamlit stage
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", choices=("browser", "websocket"), default="browser",
                    help="pages in one headless Chromium (default), or websocket clients without a browser")
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--duration", type=float, default=60, help="seconds of changes (default 60)")
    ap.add_argument("--period", type=float, default=1.0, help="seconds between one session's changes")
    ap.add_argument("--timeout", type=float, default=30, help="a change not drawn within this many seconds is an error")
    ap.add_argument("--open-at-once", type=int, default=4, help="pages loading at the same time during setup")
    args = ap.parse_args()
    print_machine(machine())
    sessions, wall = asyncio.run(run(args) if args.clients == "browser" else run_ws(args))

    all_lat = [v for s in sessions for v in s.latency]
    errors = sum((s.errors for s in sessions), collections.Counter())
    late = sum(s.late for s in sessions)
    asked = args.sessions * int(args.duration / args.period)
    what, done = (("press -> drawn", "drawn") if args.clients == "browser"
                  else ("rerun sent -> script_finished received", "run"))
    print(f"\n{args.clients} clients: {args.sessions} sessions × one change per {args.period:g} s for "
          f"{args.duration:.0f} s (wall {wall:.1f} s): {len(all_lat)} changes {done} in {asked} one-second "
          f"slots; {late} changes came late (the session's previous change still in progress)")
    print(f"throughput: {len(all_lat) / wall:.1f} changes {done} per second, all sessions together")
    print(f"latency {what} (ms): p50 {pct(all_lat, 50):.0f}, p95 {pct(all_lat, 95):.0f}, "
          f"max {max(all_lat, default=float('nan')):.0f}")
    steady = [v for s in sessions for v in s.latency[FIRST_PASS:]]
    print(f"latency after each session's first {FIRST_PASS} changes (the engine cache warm, ms): "
          f"p50 {pct(steady, 50):.0f}, p95 {pct(steady, 95):.0f}")
    print(f"errors: {sum(errors.values())} " + (f"({', '.join(f'{k}: {v}' for k, v in errors.items())})" if errors else
                                                   "(no exception box, error message, timeout, page error or websocket close)"))
    print(f"\n{'page':<14}{'sessions':>9}{'changes':>9}{'p50 ms':>9}{'p95 ms':>9}{'errors':>8}")
    for name, *_ in WORKLOADS:
        group = [s for s in sessions if s.page_name == name]
        lat = [v for s in group for v in s.latency]
        print(f"{name:<14}{len(group):>9}{len(lat):>9}{pct(lat, 50):>9.0f}{pct(lat, 95):>9.0f}"
              f"{sum(sum(s.errors.values()) for s in group):>8}")
    examples = [e for s in sessions for e in s.examples][:5]
    for e in examples:
        print("  e.g. " + e)
    print("load average at the end: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
