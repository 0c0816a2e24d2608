"""The floor under a key press's answer: a trivial page, served by a tiny server of the bench's own (the standard
library's, Nagle's algorithm off as the app's), that answers a range input's key press the way the stage does, less
our work. Its `.pg-stage` element counts answers in `data-drawn`, so bench_browser measures it exactly as it measures
the stage. `?way=` picks how the answer waits:

  fetch     a round trip to its own server (a small JSON body posted, a small body back, read as bytes): the stage's
            new configuration with nothing of ours in it
  timeout   a setTimeout(0) alone (Chromium runs a task queued in a key's handler after the next frame)
  now       drawn in the key's handler itself
"""

from __future__ import annotations

import contextlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FLOOR_WAYS = {
    "fetch": "floor: trivial page, round trip",
    "timeout": "floor: trivial page, setTimeout(0)",
    "now": "floor: trivial page, drawn at once",
}
# The request's path is the stage's, so that bench_browser's breakdown finds its Resource Timing alike.
PAGE = b"""<!doctype html><meta charset="utf-8"><title>floor</title>
<div class="pg-stage" data-drawn="0"><input type="range" data-param="floor" min="0" max="100" value="0">
<span>0</span></div>
<script>
const stage = document.querySelector('.pg-stage'), input = stage.querySelector('input');
const way = new URLSearchParams(location.search).get('way') || 'fetch';
const draw = (v) => { stage.querySelector('span').textContent = v; stage.dataset.drawn = Number(stage.dataset.drawn) + 1; };
input.addEventListener('input', async () => {
  const v = input.value;
  if (way === 'now') return draw(v);
  if (way === 'timeout') return setTimeout(() => draw(v), 0);
  const t = performance.now();
  const r = await fetch('/api/stage/evaluate', { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ params: { floor: v } }) });
  await r.arrayBuffer();
  stage.dataset.fetchMs = performance.now() - t;
  stage.dataset.drawMs = 0;
  draw(v);
});
</script>"""


class _Floor(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # kept alive, as the browser keeps the app's connection
    disable_nagle_algorithm = True

    def _send(self, body: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._send(PAGE, "text/html; charset=utf-8")

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._send(b'{"answer": 1}', "application/octet-stream")

    def log_message(self, *args) -> None:  # quiet
        pass


@contextlib.contextmanager
def serve_floor():
    """The floor's server on a free loopback port, in a thread of this process; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Floor)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
