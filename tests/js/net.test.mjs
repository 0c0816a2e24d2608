// net.js: one request in flight, the latest waiting, and the one path that asks again, against a fake server.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BUSY_RETRY_MS, LOST_MS, LOST_RETRY_MS, Requests, readReply } from "../../playground/stage/net.js";
import { FRAME_TYPE } from "../../playground/stage/store.js";

// A server whose replies the test gives, one pending request at a time, and a timer the test runs.
function fake() {
  const sent = [], pending = [], timers = [], replies = [], idles = [];
  let clock = 0;
  const requests = new Requests({
    post: (message) => new Promise((resolve, reject) => { sent.push(message); pending.push({ resolve, reject }); }),
    onReply: (job, status, reply) => { replies.push([job.seq, status, reply]); return Boolean(reply.again); },
    onIdle: (job) => idles.push(job.seq),
    timer: (fn, ms) => timers.push({ fn, ms }),
    now: () => clock,
  });
  const answer = async (status, reply = {}) => { pending.shift().resolve({ status, reply }); await flush(); };
  const fail = async (e) => { pending.shift().reject(e); await flush(); };
  const tick = async () => { const t = timers.shift(); t.fn(); await flush(); return t.ms; };
  return { requests, sent, pending, timers, replies, idles, answer, fail, tick, advance: (ms) => { clock += ms; } };
}
const flush = () => new Promise((r) => setImmediate(r));

test("one request in flight; the ones asked meanwhile are coalesced, the latest sent next", async () => {
  const f = fake();
  f.requests.ask({ v: 1 }, 1);
  f.requests.ask({ v: 2 }, 2);
  f.requests.ask({ v: 3 }, 3);
  assert.deepEqual(f.sent, [{ v: 1 }]);
  await f.answer(200, { answer: 1 });
  assert.deepEqual(f.sent, [{ v: 1 }, { v: 3 }]);
  assert.deepEqual(f.idles, []); // not idle while the latest is out
  await f.answer(200, { answer: 3 });
  assert.deepEqual(f.replies.map((r) => r[0]), [1, 3]); // every answer is handed on as it comes
  assert.deepEqual(f.idles, [3]);
  assert.ok(f.requests.idle);
});

test("429 (this page's previous still in flight on the server): the same asked again after a moment", async () => {
  const f = fake();
  f.requests.ask({ v: 1 }, 1);
  await f.answer(429, { error: "in flight" });
  assert.deepEqual(f.replies, []); // not shown as a problem
  assert.ok(!f.requests.idle);
  assert.equal(await f.tick(), BUSY_RETRY_MS);
  assert.deepEqual(f.sent, [{ v: 1 }, { v: 1 }]);
});

test("a retry sends the latest where a newer one was asked for while it waited", async () => {
  const f = fake();
  f.requests.ask({ v: 1 }, 1);
  await f.answer(429);
  f.requests.ask({ v: 2 }, 2); // held: nothing goes out before the retry's moment
  assert.equal(f.sent.length, 1);
  await f.tick();
  assert.deepEqual(f.sent, [{ v: 1 }, { v: 2 }]);
});

test("a lost server is asked again for LOST_MS, then the failure is handed on", async () => {
  const f = fake();
  f.requests.ask({ v: 1 }, 1);
  await f.fail(new Error("connection refused")); // no server: status 0
  assert.equal(await f.tick(), LOST_RETRY_MS);
  await f.answer(502);
  f.advance(LOST_MS + 1);
  await f.tick();
  await f.answer(401, { error: "no open page has this token" });
  assert.deepEqual(f.replies, [[1, 401, { error: "no open page has this token" }]]);
  assert.deepEqual(f.idles, [1]);
});

test("an answer after a lost spell starts the next spell afresh", async () => {
  const f = fake();
  f.requests.ask({ v: 1 }, 1);
  await f.answer(503);
  f.advance(LOST_MS - 1);
  await f.tick();
  await f.answer(200, { answer: 1 });
  f.requests.ask({ v: 2 }, 2);
  f.advance(5);
  await f.answer(503); // over LOST_MS since the first spell began, but a new spell
  assert.equal(f.timers.length, 1);
});

test("a reply its receiver cannot use (a tensor let go) is asked again at once, behind nothing", async () => {
  const f = fake();
  f.requests.ask({ v: 1 }, 1);
  await f.answer(200, { again: true });
  assert.deepEqual(f.sent, [{ v: 1 }, { v: 1 }]);
  await f.answer(200, { answer: 1 });
  assert.deepEqual(f.idles, [1]);
});

test("a background request is never retried and gives way to the user's", async () => {
  const f = fake();
  f.requests.ask({ v: "ahead" }, 0, true);
  f.requests.ask({ v: 2 }, 2); // waits behind it
  await f.answer(429);
  assert.equal(f.timers.length, 0);
  assert.deepEqual(f.sent, [{ v: "ahead" }, { v: 2 }]);
});

test("a stopped stage hands nothing on", async () => {
  const f = fake();
  f.requests.ask({ v: 1 }, 1);
  f.requests.stop();
  await f.answer(200, { answer: 1 });
  assert.deepEqual([f.replies, f.idles], [[], []]);
  f.requests.ask({ v: 2 }, 2);
  assert.equal(f.sent.length, 1);
});

test("a reply is read as the route sent it: an answer's frame (its planes ride along) or JSON", async () => {
  const text = JSON.stringify({ answer: { figures: [] } }), json = Buffer.from(text + " ".repeat((4 - (text.length % 4)) % 4));
  const n = Buffer.alloc(4); n.writeUInt32LE(json.length);
  const body = Buffer.concat([n, json, Buffer.from(new Float32Array([7]).buffer)]);
  const framed = await readReply(new Response(body, { headers: { "Content-Type": FRAME_TYPE } }));
  assert.deepEqual(framed.answer.figures, []);
  assert.equal(new Float32Array(framed.answer.__src.buffer, framed.answer.__src.base, 1)[0], 7);
  const problem = await readReply(new Response(JSON.stringify({ problem: { message: "x" } }), { headers: { "Content-Type": "application/json" } }));
  assert.equal(problem.problem.message, "x");
  assert.deepEqual(await readReply(new Response("<html>", { status: 502 })), { error: "HTTP 502" });
});
