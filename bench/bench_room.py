"""A room of K participants against N replicas behind HAProxy (`python -m playground room`): change latency,
throughput, errors and memory, for N = 1, 2, 4, 8 side by side in one run, and a replica killed mid-run.

Each participant is what a browser is to the server, without the browser (K renderers would measure the client
machine, not the room): it opens a layer page through the proxy (an HTTP GET that gets its replica's cookie, then a
Streamlit session over the websocket: the page's script runs and draws the stage, whose data names the seat's token
and route), then every --period seconds (its own phase) posts a change to the stage's route, as the stage does: a
mix of revisits and new configurations across layers (each participant walks a few parameters of its page with a
seeded random walk, so the room shares configurations and the engine cache). Latency: the POST sent -> its answer
received and parsed. An answer that is not one (an HTTP error, a dropped connection) is asked again as the stage
asks again, reopening the page where its replica is gone, for up to 10 s (net.js LOST_MS); only then is it an
error. "Back" counts participants whose page, after a replica was killed, answered its configuration again.

    python bench/bench_room.py [--clients 200] [--replicas 1,2,4,8] [--duration 60] [--period 2]
                               [--closed 64] [--kill-at 30] [--kill-replicas 8]

--closed K: also a throughput run per replica count with K participants that post their next change as soon as the
last is answered (the room's capacity; scaling is its ratio to one replica's). --kill-at S: in a run of
--kill-replicas replicas, replica 0 is killed (SIGKILL) S seconds in; the minute around it is reported apart.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_memory import rss_mb  # noqa: E402
from common import machine, pct, print_machine  # noqa: E402

from playground.chromium.browser import free_port  # noqa: E402
from playground.serve import protocol  # noqa: E402
from playground.serve import room as R  # noqa: E402

# A page and the parameters its participants walk: (URL key, values). Revisits come from the small value sets.
WALKS = {
    "convolution": [
        ("convolution.padding_nd.w", [0, 1, 2, 3]),
        ("convolution.num_output_maps", [1, 2, 3, 4]),
        ("convolution.stride_nd.h", [1, 2]),
    ],
    "pooling": [("pooling.window_size_nd.w", [1, 2, 3]), ("pooling.type", ["MAX", "AVERAGE", "MAX_AVERAGE_BLEND"])],
    "resize": [("resize.shape.w", [4, 6, 8, 10, 12]), ("resize.resize_mode", ["NEAREST", "LINEAR", "CUBIC"])],
    "activation": [
        ("activation.type", ["RELU", "SIGMOID", "TANH", "LEAKY_RELU", "ELU", "SELU"]),
        ("activation.alpha", [0.05, 0.1, 0.2, 0.3]),
    ],
    "softmax": [("softmax.axes", [1, 2, 4, 8])],
    "slice": [("slice.stride.w", [1, 2, -1]), ("slice.mode", ["STRICT_BOUNDS", "WRAP", "CLAMP", "REFLECT"])],
}
PAGES = list(WALKS)
RETRY_S = 10.0  # as the stage: a change unanswered for this long is shown as a problem


def read_reply(r) -> dict:
    """A reply as the stage reads it (net.js `readReply`): an answer's frame, JSON, or nothing it can read."""
    kind = r.headers.get("content-type", "")
    if kind.startswith(protocol.FRAME_TYPE):
        return protocol.read_frame(r.content)[0]
    return r.json() if kind.startswith("application/json") else {}


