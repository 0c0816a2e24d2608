"""Serve the app and drive the system Chromium with Playwright (tests, snapshots, benchmarks).

Never downloads a browser: it launches the distribution's Chromium (`apt-get install chromium`),
headless, with background networking off.

Waiting: pages from `new_context` carry a run tracker (RUN_TRACKER_JS) that reads the app's own
websocket messages, so `wait_until_idle` / `rerun` know when a script run was requested, started
and finished, not only what the DOM shows. Locating: `key_selector(widget_key)` is the CSS class
Streamlit puts on a widget's element container.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from ..serve.launch import tuned_env
from ..ui.keys import key_selector  # noqa: F401  (the helpers here and their users find widgets by it)

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--hide-scrollbars",
    "--font-render-hinting=none",
]
# Streamlit shows this widget while a script run is in progress.
RUNNING = '[data-testid="stStatusWidget"]'


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AppURL(str):
    """The served app's base URL; `pid` is the server's process (benchmarks read its memory)."""

    pid: int


@contextlib.contextmanager
def serve_app(
    port: int | None = None,
    env: dict | None = None,
    timeout: float = 60.0,
    app: Path | None = None,
    address: str = "127.0.0.1",
):
    """Start `streamlit run app.py` (the pages and the stage's route; or another script) on a free loopback port, as
    scripts/start.sh does (the allocator set up for builds: serve.launch); yield its base URL (an AppURL); stop it."""
    port = port or free_port()  # free on 127.0.0.1 is free on the rest of the loopback range too
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app or ROOT / "app.py"),
        "--server.headless",
        "true",
        "--server.address",
        address,
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=tuned_env({**os.environ, **(env or {})}),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = AppURL(f"http://{address}:{port}")
    url.pid = proc.pid
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError("the app exited: " + proc.stdout.read().decode(errors="replace")[-2000:])
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"the app did not answer on {url} within {timeout:.0f} s")
            time.sleep(0.2)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


_playwright = {"users": 0}


@contextlib.contextmanager
def _shared_playwright():
    """This process's one Playwright, started by its first user and stopped after its last: a second sync
    Playwright does not start beside a running one (a test module's own Chromium beside the test run's)."""
    from playwright.sync_api import sync_playwright

    if not _playwright["users"]:
        _playwright["manager"] = sync_playwright()
        _playwright["pw"] = _playwright["manager"].__enter__()
    _playwright["users"] += 1
    try:
        yield _playwright["pw"]
    finally:
        _playwright["users"] -= 1
        if not _playwright["users"]:
            _playwright.pop("manager").__exit__(None, None, None)


@contextlib.contextmanager
def chromium(playwright=None):
    """A headless system Chromium; yields a Playwright Browser."""
    path = chromium_path()
    if path is None:
        raise RuntimeError("no system Chromium found: apt-get install chromium")
    with contextlib.ExitStack() as stack:
        pw = playwright or stack.enter_context(_shared_playwright())
        browser = pw.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)
        stack.callback(browser.close)
        yield browser


def type_number(page, key: str, value, timeout_ms: float = 60_000) -> None:
    """Type into the number input with widget key `key`, commit it (Enter), and wait for the run it asks for."""
    box = page.locator(key_selector(key)).locator("input")
    with rerun(page, timeout_ms):
        box.fill(str(value))
        box.press("Enter")


def new_context(browser, **kwargs):
    """`browser.new_context(**kwargs)` with the run tracker installed in every page it opens, so that
    wait_until_idle knows exactly when a script run was requested, started and finished."""
    context = browser.new_context(**kwargs)
    context.add_init_script(RUN_TRACKER_JS)
    return context


def mark(page) -> int | None:
    """How many runs this page has asked the server for so far (None without the run tracker);
    pass it to wait_until_idle(after=...) to wait for the run the next action asks for, however
    short, and not be fooled by a run the server started for another reason."""
    return page.evaluate("() => window.__playgroundRuns ? window.__playgroundRuns.requested : null")


@contextlib.contextmanager
def rerun(page, timeout_ms: float = 60_000):
    """`with rerun(page): page.keyboard.press("End")`: on exit, wait until the run the action
    triggered has finished and been drawn (needs the run tracker: pages from new_context)."""
    before = mark(page)
    yield
    wait_until_idle(page, timeout_ms, after=before)


def wait_until_idle(page, timeout_ms: float = 60_000, settle_ms: int | None = None, after: int | None = None) -> None:
    """Wait until the app has finished its run: content is drawn, and for `settle_ms` on end there is
    no run in progress, no placeholder skeleton and no stale element.

    "Run in progress" is read from the app's own messages where the page has the run tracker
    (new_context): a rerun the browser requested and the server has not started yet, or a run
    started and not finished; else from Streamlit's status widget, which only shows after 0.5 s
    of running — hence the longer default settle time without the tracker (400 ms, else 100 ms).
    after: a mark() taken before an action; also wait until the action has asked for a run and
    that run has finished (needs the tracker)."""
    # Any element drawn and visible: not just the first, which may be one that takes no room (the viewport
    # probe, a style block) and so never becomes "visible".
    page.wait_for_selector('[data-testid="stMain"] [data-testid="stElementContainer"]:visible', timeout=timeout_ms)
    tracked = page.evaluate("() => Boolean(window.__playgroundRuns && !window.__playgroundRuns.unreadable)")
    if settle_ms is None:
        settle_ms = 100 if tracked else 400
    # Polled in the page (one call, not a round trip to it every 25 ms: on two cores those trips cost a test
    # suite minutes of CPU); the token starts this wait's quiet time afresh.
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    token = next(_waits)
    try:
        page.wait_for_function(
            IDLE_JS, arg=[after, settle_ms, token], polling=25 if tracked else 50, timeout=timeout_ms
        )
    except PlaywrightTimeout:
        state = page.evaluate(
            "() => window.__playgroundRuns ? JSON.stringify(window.__playgroundRuns) : 'no run tracker'"
        )
        raise TimeoutError(f"the app was still running after {timeout_ms / 1e3:.0f} s ({state})") from None


# Wraps window.WebSocket before Streamlit opens its connection and reads the top-level field
# numbers of the protobuf messages: BackMsg.rerun_script (11) out, ForwardMsg.new_session (4,
# a run started) and ForwardMsg.script_finished (6) in. No dependency on Streamlit's frontend code.
RUN_TRACKER_JS = r"""
(() => {
  if (window.__playgroundRuns) return;
  const R = window.__playgroundRuns = {requested: 0, started: 0, finished: 0,
                                       lastRequest: -1, lastStart: -1, lastFinish: -1};
  const fields = (data) => {
    let b;
    if (data instanceof ArrayBuffer) b = new Uint8Array(data);
    else if (ArrayBuffer.isView(data)) b = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    else return [];
    const out = [];
    let i = 0;
    const varint = () => { let v = 0, m = 1, c; do { c = b[i++]; v += (c & 0x7f) * m; m *= 128; } while (c & 0x80 && i < b.length); return v; };
    while (i < b.length) {
      const tag = varint(), wt = tag % 8;
      out.push(Math.floor(tag / 8));
      if (wt === 0) varint(); else if (wt === 1) i += 8; else if (wt === 5) i += 4;
      else if (wt === 2) { const n = varint(); i += n; } else break;  // not i += varint(): i is read first
    }
    return out;
  };
  const Native = window.WebSocket;
  class Tracked extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (ev) => {
        if (!(ev.data instanceof ArrayBuffer || ArrayBuffer.isView(ev.data))) R.unreadable = true;  // a Blob
        const f = fields(ev.data);
        // A run that starts while another is unfinished has interrupted it: count that one as over.
        if (f.includes(4)) { R.finished = Math.max(R.finished, R.started); R.started++; R.lastStart = performance.now(); }
        if (f.includes(6)) { R.finished = Math.min(R.finished + 1, R.started); R.lastFinish = performance.now(); }
      });
    }
    send(data) {
      if (fields(data).includes(11)) { R.requested++; R.lastRequest = performance.now(); }
      return super.send(data);
    }
  }
  window.WebSocket = Tracked;
  // True while the app is busy: a requested run not started, a run not finished, or (after: a
  // mark, the count of requests before an action) no run requested since the mark; or Streamlit
  // still drawing (status widget, skeletons, stale elements). For in-page polling:
  // page.wait_for_function("() => !window.__playgroundBusy(null)").
  window.__playgroundBusy = (after) => {
    if (R.unreadable) return DOM_BUSY();  // messages not in a form read here: the DOM alone
    if (R.lastRequest > R.lastStart || R.started > R.finished
        || (after !== null && after !== undefined && R.requested <= after)) return true;
    return DOM_BUSY();
  };
  const DOM_BUSY = __DOM_BUSY__;
})();
"""

_DOM_BUSY_JS = (
    """() => {
  const running = document.querySelector('%s');
  return Boolean((running && running.offsetParent !== null)
    || document.querySelector('[data-testid="stSkeleton"]')
    || document.querySelector('[data-stale="true"]'));
}"""
    % RUNNING
)
RUN_TRACKER_JS = RUN_TRACKER_JS.replace("__DOM_BUSY__", _DOM_BUSY_JS)
# True while the app is busy; argument: a mark() to wait past, or null. Without the run tracker:
# the DOM alone (status widget, skeletons, stale elements).
BUSY_JS = f"(after) => window.__playgroundBusy ? window.__playgroundBusy(after) : ({_DOM_BUSY_JS})()"
# True once the app has not been busy (BUSY_JS) for `settle` ms on end, counted from this wait's (`token`'s) first
# quiet poll.
IDLE_JS = f"""([after, settle, token]) => {{
  let q = window.__playgroundQuiet;
  if (!q || q.token !== token) q = window.__playgroundQuiet = {{token, since: null}};
  if (({BUSY_JS})(after)) {{ q.since = null; return false; }}
  if (q.since === null) q.since = performance.now();
  return performance.now() - q.since >= settle;
}}"""
_waits = itertools.count()
