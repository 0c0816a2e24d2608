"""A room of two replicas behind HAProxy (`playground.serve.room`): a browser stays on its replica (its page, its
websocket and its stage's route), an engine one replica built is a cache hit on the other, and when a browser's
replica is killed its page comes back on the other within 5 s, on the same configuration, with no error shown."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from playground.chromium import browser as B
from playground.serve import room as R

pytestmark = pytest.mark.browser
STAGE = ".pg-stage"

try:
    R.haproxy_binary()
    HAPROXY = True
except R.RoomError:
    HAPROXY = False


@pytest.fixture(scope="module")
def room(tmp_path_factory):
    if not HAPROXY:  # scripts/test.sh installs it where it can (as root with apt)
        pytest.skip(R.INSTALL)
    cache = tmp_path_factory.mktemp("shared_cache")
    with R.started(2, B.free_port(), cache_dir=str(cache), env={}) as r:
        yield r


def _page_on(browser, room, replica: str | None, path: str):
    ctx = B.new_context(browser, viewport={"width": 1280, "height": 720})
    if replica is not None:  # as if the proxy had sent this browser there before
        ctx.add_cookies([{"name": R.COOKIE, "value": replica, "url": room.url}])
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{room.url}/{path}")
    page.wait_for_selector(f"{STAGE}[data-drawn]")
    return ctx, page


def _engine(page) -> str:
    return page.get_attribute(f"{STAGE} .pg-badge[data-engine]", "data-engine")


def _step(page, key="convolution.num_output_maps"):
    """A key press on a slider: answered by the stage's route (the seat lives on the replica that drew the page)."""
    before = int(page.get_attribute(STAGE, "data-drawn"))
    page.focus(f'{STAGE} input[type="range"][data-param="{key}"]')
    page.keyboard.press("ArrowRight")
    page.wait_for_function("n => +document.querySelector('.pg-stage').dataset.drawn > n", arg=before)


def test_affinity_shared_cache_and_a_lost_replica(room, browser):
    path = "convolution?convolution.num_output_maps=5&convolution.kernel_size_nd.h=2"
    ctx0, page0 = _page_on(browser, room, "r0", path)
    page0.wait_for_function(
        "() => document.querySelector('.pg-stage .pg-badge[data-engine]')?.dataset.engine === 'built'"
    )
    # the other replica never built it: its own memory is empty, so the engine comes from the shared directory
    ctx1, page1 = _page_on(browser, room, "r1", path)
    page1.wait_for_function(
        "() => ['cached'].includes(document.querySelector('.pg-stage .pg-badge[data-engine]')?.dataset.engine)"
    )

    # a browser the proxy places itself: its cookie names a replica, and its stage's requests reach that one
    ctx2, page2 = _page_on(browser, room, None, "convolution")
    assert {c["name"]: c["value"] for c in ctx2.cookies()}.get(R.COOKIE) in ("r0", "r1")
    for _ in range(3):
        _step(page2)
    assert not page2.locator(f"{STAGE} .pg-problem:not([hidden])").count()
    ctx1.close(), ctx2.close()

    # r0 dies under page0: the page comes back on r1, on the configuration its URL holds
    _step(page0)
    query = json.loads(page0.get_attribute(STAGE, "data-query"))
    page0.evaluate("() => { window.__before = document.querySelector('.pg-stage').dataset.mountedAt; }")
    victim = room.replicas[0]
    os.killpg(victim.proc.pid, signal.SIGKILL)
    lost = time.monotonic()
    page0.wait_for_function(
        "q => { const s = document.querySelector('.pg-stage[data-drawn]');"
        " if (!s || s.dataset.mountedAt === window.__before) return false;"
        " const now = JSON.parse(s.dataset.query);"
        " return Object.entries(q).every(([k, v]) => now[k] === v); }",
        arg=query,
        timeout=15_000,
    )
    back = time.monotonic() - lost
    _step(page0)  # the new replica holds a seat for it: a change is answered
    assert back <= 5.0, f"the page took {back:.1f} s to come back"
    assert not page0.locator('[data-testid="stException"], [data-testid="stAlertContentError"]').count()
    assert not page0.locator(f"{STAGE} .pg-problem:not([hidden])").count()
    assert {c["name"]: c["value"] for c in ctx0.cookies()}.get(R.COOKIE) == "r1"
    ctx0.close()


def test_the_command_starts_a_room_and_ctrl_c_stops_all_of_it(tmp_path):
    """`python -m playground room` as the README runs it: it says where the room is, the proxy answers there, and
    SIGINT (Ctrl-C) stops the proxy and every replica."""
    import subprocess
    import sys
    import urllib.request

    if not HAPROXY:
        pytest.skip(R.INSTALL)
    port = B.free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "playground",
            "room",
            "--replicas",
            "1",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--cache",
            str(tmp_path / "cache"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=R.ROOT,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("room: 1 replicas") and f"127.0.0.1:{port}" in line, line
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=10) as r:
            assert r.status == 200
        workdir = line.split("logs in ")[1].split(". ")[0]  # the proxy's configuration lives there
        replica = line.split("(ports ")[1].split(")")[0]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        for pattern in (workdir, f"--server.port {replica} "):
            left = subprocess.run(["pgrep", "-f", "--", pattern], capture_output=True, text=True).stdout
            assert not left.strip(), f"still running ({pattern}): {left}"
    finally:
        if proc.poll() is None:
            proc.kill()