@dataclass
class Participant:
    i: int
    base: str
    page: str
    closed: bool = False
    cookie: str = ""
    token: str = ""
    route: str = ""
    query: dict = field(default_factory=dict)
    have: list = field(default_factory=list)
    latency: list = field(default_factory=list)  # (time sent, ms)
    errors: list = field(default_factory=list)
    reopened: int = 0
    lost_at: float | None = None
    ws: object = None
    notes: list = field(default_factory=list)  # what went wrong on the way to an answer (reported where it errs)
    back_after: float | None = None  # seconds from the first failed change to the next answer (a kill)
    walk: list | None = None  # (URL key, values) it steps; None: its page's WALKS
    answer_bytes: list = field(default_factory=list)  # each answer's body, as it came
    new: list = field(default_factory=list)  # per change: whether its configuration was new to this page
    seen: set = field(default_factory=set)

    async def open(self, http) -> None:
        """The page through the proxy: its cookie (affinity), then a Streamlit session whose run gives the seat."""
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
        from websockets.asyncio.client import connect

        r = await http.get(f"{self.base}/{self.page}")  # its own jar, as a browser's: the proxy's cookie kept there
        if r.status_code != 200:
            raise RuntimeError(f"{self.page}: HTTP {r.status_code}")
        got = http.cookies.get(R.COOKIE)
        self.cookie = f"{R.COOKIE}={got}" if got else ""
        ws_url = self.base.replace("http://", "ws://") + "/_stcore/stream"
        await self.close()
        # the page stays open as long as its websocket, as a browser's does (its session holds memory on the replica)
        self.ws = ws = await connect(
            ws_url,
            subprotocols=["streamlit"],
            max_size=None,
            additional_headers={"Cookie": self.cookie} if self.cookie else {},
        )
        msg = BackMsg()
        cs = msg.rerun_script
        cs.page_name, cs.query_string = self.page, "&".join(f"{k}={v}" for k, v in self.query.items())
        cs.context_info.url = f"{self.base}/{self.page}"
        await ws.send(msg.SerializeToString())
        async with asyncio.timeout(60):
            while True:
                f = ForwardMsg.FromString(await ws.recv())
                kind = f.WhichOneof("type")
                if kind == "delta" and f.delta.WhichOneof("type") == "new_element":
                    el = f.delta.new_element
                    if (
                        el.WhichOneof("type") == "bidi_component"
                        and el.bidi_component.component_name == "playground_stage"
                    ):
                        data = json.loads(el.bidi_component.json)
                        self.token, self.route = data["token"], data["route"]
                        self.query = {**data["query"], **self.query}
                elif kind == "script_finished" and f.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    break  # (a run the page itself replaced, e.g. a link's refused values dropped, is not the last)
        if not self.token:
            raise RuntimeError(f"{self.page}: the page drew no stage")

    async def close(self) -> None:
        if self.ws is not None:
            try:
                await self.ws.close()
            except Exception:  # noqa: BLE001 - its replica is gone already
                pass
            self.ws = None

    async def change(self, http, rng) -> None:
        key, values = rng.choice(self.walk or WALKS[self.page])
        self.query[key] = str(rng.choice(values))
        config = tuple(sorted(self.query.items()))
        self.new.append(config not in self.seen)  # a configuration this page has not asked for before
        self.seen.add(config)
        sent = time.monotonic()
        while True:
            try:
                r = await http.post(
                    self.base + self.route,
                    headers={"X-Stage-Token": self.token},
                    json={
                        "params": {k: v for k, v in self.query.items() if ".input." not in k},
                        "quick": False,
                        "have": self.have[-64:],
                    },
                    timeout=30,
                )
                reply = read_reply(r)
                status = r.status_code
            except Exception as exc:  # noqa: BLE001 - a dropped connection is a status 0, as in the browser
                status, reply = 0, {"error": str(exc)}
            if status == 200 and ("answer" in reply or "problem" in reply):
                ms = (time.monotonic() - sent) * 1e3
                self.latency.append((sent, ms))
                if self.lost_at is not None:
                    self.back_after, self.lost_at = time.monotonic() - self.lost_at, None
                for f in reply.get("answer", {}).get("figures", []):  # the planes it was sent, as the tab holds them
                    self.have += [protocol.plane_key(f["tensor"]["id"], p) for p, _ in f["tensor"]["sent"]]
                self.answer_bytes.append(len(r.content))
                return
            if status == 429:
                await asyncio.sleep(0.1)
                continue
            self.lost_at = self.lost_at or sent
            if time.monotonic() - sent > RETRY_S:
                self.errors.append(f"{status}: {str(reply.get('error', ''))[:120]}")
                return
            self.notes.append(f"{status} with {self.cookie or 'no cookie'}")
            if status in (0, 401, 502, 503, 504):  # its replica is gone: the page reconnects through the proxy
                await asyncio.sleep(0.5)
                try:
                    self.token, self.have = "", []
                    await self.open(http)
                    self.reopened += 1
                except Exception as exc:  # noqa: BLE001 - no replica yet: again in a moment
                    self.notes.append(f"reopen: {type(exc).__name__}: {str(exc)[:100]}")
                continue
            self.errors.append(f"{status}: {str(reply.get('error', ''))[:120]}")
            return


