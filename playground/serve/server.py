"""The stage's door into the server: `POST /api/stage/evaluate`, a Starlette route mounted beside Streamlit's own
(`st.App`, see app.py). A parameter change is answered here, without a script run.

A page's script opens a seat (`SEATS.open`): a per-session secret that names the layer and holds the input tensor
the sidebar made (every input's, for a layer of several); the stage sends it in the `X-Stage-Token` header. The
route answers only:
- a known, live seat's token, from the page's own origin (a browser's `Origin` must name the `Host` it asks);
- a JSON body in UTF-8 of at most MAX_BODY_BYTES, in the protocol's form (protocol.raw_params names what is wrong);
- one evaluation at a time per seat (a second is 429: the stage coalesces, latest wins), and at most
  MAX_WAITING evaluations waiting for a worker over all seats (503 beyond: the room is told to wait, the server
  keeps answering); the layer's work and memory budgets apply as everywhere (`Layer.resolve`).
An answer is a binary frame (`protocol.frame`: the planes each figure draws, with the whole tensors' stats);
`POST /api/stage/planes` answers more planes of a tensor the seat's last answers sent in part (a page turned).
A configuration the layer refuses is an answer (`problem`, status 200): the stage names the parameter and the
rule and keeps its last good drawing. Anything else is a 4xx with a message; an unexpected failure is a 500 whose
body says so in one line, never a traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import secrets
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field

import numpy as np

from ..base.errors import ValidationError
from ..layers import get_layer
from . import protocol
from .prefetch import Position, neighbours

log = logging.getLogger(__name__)
ROUTE = "/api/stage/evaluate"
PLANES_ROUTE = "/api/stage/planes"  # more planes of a tensor an answer sent in part (a page turned)
QR_ROUTE = "/api/stage/qr"  # the link's QR code, for a room to scan off the presenter's screen
MAX_LINK = 2048  # characters of a link a QR code is made of
TOKEN_HEADER = "x-stage-token"
MAX_BODY_BYTES = 64 << 10
BODY_WAIT_S = 10.0  # a body declared and not sent within this is answered 408 (the stage's are sent at once)
MAX_DEPTH = 8  # arrays and objects inside each other: the stage's deepest is 2 (params, pick); json.loads recurses
MAX_SEATS = 4096  # open pages remembered; the least recently used is forgotten first
# What they hold together (PLAYGROUND_PAGES_MB): inputs, the last full answer's evaluation, the tensors kept for
# pages turned (a room of 200 at the element budget, 32 MiB an input and about 160 MiB beside it, would be 37 GiB).
# `Seats.trim` says what is let go first.
MAX_SEAT_MB = 1024


def max_seat_bytes() -> int:
    """PLAYGROUND_PAGES_MB in bytes; where it is not a number in its range, the server says so and keeps the
    default (it is read as the server starts: there is no page to say it on)."""
    from ..base.budget import env_number

    try:
        return int(env_number("PLAYGROUND_PAGES_MB", MAX_SEAT_MB, 1, 2**20, float) * 2**20)
    except ValidationError as exc:
        log.warning("%s; the pages' cap stays %d MB", exc, MAX_SEAT_MB)
        return MAX_SEAT_MB << 20


SEAT_IDLE_S = 4 * 3600
WORKERS = 4  # evaluations at once (builds release the GIL; the references are NumPy)
MAX_WAITING = 64
SPECULATE_VALUES = 1 << 20  # inputs up to this many values get their neighbours built ahead (the spec's, many times)
# A seat keeps the tensors of its last KEEP_ANSWERS answers that were sent in part (more planes than a page), for
# the planes the stage asks for as its person turns a page; older ones are asked for by a new evaluation.
KEEP_ANSWERS = 2
MAX_PLANE_ASKS = 16  # tensors one planes request may name
PLANES_ANSWER_TENSORS = 2  # an answer of planes carries at most two whole tensors' bytes at the element budget


def max_planes_bytes() -> int:
    """The most bytes of planes one planes request is answered (a page turned asks for a few planes of a figure or
    two): twice a tensor at the element budget, 64 MiB by default."""
    from ..base import budget

    return PLANES_ANSWER_TENSORS * 4 * budget.max_elements()


@dataclass
class Seat:
    layer: str
    x: np.ndarray  # the layer's first input
    used: float = field(default_factory=time.monotonic)
    busy: bool = False
    finishing: bool = False  # a drawn answer's follow-up in flight (`finish`)
    paging: bool = False  # a planes request in flight (`planes_route`)
    last_query: Position | None = None  # the configuration answered last: speculative builds step from it
    opened: object = None  # onnx.opened.Opened: the model's node this page opened (ONNX Runtime judges the node itself)
    others: dict = field(default_factory=dict)  # a layer of several inputs: the rest of its feed dict, by name
    evaluated: tuple | None = None  # (compare, Evaluation) of the last full answer: what the page's settle run draws
    let_go: tuple | None = None  # (compare, params, inputs) of that evaluation where the pages' cap let it go (`trim`)
    kept: deque = field(default_factory=lambda: deque(maxlen=KEEP_ANSWERS))  # {tensor id: array} per answer sent
    digests: dict = field(default_factory=dict)  # core.digest of each input, by name: made once, when it is opened
    owner: Seats | None = field(default=None, repr=False)  # whose byte count this seat's holdings are part of
    counted: int = 0  # the bytes the owner counts for it (`held` when last counted)
    # A chain's page (layer "chain"): its structure (chainview.Spec; `x` is the chain's input), the shapes its
    # layers' keys were last read for, and its last full answer's (resolved chain, ChainEvaluation: None where the
    # pages' cap let it go, `Seats.trim`)
    chain: object = None
    chain_shapes: dict = field(default_factory=dict)
    chain_ev: tuple | None = None

    def keep(self, arrays: dict) -> None:
        """The tensors of an answer sent in part (protocol.arrays), for the planes asked for later (`planes`)."""
        if arrays:
            self.kept.append(arrays)
            self._recount()

    def remember(self, compare: str | None, ev) -> None:
        """The last full answer's evaluation (`remembered`)."""
        self.evaluated, self.let_go = (compare, ev), None
        self._recount()

    def remember_chain(self, resolved, ev, shapes: dict) -> None:
        """A chain page's last full answer (`chain_ev`) and the shapes its layers' keys are read for."""
        self.chain_ev, self.chain_shapes = (resolved, ev), shapes
        self._recount()

    def _recount(self) -> None:
        if self.owner is not None:
            self.owner.trim(self)

    def kept_tensor(self, tid: str):
        return next((k[tid] for k in reversed(list(self.kept)) if tid in k), None)  # a copy: `trim` may clear it

    def remembered(self, raw: dict, compare: str | None):
        """The last full answer's Evaluation where `raw` (the settled URL's) resolves to its configuration: the
        page's settle run draws its tabs from it instead of evaluating the configuration a second time. None where
        it is another configuration (or one the layer refuses: the page's own evaluation names the rule)."""
        if self.evaluated is None or self.evaluated[0] != compare:
            return None
        ev = self.evaluated[1]
        return ev if _resolves_to(self.layer, raw, ev.params, ev.inputs) else None

    def forgot(self, raw: dict, compare: str | None) -> bool:
        """Whether the last full answer was of `raw`'s configuration and its evaluation was let go under the pages'
        cap since (`trim`): its follow-up evaluates it again."""
        return (
            self.evaluated is None
            and self.let_go is not None
            and self.let_go[0] == compare
            and _resolves_to(self.layer, raw, *self.let_go[1:])
        )

    @property
    def feed(self):
        """What `evaluate` takes: the input, or the feed dict where the layer has several."""
        return {get_layer(self.layer).input_names[0]: self.x, **self.others} if self.others else self.x

    @property
    def input_bytes(self) -> int:
        return self.x.nbytes + sum(a.nbytes for a in self.others.values())

    @property
    def held(self) -> int:
        """The bytes this page keeps alive: its inputs, its last full answer's evaluation (inputs, outputs, truth,
        error maps, compare mode's) and the tensors kept for pages turned, each buffer once (an answer's tensors
        are mostly its evaluation's; the input figure is the input). Some are also in core's memos, which count
        them apart: a seat holds them past those memos' eviction, so they count here too."""
        seen, total = set(), 0
        for a in _arrays(self):
            while isinstance(a.base, np.ndarray):  # a view: its buffer's owner
                a = a.base
            if id(a) not in seen:
                seen.add(id(a))
                total += a.nbytes
        return total


