"""A room: N app processes behind HAProxy, one engine cache, and a replica lost costs no one their place.

    python -m playground room --replicas 4 --port 8080

Each replica is `streamlit run app.py` on 127.0.0.1 (ports from --first-port), every one pointed at the same
engine cache directory (and the models and weights links name, playground.base.blobs). HAProxy, from the
distribution's package, listens on --port:
- affinity: a browser's first response sets a cookie naming its replica; every later request (the page, Streamlit's
  websocket, an upload, the stage's route) carries it to the same one, where its session and stage seat live;
- health: each replica's /_stcore/health every second; two misses and it gets no new sessions;
- a lost replica: a request for it goes to a live one (`option redispatch`), where the page's websocket reconnects
  and its script runs again on the URL, which holds the configuration; the room starts the lost replica again.
Ctrl-C (or SIGTERM) stops the proxy and every replica.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from ..base.errors import PlaygroundError, ValidationError

ROOT = Path(__file__).resolve().parents[2]
COOKIE = "PGREPLICA"
CHECK_MS = 1000  # health-check interval; a replica is out after FALL misses
FALL, RISE = 2, 2
INSTALL = "HAProxy is not installed: `sudo apt-get install haproxy` (Debian, Ubuntu), then run this again"


class RoomError(PlaygroundError):
    pass


def max_connections() -> int:
    """What HAProxy may hold open: two descriptors a connection (browser and replica side) within the process's
    limit (a room of 200 holds ~400: a websocket and a request each, at most)."""
    import resource

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return max(256, min(10_000, (hard if hard != resource.RLIM_INFINITY else 20_000) // 2 - 64))


def haproxy_config(bind: str, port: int, replicas: list[tuple[str, int]]) -> str:
    """HAProxy's configuration for a room: `replicas` are (host, port) pairs, local or on other hosts."""
    servers = "\n".join(f"    server r{i} {host}:{p} check cookie r{i}" for i, (host, p) in enumerate(replicas))
    return f"""# Made by `python -m playground room`; README "A room of 200" says what each line is for.
global
    maxconn {max_connections()}

defaults
    mode http
    option http-server-close
    option redispatch          # a request whose replica is down goes to a live one
    retries 2
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    timeout tunnel 1h          # Streamlit's websocket lives as long as the page
    timeout http-request 10s

frontend room
    bind {bind}:{port}
    default_backend replicas

backend replicas
    balance leastconn          # a new browser goes to the replica with the fewest open connections (websockets)
    cookie {COOKIE} insert indirect nocache httponly
    option httpchk GET /_stcore/health
    http-check expect status 200
    default-server inter {CHECK_MS}ms fastinter {CHECK_MS // 2}ms fall {FALL} rise {RISE}
{servers}
"""


def haproxy_binary() -> str:
    found = shutil.which("haproxy") or next(
        (p for p in ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy") if os.access(p, os.X_OK)), None
    )
    if found is None:
        raise RoomError(INSTALL)
    return found


@dataclass
class Replica:
    port: int
    log: Path
    proc: subprocess.Popen | None = None

    def start(self, env: dict) -> None:
        from .launch import tuned_env

        cmd = [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.headless",
            "true",
            "--server.address",
            "127.0.0.1",
            "--server.port",
            str(self.port),
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
            "--global.developmentMode",
            "false",
        ]  # a Streamlit installed outside site-packages guesses otherwise
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                cmd, cwd=ROOT, env=tuned_env(env), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stcore/health", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def stop(self, sig=signal.SIGTERM) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)


@dataclass
class Room:
    """A running room (`run` or `started`): its replicas, its proxy and where they log."""

    port: int
    bind: str
    replicas: list[Replica]
    workdir: Path
    env: dict
    proxy: subprocess.Popen | None = None
    restart: bool = True
    events: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{'127.0.0.1' if self.bind in ('0.0.0.0', '*') else self.bind}:{self.port}"

    def supervise(self) -> None:
        """Start a replica that exited again (the proxy sends no one to it until it answers)."""
        for r in self.replicas:
            if self.restart and not r.alive():
                self.events.append(f"replica on port {r.port} exited ({r.proc.returncode}); starting it again")
                r.start(self.env)
        if self.proxy is not None and self.proxy.poll() is not None:
            raise RoomError(f"HAProxy exited ({self.proxy.returncode}); see {self.workdir / 'haproxy.log'}")

    def stop(self) -> None:
        self.restart = False
        if self.proxy is not None and self.proxy.poll() is None:
            self.proxy.terminate()
        for r in self.replicas:
            r.stop()
        deadline = time.monotonic() + 10
        for p in [self.proxy] + [r.proc for r in self.replicas]:
            if p is None:
                continue
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL) if p is not self.proxy else p.kill()
                p.wait()


def free_ports(n: int, first: int | None = None) -> list[int]:
    import socket

    ports, candidate = [], first
    while len(ports) < n:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", candidate or 0))
            except OSError:
                if first is None or candidate >= 65535:
                    raise RoomError(f"no {n} free local ports from {first} up to 65535") from None
                candidate += 1
                continue
            ports.append(s.getsockname()[1])
        candidate = ports[-1] + 1 if first is not None else None
    return ports