async def drive(p: Participant, start: float, duration: float, period: float, seed: int) -> None:
    import httpx

    async with httpx.AsyncClient(timeout=30) as http:  # one a participant: its cookie jar is its own, as a browser's
        await _drive(p, http, start, duration, period, seed)


async def _drive(p: Participant, http, start: float, duration: float, period: float, seed: int) -> None:
    rng = random.Random(seed)
    await asyncio.sleep(rng.random() * period if not p.closed else 0)
    try:
        await p.open(http)
    except Exception as exc:  # noqa: BLE001 - a page that does not open is an error of the room
        p.errors.append(f"open: {exc}")
        return
    while time.monotonic() - start < duration:
        t = time.monotonic()
        await p.change(http, rng)
        if not p.closed:
            await asyncio.sleep(max(0.0, period - (time.monotonic() - t)))
    await p.close()


def crowd(
    base: str, indices: list[int], start: float, duration: float, period: float, closed: bool, n: int
) -> list[Participant]:
    """One client process's participants (several processes: the room is measured, not one Python client)."""
    people = [Participant(i, base, PAGES[i % len(PAGES)], closed) for i in indices]

    async def main():
        await asyncio.gather(*(drive(p, start, duration, period, 1000 * n + p.i) for p in people))

    asyncio.run(main())
    for p in people:
        p.ws = None  # not picklable, and closed
    return people