def _arrays(seat: Seat):
    yield seat.x
    yield from seat.others.values()
    if seat.chain_ev is not None and seat.chain_ev[1] is not None:
        yield from seat.chain_ev[1].tensors.values()
    evs = [seat.evaluated[1]] if seat.evaluated is not None else []
    while evs:
        ev = evs.pop()
        yield from (a for a in (ev.input, ev.reference, ev.output, ev.truth) if isinstance(a, np.ndarray))
        yield from ev.inputs.values()
        for e in (ev.precision_error, ev.difference):
            yield from (v for v in (e or {}).values() if isinstance(v, np.ndarray))
        if ev.compared is not None:
            evs.append(ev.compared)
    for kept in list(seat.kept):
        yield from kept.values()


class Seats:
    """The open pages' seats, by token (bounded, idle ones forgotten), and the bytes they hold (`trim`)."""

    def __init__(self, limit: int = MAX_SEATS, idle_s: float = SEAT_IDLE_S, max_bytes: int | None = None):
        self.limit, self.idle_s = limit, idle_s
        self.max_bytes = max_bytes if max_bytes is not None else max_seat_bytes()
        self.items: OrderedDict[str, Seat] = OrderedDict()
        self.lock = threading.Lock()
        self.total = 0  # the seats' `counted` bytes together

    def open(self, layer: str, x, token: str | None = None, opened=None, chain=None) -> str:
        """A seat for this page's input: an array, or the feed dict of a layer of several inputs (the same token
        again where the page already has one); `chain` (chainview.Spec): a chain's page, `x` the chain's input."""
        from ..network.core import digest

        if chain is not None:
            xs = {"x": np.asarray(x, dtype=np.float32, order="C")}
        else:
            names = get_layer(layer).input_names
            xs = get_layer(layer).feed(x) if isinstance(x, dict) else {names[0]: np.asarray(x, np.float32, order="C")}
        x, *rest = xs.values()
        others = dict(zip(list(xs)[1:], rest))
        with self.lock:
            if token is None or token not in self.items:
                token = secrets.token_urlsafe(24)
            seat = self.items.get(token)
        if (
            seat is None
            or seat.layer != layer
            or seat.chain != chain
            or not _same({"": seat.x, **seat.others}, {"": x, **others})
        ):
            seat = Seat(layer, x, others=others, digests={n: digest(a) for n, a in xs.items()}, chain=chain)
        seat.opened = opened
        with self.lock:
            if self.items.get(token) is not seat:  # a new seat, or this one let go meanwhile (`trim`)
                self._drop(token)  # the page's former seat: an answer of it still in flight counts no more
                seat.owner, seat.counted = self, 0
                self.items[token] = seat
            self.items.move_to_end(token)
        self.trim(seat)
        return token

    def take(self, token: str) -> Seat | None:
        with self.lock:
            seat = self.items.get(token)
            if seat is None or time.monotonic() - seat.used > self.idle_s:
                self._drop(token)
                return None
            seat.used = time.monotonic()
            self.items.move_to_end(token)
            return seat

    def _drop(self, token: str) -> None:
        seat = self.items.pop(token, None)
        if seat is not None:
            self.total -= seat.counted
            seat.owner = None

    def trim(self, seat: Seat) -> None:
        """Count what `seat` holds now, then let go while the seats hold too much: first the tensors kept for
        pages turned (a page asking for one is told it is gone and asks for its configuration again), then the
        last answers' evaluations (a settle run evaluates its configuration afresh), least recently used page
        first; then whole pages, least recently used first (one whose seat went is told to reload). `seat`, the
        page being answered, keeps what it holds. Too many pages, and idle ones, go too."""
        with self.lock:
            if seat.owner is self:
                counted = seat.held
                self.total += counted - seat.counted
                seat.counted = counted
            now = time.monotonic()
            while len(self.items) > 1 and (
                len(self.items) > self.limit or now - next(iter(self.items.values())).used > self.idle_s
            ):
                self._drop(next(iter(self.items)))
            for let_go in ("kept", "evaluated"):
                for other in list(self.items.values()):
                    if self.total <= self.max_bytes:
                        return
                    evaluated = other.evaluated is not None or (
                        other.chain_ev is not None and other.chain_ev[1] is not None
                    )
                    if other is not seat and (other.kept if let_go == "kept" else evaluated):
                        if let_go == "kept":
                            other.kept.clear()
                        elif other.chain_ev is not None:  # its chain kept (small): what a structural change starts from
                            other.chain_ev = (other.chain_ev[0], None)
                        else:
                            ev = other.evaluated[1]
                            other.let_go, other.evaluated = (other.evaluated[0], ev.params, ev.inputs), None
                        counted = other.held
                        self.total += counted - other.counted
                        other.counted = counted
            while len(self.items) > 1 and self.total > self.max_bytes:
                oldest = next(iter(self.items))
                if self.items[oldest] is seat:
                    self.items.move_to_end(oldest)  # the page being answered stays; the next oldest goes
                    oldest = next(iter(self.items))
                self._drop(oldest)


