// The stage's requests to its route: one in flight per page, the latest waiting in one slot (a slider's sweep is
// coalesced: every answer is drawn as it comes, the released value's last), and one path that asks again: `again`,
// for the server's "one in flight" (429), a lost server (a room's replica gone, a restart) and an answer that names
// a tensor the tab has let go. No DOM: the transport (`post`) and the timer are given (tests/js/net.test.mjs).

import { FRAME_TYPE, readFrame } from "./store.js";

// A request the page's server could not answer as itself: no server (0), its seat unknown there (401: another replica
// or a restart), the proxy with no replica (502-504). Asked again for up to LOST_MS before it is shown as a problem.
export const LOST = new Set([0, 401, 502, 503, 504]), LOST_MS = 10000;
export const LOST_RETRY_MS = 500, BUSY_RETRY_MS = 100;

// A JSON POST to one of the stage's routes with the seat's token (the route answers only a live page's).
export function postJson(route, token, body) {
  return fetch(route, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-Stage-Token": token },
    body: JSON.stringify(body),
  });
}

// A reply of the stage's routes: an answer's frame (binary: its JSON, then the planes' values, which ride along as
// `__src` for store.js), else JSON (a problem, an error; a body that is neither: its status).
export async function readReply(r) {
  if ((r.headers.get("Content-Type") || "").startsWith(FRAME_TYPE)) {
    const { head, src } = readFrame(await r.arrayBuffer());
    head.__src = src;
    if (head.answer) head.answer.__src = src;
    return head;
  }
  return r.json().catch(() => ({ error: `HTTP ${r.status}` }));
}

// `post` for Requests: the evaluation route's reply as { status, reply, serverMs }.
export function evaluator(route, token) {
  return async (message) => {
    const r = await postJson(route, token, message);
    const serverMs = ((r.headers.get("Server-Timing") || "").match(/dur=([\d.]+)/) || [])[1] || "";
    return { status: r.status, reply: await readReply(r), serverMs };
  };
}

export class Requests {
  // post(message) -> Promise<{ status, reply }>; onSend(job) as a job is sent; onReply(job, status, reply) for every
  // reply that is not asked again, returning true where the job must be asked again at once (its answer named a
  // tensor let go); onIdle(job, status, reply) once the last reply is in and nothing waits. A job: { message, seq,
  // background } (background: asked for ahead while the hand rests, never retried).
  constructor({ post, onSend = () => {}, onReply = () => false, onIdle = () => {}, timer = setTimeout, now = () => performance.now() }) {
    Object.assign(this, { post, onSend, onReply, onIdle, timer, now });
    this.inflight = null; this.waiting = null; this.held = false; this.lostSince = null; this.stopped = false;
  }

  // Sent now where nothing is in flight, else it waits, in place of any waiting one: the latest wins.
  ask(message, seq, background = false) {
    this.waiting = { message, seq, background };
    this.pump();
  }

  get idle() { return !this.inflight && !this.waiting && !this.held; }

  stop() { this.stopped = true; }

  async pump() {
    if (this.stopped || this.inflight || this.held || !this.waiting) return;
    const job = this.inflight = this.waiting;
    this.waiting = null;
    this.onSend(job);
    let status, reply;
    try { ({ status, reply } = await this.post(job.message)); }
    catch (e) { status = 0; reply = { error: `the server did not answer (${e.message})` }; }
    if (this.stopped) return; // the page started its stage afresh meanwhile
    this.inflight = null;
    if (!job.background) {
      if (status === 200) this.lostSince = null;
      // The page's server is gone: the page reconnects to another, which starts this stage afresh on the URL's
      // configuration. Until then the drawing stays and the latest is asked again.
      const lost = LOST.has(status) && (this.lostSince ??= this.now()) > this.now() - LOST_MS;
      if (lost || status === 429) { this.again(job, lost ? LOST_RETRY_MS : BUSY_RETRY_MS); return; }
    }
    if (this.onReply(job, status, reply)) { this.again(job, 0); return; }
    if (this.waiting) { this.pump(); return; }
    this.onIdle(job, status, reply);
  }

  // The one way a request is asked again: after `ms` (none: at once), unless a later one waits, which goes instead.
  again(job, ms) {
    this.waiting ||= job;
    if (!ms) { this.pump(); return; }
    this.held = true;
    this.timer(() => { this.held = false; this.pump(); }, ms);
  }
}