def check_options(
    replicas: int, port: int, bind: str, first_port: int | None, cache_dir: str | None, public_url: str | None
) -> None:
    """The options of a room, checked before anything starts: ValidationError naming the option and its rule
    (the command's exit 2, nothing left running)."""
    import errno
    import socket

    from .server import PUBLIC_URL

    def fail(option: str, rule: str, value) -> ValidationError:
        return ValidationError("room", option, rule, value)

    if public_url is not None and not PUBLIC_URL.fullmatch(public_url.strip().rstrip("/")):
        raise fail("--public-url", "must be an http:// or https:// address (no query or fragment)", public_url)
    if first_port is not None and not 1 <= first_port <= 65536 - replicas:
        raise fail(
            "--first-port",
            f"must leave room for {replicas} replica ports: between 1 and {65536 - replicas}",
            first_port,
        )
    cache = Path(cache_dir) if cache_dir else None
    if cache is not None:
        found = next((a for a in (cache, *cache.parents) if a.exists()), None)
        if cache.exists() and not cache.is_dir():
            raise fail("--cache", "is a file; it must name a directory (made if missing)", cache_dir)
        if found is not None and not found.is_dir():
            raise fail("--cache", f"{found} is a file, so no directory can be made under it", cache_dir)
        if found is not None and not os.access(found, os.W_OK | os.X_OK):
            raise fail("--cache", f"{found} is not writable by this user", cache_dir)
    try:
        family = socket.getaddrinfo(bind, port, type=socket.SOCK_STREAM)[0][0]
    except (socket.gaierror, UnicodeError, ValueError):
        raise fail("--bind", "must be an address of this machine (0.0.0.0: every interface)", bind) from None
    with socket.socket(family, socket.SOCK_STREAM) as s:  # the proxy's address, tried before it is asked to listen
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((bind, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise fail("--port", f"is in use on {bind}: pick a free port", port) from None
            if exc.errno == errno.EACCES:
                raise fail(
                    "--port", "needs privileges this user lacks (ports below 1024): pick a higher one", port
                ) from None
            raise fail("--bind", f"must be an address of this machine ({exc.strerror})", bind) from None


@contextlib.contextmanager
def started(
    replicas: int,
    port: int,
    bind: str = "127.0.0.1",
    first_port: int | None = None,
    cache_dir: str | None = None,
    public_url: str | None = None,
    timeout: float = 90.0,
    env: dict | None = None,
):
    """Start a room and yield it once every replica answers and the proxy listens; stop everything after."""
    check_options(replicas, port, bind, first_port, cache_dir, public_url)
    binary = haproxy_binary()
    workdir = Path(tempfile.mkdtemp(prefix="playground-room-"))
    env = {**os.environ, **(env or {})}
    env["PLAYGROUND_ENGINE_CACHE"] = str(Path(cache_dir or env.get("PLAYGROUND_ENGINE_CACHE") or ROOT / "engine_cache"))
    if public_url:
        env["PLAYGROUND_PUBLIC_URL"] = public_url
    room = Room(
        port, bind, [Replica(p, workdir / f"replica-{p}.log") for p in free_ports(replicas, first_port)], workdir, env
    )
    config = workdir / "haproxy.cfg"
    config.write_text(haproxy_config(bind, port, [("127.0.0.1", r.port) for r in room.replicas]))
    check = subprocess.run([binary, "-c", "-q", "-f", str(config)], capture_output=True, text=True)
    if check.returncode != 0:
        raise RoomError(f"HAProxy refused the configuration {config}: {check.stderr.strip()[:500]}")
    try:
        for r in room.replicas:
            r.start(env)
        deadline = time.monotonic() + timeout
        while not all(r.healthy() for r in room.replicas):
            dead = [r for r in room.replicas if not r.alive()]
            if dead:
                said = dead[0].log.read_text(errors="replace").strip().splitlines()[-5:]
                raise RoomError(f"a replica exited while starting ({dead[0].log}): " + " / ".join(said))
            if time.monotonic() > deadline:
                raise RoomError(f"the replicas did not answer within {timeout:.0f} s: see {workdir}")
            time.sleep(0.3)
        with open(workdir / "haproxy.log", "ab") as out:
            room.proxy = subprocess.Popen([binary, "-db", "-f", str(config)], stdout=out, stderr=subprocess.STDOUT)
        while True:  # the proxy listens, and a replica answers through it
            try:
                with urllib.request.urlopen(room.url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if room.proxy.poll() is not None or time.monotonic() > deadline:
                raise RoomError(f"HAProxy did not start on {bind}:{port}: see {workdir / 'haproxy.log'}")
            time.sleep(0.2)
        yield room
    finally:
        room.stop()


def run(
    replicas: int, port: int, bind: str, first_port: int | None, cache_dir: str | None, public_url: str | None
) -> int:
    """The `room` command: start, say where, supervise until Ctrl-C or SIGTERM."""

    def stop(*_):
        raise KeyboardInterrupt

    for sig in (signal.SIGINT, signal.SIGTERM):  # SIGINT too: a shell's background job starts with it ignored
        signal.signal(sig, stop)
    with started(replicas, port, bind, first_port, cache_dir, public_url) as room:
        print(
            f"room: {len(room.replicas)} replicas (ports {', '.join(str(r.port) for r in room.replicas)}) behind "
            f"HAProxy on {room.url}; engine cache {room.env['PLAYGROUND_ENGINE_CACHE']}; logs in {room.workdir}. "
            "Ctrl-C stops them all.",
            flush=True,
        )
        try:
            while True:
                time.sleep(1)
                room.supervise()
                while room.events:
                    print("room:", room.events.pop(0), flush=True)
        except KeyboardInterrupt:
            print("room: stopping", flush=True)
    return 0