def _resolves_to(layer: str, raw: dict, params: dict, inputs: dict) -> bool:
    """Whether `raw` resolves to `params` on `inputs` (an evaluation's: the inputs its configuration reads)."""
    from ..base.params import same_params
    from ..base.precision import with_data_scale

    try:
        mine = with_data_scale(get_layer(layer).resolve(raw, {n: a.shape for n, a in inputs.items()}), inputs)
    except ValidationError:  # a configuration the layer refuses: the page's own evaluation names the rule
        return False
    return same_params(mine, params)


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(a[k].shape == b[k].shape and np.array_equal(a[k], b[k]) for k in a)


SEATS = Seats()
_slots = threading.BoundedSemaphore(WORKERS)
_waiting = 0
_waiting_lock = threading.Lock()


def _reply(status: int, body: dict | bytes, timing: dict | None = None):
    """A response: JSON, or an answer's frame (`protocol.frame`, bytes written in a worker thread: megabytes at the
    work budget, whose writing would hold up every other page's messages on the server's event loop). `timing`:
    {phase: ms} for Server-Timing, the route's own time `answer` first (bench_browser reads it)."""
    from starlette.responses import JSONResponse, Response

    headers = {"Cache-Control": "no-store"}
    if timing:  # apart from the network and the browser
        headers["Server-Timing"] = ", ".join(f"{k};dur={v:.1f}" for k, v in timing.items())
    if isinstance(body, bytes):
        return Response(body, status_code=status, headers=headers, media_type=protocol.FRAME_TYPE)
    return JSONResponse(body, status_code=status, headers=headers)


