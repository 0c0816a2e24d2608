"""The doors a hostile participant pushes hardest, at the element budget: what each answers and what the server's
memory does. The server is this process (the stage's routes on Starlette's test client, the seats in memory), so
its peak RSS (VmHWM, reset before each case) is the server's own. Printed side by side, one line a case:

- bodies: a 60 KB body of nested brackets in UTF-16 (and UTF-32) to the evaluate, planes and QR routes;
- planes: one 32 MiB output asked for sixteen times in one request, and two such requests at once;
- read map: a Normalization page on N4·C8·512·512 (each cell reads its 262,144-cell group), and a Reduce to one cell
  of the same input (every cell), their follow-ups' windows;
- trace: a cell traced through two Normalizations on 96 × 96.

    python bench/bench_doors.py
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
from common import machine, print_machine  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from playground.base import budget  # noqa: E402
from playground.network import chain as C  # noqa: E402
from playground.serve import server  # noqa: E402

SHAPE = (4, 8, 512, 512)  # the element budget


def status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # VmHWM back to the RSS now
    except OSError:
        pass


def post(client, token, body: bytes | dict, route=server.ROUTE):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.post(route, content=data, headers={server.TOKEN_HEADER: token, "content-type": "application/json"})


def case(name: str, run) -> None:
    reset_peak()
    before = status_mb("VmRSS")
    start = time.perf_counter()
    said = run()
    seconds = time.perf_counter() - start
    print(
        f"  {name:<44} {said:<44} {seconds:6.2f} s  RSS {before:6.0f} → peak {status_mb('VmHWM'):6.0f} MB",
        flush=True,
    )


def main() -> None:
    print_machine(machine())
    print(f"budget: {budget.max_elements():,} values per tensor; input {SHAPE}")
    client = TestClient(Starlette(routes=server.routes()), base_url="http://stage.test", raise_server_exceptions=False)
    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, SHAPE).astype(np.float32)

    def bodies():
        token = server.SEATS.open("activation", np.ones((1, 1, 4, 4), np.float32))
        codes = []
        for encoding in ("utf-16", "utf-32"):
            deep = ("[" * 7000 + "]" * 7000).encode(encoding)[: server.MAX_BODY_BYTES]
            for route in (server.ROUTE, server.PLANES_ROUTE, server.QR_ROUTE):
                codes.append(post(client, token, deep, route).status_code)
        return f"{len(codes)} bodies: HTTP {sorted(set(codes))}"

    case("bodies: nested UTF-16/32, three routes", bodies)

    token = server.SEATS.open("activation", x)
    reply = post(client, token, {"params": {}})
    from playground.serve import protocol

    ids = [f["tensor"]["id"] for f in protocol.read_frame(reply.content)[0]["answer"]["figures"]]

    def planes_one():
        r = post(client, token, {"planes": [[ids[1], 0, 64]] * 16}, server.PLANES_ROUTE)
        return f"HTTP {r.status_code}, {len(r.content) / 1e6:.1f} MB (was 16 × 33.6)"

    case("planes: one 32 MiB tensor asked 16 times", planes_one)

    def planes_two():
        out = []
        body = {"planes": [[ids[0], 0, 64], [ids[1], 0, 64]]}
        threads = [
            threading.Thread(target=lambda: out.append(post(client, token, body, server.PLANES_ROUTE))) for _ in "ab"
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return "HTTP " + ", ".join(f"{r.status_code} {len(r.content) / 1e6:.1f} MB" for r in out)

    case("planes: two requests of both tensors at once", planes_two)

    def read_map(layer, feed, params, note):
        def run():
            t = server.SEATS.open(layer, feed)
            post(client, t, {"params": params})
            r = post(client, t, {"params": params, "finish": True})
            cells = r.json()["finish"]["cells"]
            return f"{len(r.content) / 1e3:.1f} kB follow-up, window {json.dumps(cells['reads'][','.join(map(str, cells['picked']))])[:28]} {note}"

        return run

    c = (1, 8, 1, 1)
    feed = {"x": x, "scale": np.ones(c, np.float32), "bias": np.zeros(c, np.float32)}
    case("read map: Normalization on 4·8·512·512", read_map("normalization", feed, {}, ""))
    case("read map: Reduce of 4·8·512·512 to one cell", read_map("reduce", x, {"reduce.axes": "15"}, ""))

    def trace():
        chain = C.resolve("normalization+normalization", {}, (1, 1, 96, 96))
        field, stopped = C.receptive_field(chain, "normalization2", (0, 0, 5, 5))
        return f"{len(field[C.INPUT]):,} input cells, stopped {stopped} (bound {C.TRACE_WORK:,} read)"

    case("trace: two Normalizations on 96 × 96", trace)
    print(f"\nserver peak RSS over the run (VmHWM after the last reset) {status_mb('VmHWM'):.0f} MB")


if __name__ == "__main__":
    main()