async def run_room(
    n: int,
    clients: int,
    duration: float,
    period: float,
    closed: bool,
    kill_at: float | None,
    cache: str,
    procs: int = 1,
) -> dict:
    from concurrent.futures import ProcessPoolExecutor

    port = free_port()
    with R.started(n, port, cache_dir=cache, env={"PLAYGROUND_PREFETCH": "0"}) as room:
        peaks = {r.port: 0.0 for r in room.replicas}
        start = time.monotonic()  # CLOCK_MONOTONIC: one clock for every process of this machine
        groups = [list(range(k, clients, procs)) for k in range(procs)]
        loop = asyncio.get_running_loop()
        with ProcessPoolExecutor(procs) as pool:
            futures = [
                loop.run_in_executor(pool, crowd, room.url, g, start, duration, period, closed, n) for g in groups
            ]
            killed = None
            while not all(f.done() for f in futures):
                await asyncio.sleep(0.5)
                for r in room.replicas:
                    if r.alive():
                        peaks[r.port] = max(peaks[r.port], rss_mb(r.proc.pid))
                if kill_at is not None and killed is None and time.monotonic() - start >= kill_at:
                    killed = time.monotonic()
                    os.killpg(room.replicas[0].proc.pid, signal.SIGKILL)  # not restarted: the room runs one short
            people = [p for f in futures for p in f.result()]
        took = time.monotonic() - start
    lat = [ms for p in people for _, ms in p.latency]
    out = {
        "replicas": n,
        "clients": clients,
        "mode": "closed" if closed else f"every {period:g} s",
        "changes": len(lat),
        "per_s": len(lat) / took,
        "p50": pct(lat, 50),
        "p95": pct(lat, 95),
        "errors": sum(len(p.errors) for p in people),
        "peak_mb": max(peaks.values()),
        "examples": [e for p in people for e in p.errors + (p.notes[-2:] if p.errors else [])][:4],
    }
    if killed is not None:
        near = [ms for p in people for t, ms in p.latency if abs(t - killed) <= 30]
        lost = [p for p in people if p.reopened]
        out |= {
            "kill_p95": pct(near, 95),
            "kill_changes": len(near),
            "moved": len(lost),
            "back": sum(p.back_after is not None or not p.errors for p in lost),
            "back_p95_s": pct([p.back_after for p in lost if p.back_after is not None], 95),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--replicas", default="1,2,4,8")
    ap.add_argument("--duration", type=float, default=60)
    ap.add_argument("--period", type=float, default=2)
    ap.add_argument("--closed", type=int, default=64, help="participants of the throughput runs (0: none)")
    ap.add_argument("--closed-duration", type=float, default=30)
    ap.add_argument("--kill-at", type=float, default=None)
    ap.add_argument("--kill-replicas", type=int, default=8)
    ap.add_argument("--cache", default=None, help="the rooms' engine cache (default: a fresh temporary one)")
    ap.add_argument(
        "--procs",
        type=int,
        default=max(1, min(4, (os.cpu_count() or 2) // 4)),
        help="client processes the participants are spread over",
    )
    args = ap.parse_args()
    import tempfile

    print_machine(machine())
    cache = args.cache or tempfile.mkdtemp(prefix="room-cache-")
    counts = [int(v) for v in args.replicas.split(",") if v]
    rows = []
    for n in counts:
        rows.append(asyncio.run(run_room(n, args.clients, args.duration, args.period, False, None, cache, args.procs)))
        print(json.dumps(rows[-1]), flush=True)
    capacity = []
    for n in counts if args.closed else []:
        capacity.append(asyncio.run(run_room(n, args.closed, args.closed_duration, 0, True, None, cache, args.procs)))
        print(json.dumps(capacity[-1]), flush=True)
    kill = None
    if args.kill_at is not None:
        kill = asyncio.run(
            run_room(
                args.kill_replicas, args.clients, args.duration, args.period, False, args.kill_at, cache, args.procs
            )
        )
        print(json.dumps(kill), flush=True)

    print(f"\n{args.clients} participants, a change every {args.period:g} s, {args.duration:g} s per room:")
    print(f"{'replicas':>8} {'changes':>8} {'per s':>7} {'p50 ms':>8} {'p95 ms':>8} {'errors':>7} {'peak MB':>8}")
    for r in rows:
        print(
            f"{r['replicas']:>8} {r['changes']:>8} {r['per_s']:>7.1f} {r['p50']:>8.1f} {r['p95']:>8.1f} "
            f"{r['errors']:>7} {r['peak_mb']:>8.0f}"
        )
    if capacity:
        one = capacity[0]["per_s"] / capacity[0]["replicas"]
        print(f"\ncapacity: {args.closed} participants posting back to back, {args.closed_duration:g} s per room:")
        print(f"{'replicas':>8} {'per s':>8} {'p50 ms':>8} {'p95 ms':>8} {'of linear':>10}")
        for r in capacity:
            print(
                f"{r['replicas']:>8} {r['per_s']:>8.1f} {r['p50']:>8.1f} {r['p95']:>8.1f} "
                f"{r['per_s'] / (one * r['replicas']):>10.2f}"
            )
    if kill:
        print(
            f"\nreplica 0 of {kill['replicas']} killed {args.kill_at:g} s in: p95 over the minute around it "
            f"{kill['kill_p95']:.0f} ms ({kill['kill_changes']} changes); {kill['moved']} participants moved, "
            f"{kill['back']} back on their configuration (p95 {kill['back_p95_s']:.2f} s); errors {kill['errors']}"
        )


if __name__ == "__main__":
    main()