def _same_origin(request) -> bool:
    """A browser names the page's origin in `Origin`; it must be the host the request was sent to (a page of
    another site cannot post here). A request without `Origin` (no browser) must still carry the seat's token."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    host = request.headers.get("host", "")
    return origin.split("://", 1)[-1].rstrip("/") == host


async def _door(request):
    """(seat, message) of a request the stage could have sent, or the reply that refuses it."""
    if not _same_origin(request):
        return None, _reply(403, {"error": "the stage answers its own page's origin only"})
    seat = SEATS.take(request.headers.get(TOKEN_HEADER, ""))
    if seat is None:
        return None, _reply(401, {"error": "no open page has this token: reload the page"})
    size = request.headers.get("content-length")
    if size is None or not size.isdigit() or int(size) > MAX_BODY_BYTES:
        return None, _reply(413, {"error": f"the request body must declare its length, at most {MAX_BODY_BYTES} bytes"})
    from starlette.requests import ClientDisconnect

    try:
        body = await asyncio.wait_for(request.body(), BODY_WAIT_S)
    except ClientDisconnect:  # the client went (a closed tab, a stalled body cut off): a line, not a traceback
        log.info("stage: a client disconnected before its request body arrived")
        return None, _reply(400, {"error": "the client disconnected before its body arrived"})
    except TimeoutError:  # a declared length never sent: the connection is not held open for it
        log.info("stage: a request body did not arrive within %.0f s", BODY_WAIT_S)
        return None, _reply(408, {"error": f"the request body did not arrive within {BODY_WAIT_S:.0f} s"})
    if len(body) > MAX_BODY_BYTES:
        return None, _reply(413, {"error": f"the request body is over {MAX_BODY_BYTES} bytes"})
    try:  # UTF-8 only (json.loads would take UTF-16 and UTF-32 too, whose brackets `depth` does not see)
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None, _reply(400, {"error": "the body must be JSON in UTF-8"})
    if depth(body) > MAX_DEPTH:  # valid UTF-8: a bracket's byte is a bracket
        return None, _reply(400, {"error": f"the body nests arrays and objects more than {MAX_DEPTH} deep"})
    try:
        message = json.loads(text)
    except ValueError as exc:
        return None, _reply(400, {"error": f"the body is not JSON: {str(exc)[:120]}"})
    if not isinstance(message, dict):
        return None, _reply(400, {"error": "the body must be a JSON object"})
    return (seat, message), None


_MARKS = re.compile(rb'[][{}"\\]')


def depth(body: bytes) -> int:
    """How deep the JSON text's arrays and objects nest (brackets inside strings do not count), found in one pass
    without parsing: json.loads recurses once per level, and 64 KiB of brackets would exhaust Python's stack."""
    deepest = level = 0
    in_string, skip = False, -1
    for m in _MARKS.finditer(body):
        at, c = m.start(), body[m.start()]
        if at == skip:  # the character after a backslash in a string
            continue
        if in_string:
            if c == 0x5C:  # backslash
                skip = at + 1
            elif c == 0x22:  # quote
                in_string = False
        elif c == 0x22:
            in_string = True
        elif c in b"[{":
            level += 1
            deepest = max(deepest, level)
        elif c in b"]}":
            level -= 1
    return deepest


