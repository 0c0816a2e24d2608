"""Serve the app and drive the system Chromium with Playwright (tests, snapshots, benchmarks).

Never downloads a browser: it launches the distribution's Chromium (`apt-get install chromium`),
headless, with background networking off.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
                 "--hide-scrollbars", "--font-render-hinting=none"]
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


@contextlib.contextmanager
def serve_app(port: int | None = None, env: dict | None = None, timeout: float = 60.0):
    """Start `streamlit run app.py` on a free loopback port; yield its base URL; stop it."""
    port = port or free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
           "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
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


@contextlib.contextmanager
def chromium(playwright=None):
    """A headless system Chromium; yields a Playwright Browser."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise RuntimeError("no system Chromium found: apt-get install chromium")
    with contextlib.ExitStack() as stack:
        pw = playwright or stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)
        stack.callback(browser.close)
        yield browser


def wait_until_idle(page, timeout_ms: float = 60_000, settle_ms: int = 400) -> None:
    """Wait until the app has finished its run: content is drawn, and for `settle_ms` on end there is
    no run in progress (Streamlit's status widget), no placeholder skeleton and no stale element."""
    page.wait_for_selector('[data-testid="stMain"] [data-testid="stElementContainer"]', timeout=timeout_ms)
    deadline = time.monotonic() + timeout_ms / 1e3
    quiet_since = None
    while time.monotonic() < deadline:
        busy = page.evaluate(_BUSY_JS)
        if busy:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif (time.monotonic() - quiet_since) * 1e3 >= settle_ms:
            return
        page.wait_for_timeout(50)
    raise TimeoutError("the app was still running after {:.0f} s".format(timeout_ms / 1e3))


_BUSY_JS = f"""() => {{
  const running = document.querySelector('{RUNNING}');
  return Boolean((running && running.offsetParent !== null)
    || document.querySelector('[data-testid="stSkeleton"]')
    || document.querySelector('[data-stale="true"]'));
}}"""