async def evaluate_route(request):
    from starlette.concurrency import run_in_threadpool

    entered = time.perf_counter()
    opened, refused = await _door(request)
    if refused is not None:
        return refused
    seat, message = opened
    # A drawn answer's follow-up (`finish`: its engine's build) has a slot of its own, so that the next change is
    # not held up behind a build; one of each per page.
    flag = "finishing" if message.get("finish") else "busy"
    global _waiting
    with _waiting_lock:
        if getattr(seat, flag):
            return _reply(429, {"error": "this page has an evaluation in flight: send the latest when it ends"})
        if _waiting >= MAX_WAITING:
            return _reply(503, {"error": "the server is busy with other pages: try again in a moment"})
        setattr(seat, flag, True)
        _waiting += 1
    started = time.perf_counter()
    marks = {"door": (started - entered) * 1e3}
    try:
        status, reply = await run_in_threadpool(_answer, seat, message, started, marks)
    finally:
        with _waiting_lock:
            setattr(seat, flag, False)
            _waiting -= 1
    now = time.perf_counter()
    marks["back"] = (now - marks.pop("_out")) * 1e3 if "_out" in marks else 0.0
    return _reply(status, reply, {"answer": (now - started) * 1e3, **marks})


def _answer(seat: Seat, message: dict, asked: float = 0.0, marks: dict | None = None) -> tuple[int, dict | bytes]:
    marks = {} if marks is None else marks
    t0 = time.perf_counter()
    with _slots:
        t1 = time.perf_counter()
        marks["thread"], marks["slot"] = (t0 - asked) * 1e3, (t1 - t0) * 1e3
        try:
            reply = answer(seat, message)
            t2 = time.perf_counter()
            out = protocol.frame(reply) if "answer" in reply else reply
            t3 = time.perf_counter()
            marks["evaluate"], marks["frame"], marks["_out"] = (t2 - t1) * 1e3, (t3 - t2) * 1e3, t3
            return 200, out
        except protocol.RequestError as exc:  # the key it names, for the stage to mark (a text over MAX_TEXT)
            return 400, {"error": str(exc), "keys": [exc.key] if exc.key else []}
        except Exception as exc:  # noqa: BLE001 - a bug must still be an answer the page can show
            return 500, {"error": f"unexpected error ({type(exc).__name__}): {str(exc)[:200]}"}


def answer(seat: Seat, message: dict) -> dict:
    """One request's answer: {"answer": …} or {"problem": …} (a refused configuration)."""
    from ..network.core import evaluate
    from . import shared  # the process's backend, engine cache and speculative builder

    unknown = set(message) - {"params", "compare", "pick", "quick", "have", "finish", "pages"}
    if unknown:
        raise protocol.RequestError(f"unknown field {sorted(unknown)[0]!s:.40}")
    if seat.chain is not None:
        return chain_answer(seat, message)
    layer = get_layer(seat.layer)
    raw = protocol.raw_params(layer, seat.x.shape, message.get("params") or {})
    compare = message.get("compare")
    if compare is not None and compare not in layer.param("precision").choices:
        raise protocol.RequestError("compare must be one of " + ", ".join(layer.param("precision").choices))
    pick = message.get("pick")
    if pick is not None and not (
        isinstance(pick, list) and len(pick) <= 5 and all(isinstance(v, int) and not isinstance(v, bool) for v in pick)
    ):
        raise protocol.RequestError("pick must be a list of at most 5 whole numbers")
    have = _held(message)
    pages = protocol.read_pages(message.get("pages"))
    backend, cache, prefetcher = shared.backend(), shared.engine_cache(), shared.prefetcher()
    quick = bool(message.get("quick")) and not backend.can_run  # TensorRT's output is never skipped where it runs

    def evaluated():  # where no engine runs, the reference is drawn first: its engine's build follows (`finish`)
        with prefetcher.foreground():
            return evaluate(
                layer.name,
                raw,
                seat.feed,
                backend=backend,
                cache=cache,
                compare=compare,
                build=backend.can_run,
                digests=seat.digests,
                fit=True,
            )

    if message.get("finish"):  # what follows a drawn answer: its engine's verdict, ONNX Runtime's badge, the lines
        try:
            if seat.forgot(raw, compare):  # its evaluation let go under the pages' cap: made again, once
                seat.remember(compare, evaluated())
            return {"finish": finish(seat, layer, raw, compare, tuple(pick) if pick else None)}
        except ValidationError as exc:
            return {"problem": protocol.problem(exc, layer, seat.x.shape)}
    try:
        ev = evaluated()
    except ValidationError as exc:
        return {"problem": protocol.problem(exc, layer, seat.x.shape)}
    if not quick:
        seat.remember(compare, ev)
    # beyond, a neighbour costs seconds of the room's CPU: the release builds
    if seat.input_bytes // 4 <= SPECULATE_VALUES:
        ahead = {"backend": backend, "cache": cache, "digests": seat.digests}  # the input is not hashed again
        if quick:  # drawn from the reference now; its engine is built behind the foreground
            prefetcher.offer(layer.name, [raw], seat.feed, **ahead)
        elif seat.last_query is not None:
            prefetcher.offer(
                layer.name, neighbours(layer, seat.last_query, Position(raw, ev.params)), seat.feed, **ahead
            )
    seat.last_query = Position(raw, ev.params)
    out = protocol.answer(
        layer,
        ev,
        tuple(pick) if pick else None,
        frozenset(have),
        lines=0 if quick else 1,  # the picked (and the first) cell's arithmetic; the rest follows (`finish`)
        every=False,  # the picked cell's window: a new geometry's windows are most of the answer's time
        opened=seat.opened,
        pages=pages,
    )
    seat.keep(protocol.arrays(out))
    out["finish"] = not quick  # the stage asks for the engine's verdict, the badge and the cells' lines once drawn
    return {"answer": out}


def _held(message: dict) -> frozenset:
    have = message.get("have") or []
    if not (
        isinstance(have, list)
        and len(have) <= protocol.MAX_HELD
        and all(isinstance(h, str) and len(h) <= 32 for h in have)
    ):
        raise protocol.RequestError(f"have must be a list of at most {protocol.MAX_HELD} plane keys")
    return frozenset(have)


def chain_answer(seat: Seat, message: dict) -> dict:
    """A chain page's request: its layers' parameters evaluated as one chain on the seat's input (the references
    drawn first where no engine runs; the engine's build follows, `finish`), or the refusal naming its key."""
    from ..network import chain as C
    from . import chainview, shared

    if message.get("compare") is not None:
        raise protocol.RequestError("a chain has no compare mode", "compare")
    spec, backend, cache = seat.chain, shared.backend(), shared.engine_cache()
    held, pages = _held(message), protocol.read_pages(message.get("pages"))
    try:
        raw, resolved = chainview.resolve(spec, message.get("params") or {}, seat.x.shape, seat.chain_shapes)
        if message.get("finish"):  # the engine of the chain answered last, built now; another chain's: None
            if seat.chain_ev is None or not chainview.same(seat.chain_ev[0], resolved):
                return {"finish": None}
            with shared.prefetcher().foreground():
                ev = C.evaluate(spec.names, raw, seat.x, backend=backend, cache=cache)
            seat.remember_chain(resolved, ev, chainview.first_shapes(resolved))
            opinion = chainview.opinion_badge(ev, backend, cache)
            return {"finish": chainview.verdict(ev, backend) | {"onnxruntime": opinion}}
        with shared.prefetcher().foreground():
            ev = C.evaluate(spec.names, raw, seat.x, backend=backend, cache=cache, build_engine=backend.can_run)
    except ValidationError as exc:
        return {"problem": chainview.problem(exc, spec, seat.chain_shapes)}
    seat.remember_chain(resolved, ev, chainview.first_shapes(resolved))
    out = chainview.answer(spec, resolved, ev, backend, held, pages, {C.INPUT: seat.digests["x"]})
    seat.keep(protocol.arrays(out))
    out["finish"] = not message.get("quick")  # the engine's verdict (built now, where it was pending), the badge
    return {"answer": out}


def finish(seat: Seat, layer, raw: dict, compare: str | None, pick: tuple | None = None) -> dict:
    """The answer's engine verdict (its build, where the answer was the reference drawn first), ONNX Runtime's
    badge and the read map with the output cells' arithmetic lines (the answer drawn carried the picked cell's),
    of the evaluation the seat remembers: the configuration is not evaluated again (unless the pages' cap let its
    evaluation go: `answer` makes it again first). None where the seat remembers another configuration (the page
    has moved on: its own follow-up comes)."""
    from ..network.core import complete
    from . import shared

    ev = seat.remembered(raw, compare)
    if ev is None:
        return None
    with shared.prefetcher().foreground():
        complete(ev, shared.engine_cache())
    opened = seat.opened if seat.opened is not None and seat.opened.stands(ev) else None
    return (
        protocol.verdict(ev)
        | {"onnxruntime": protocol.onnxruntime_badge(ev, opened) if protocol.has_opinion(layer) else None}
        | ({"cells": protocol.read_map(layer, ev, pick)} if layer.reads is not None else {})
    )


async def planes_route(request):
    """More planes of tensors this page's last answers sent in part: {"planes": [[id, first, count], ...]} in, a
    frame out, {"tensors": [...], "gone": [ids no longer kept]} (the stage asks for a new evaluation then)."""
    from starlette.concurrency import run_in_threadpool

    opened, refused = await _door(request)
    if refused is not None:
        return refused
    seat, message = opened
    asks = message.get("planes")
    if not (
        set(message) == {"planes"}
        and isinstance(asks, list)
        and 0 < len(asks) <= MAX_PLANE_ASKS
        and all(
            isinstance(a, list)
            and len(a) == 3
            and isinstance(a[0], str)
            and len(a[0]) <= 32
            and all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < 1 << 24 for i in a[1:])
            and a[2] <= 64
            for a in asks
        )
    ):
        return _reply(400, {"error": f"planes must be a list of at most {MAX_PLANE_ASKS} [tensor id, first, count]"})

    once: dict[str, list] = {}  # each tensor once, the first page asked of it (one named 16 times is answered once)
    for a in asks:
        once.setdefault(a[0], a)
    asks = list(once.values())
    cap, size = max_planes_bytes(), 0
    for tid, first, count in asks:
        a = seat.kept_tensor(tid)
        size += protocol.page_bytes(a.shape, (first, count)) if a is not None else 0
    if size > cap:
        return _reply(
            413,
            {
                "error": f"the planes asked hold {size:,} bytes; an answer of planes carries at most {cap:,} "
                f"({PLANES_ANSWER_TENSORS} tensors at the element budget, PLAYGROUND_MAX_ELEMENTS)"
            },
        )

    def planes() -> bytes:
        with _slots:  # the seat's other work's workers: a page turned waits its turn as an evaluation does
            found, gone = [], []
            for tid, first, count in asks:
                a = seat.kept_tensor(tid)
                if a is None:
                    gone.append(tid)
                else:
                    found.append(protocol.tensor(a, frozenset(), (first, count), tid))
            return protocol.frame({"tensors": found, "gone": gone})

    global _waiting
    with _waiting_lock:
        if seat.paging:
            return _reply(429, {"error": "this page has a planes request in flight: send the next when it ends"})
        if _waiting >= MAX_WAITING:
            return _reply(503, {"error": "the server is busy with other pages: try again in a moment"})
        seat.paging = True
        _waiting += 1
    try:
        return _reply(200, await run_in_threadpool(planes))
    finally:
        with _waiting_lock:
            seat.paging = False
            _waiting -= 1


PUBLIC_URL = re.compile(r"https?://[^\s/?#]+(/[^\s?#]*)?")  # an http(s) address, without query or fragment


def public_url() -> str:
    """PLAYGROUND_PUBLIC_URL (what a room reaches, e.g. a proxy's address), without its trailing slash; "" where
    unset or not an http(s) address (the page's own address is the link's then; `room` refuses one)."""
    value = os.environ.get("PLAYGROUND_PUBLIC_URL", "").strip().rstrip("/")
    return value if PUBLIC_URL.fullmatch(value) else ""


async def qr_route(request):
    """The QR code (SVG) of a link to this app: {"url": …} from the stage, which must name the page's own origin or
    the configured public address (no QR codes of other sites made here)."""
    import io

    import segno

    opened, refused = await _door(request)
    if refused is not None:
        return refused
    _, message = opened
    url = message.get("url")
    origins = [o for o in (public_url(), f"{request.url.scheme}://{request.headers.get('host', '')}") if o]
    if not isinstance(url, str) or len(url) > MAX_LINK or not any(url == o or url.startswith(o + "/") for o in origins):
        return _reply(400, {"error": f"url must be a link to this app (at most {MAX_LINK} characters)"})
    svg = io.BytesIO()
    segno.make(url, error="m").save(svg, kind="svg", scale=6, border=2, dark="#000", light="#fff")
    from starlette.responses import Response

    return Response(svg.getvalue(), media_type="image/svg+xml", headers={"Cache-Control": "no-store"})


def without_delay() -> int:
    """Nagle's algorithm off on the connections this process's server accepts; how many listening sockets it set.
    Streamlit binds its listening socket itself, of protocol 0, and asyncio turns Nagle off only on a connection
    whose socket names TCP: a kept-alive reply's body, written after its headers, then waited for the browser's
    delayed acknowledgement (40 ms on Linux), most of a key press's round trip. A connection inherits TCP_NODELAY
    from its listener, so it is set there: on each TCP socket the process listens on (app.py runs this as the server
    imports it, the socket bound)."""
    import socket
    import stat

    fds = [int(f) for f in os.listdir("/proc/self/fd")] if os.path.isdir("/proc/self/fd") else range(1024)
    done = 0
    for fd in fds:
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            other = os.dup(fd)  # the same socket, by another descriptor: closed after
        except OSError:
            continue
        try:
            sock = socket.socket(fileno=other)
        except OSError:
            os.close(other)
            continue
        with sock:
            try:
                if (
                    sock.family in (socket.AF_INET, socket.AF_INET6)
                    and sock.type == socket.SOCK_STREAM
                    and sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
                ):
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    done += 1
            except OSError as exc:
                log.info("stage: TCP_NODELAY not set on a listening socket (%s)", exc)
    return done


class Uncompressed:
    """ASGI middleware, wrapped around Streamlit's own: the stage's answers leave as they are. Streamlit gzips every
    response over 1 kB on the server's event loop; an answer is mostly float32 planes, which gzip shrinks by under
    10 % at about 30 MB/s (over 400 ms for the 12.6 MB a page at the element budget is sent, every other page's
    messages held meanwhile; a small answer's ~0.5 ms, and the browser inflates it again). On requests to the
    answering routes, gzip is taken out of the encodings they accept before Streamlit's middleware reads them."""

    PATHS = (ROUTE, PLANES_ROUTE)

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"].endswith(self.PATHS):
            scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k != b"accept-encoding"]}
        await self.app(scope, receive, send)


def middleware() -> list:
    """The app's own middleware (app.py), outside Streamlit's."""
    from starlette.middleware import Middleware

    return [Middleware(Uncompressed)]


def routes():
    from starlette.routing import Route

    from . import assets, graph_data

    return [
        Route(ROUTE, evaluate_route, methods=["POST"]),
        Route(PLANES_ROUTE, planes_route, methods=["POST"]),
        Route(QR_ROUTE, qr_route, methods=["POST"]),
        *assets.routes(),
        *graph_data.routes(),
    ]
