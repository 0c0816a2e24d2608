// store.js: the route's frames, the planes the tab holds by tensor id and the answers it has drawn.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Answers, MAX_HELD, Tensors, add, fromBase64, has, planeSize, readFrame, value } from "../../playground/stage/store.js";

// A frame as protocol.frame writes it: uint32 n, n bytes of JSON padded with spaces to 4, the planes' float32 values.
function frame(head, values) {
  let json = Buffer.from(JSON.stringify(head));
  json = Buffer.concat([json, Buffer.alloc((4 - (json.length % 4)) % 4, " ")]);
  const n = Buffer.alloc(4); n.writeUInt32LE(json.length);
  const bytes = Buffer.concat([n, json, Buffer.from(new Float32Array(values).buffer)]);
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
}
const stats = { min: 0, max: 9, nan: 0, inf: 0 };
// the grid protocol.grid sends with a tensor of `shape` (its last two axes a plane's rows and columns)
const grid = (shape) => ({ planes: shape.slice(0, -2).map((_, k) => k), rows: shape.length >= 2 ? shape.length - 2 : null, cols: shape.length ? shape.length - 1 : null });
// a figure of `shape` whose planes `sent` (plane numbers) lie one after another in the blob, its page [first, count]
const entry = (id, shape, sent, page) => ({ tensor: { id, shape, grid: grid(shape), stats, page, sent: sent.map((p, i) => [p, i * planeSize({ shape, grid: grid(shape) })]) } });

test("a frame reads back to its JSON and its planes, each at its offset", () => {
  const { head, src } = readFrame(frame({ answer: { figures: [entry("a", [1, 3, 1, 2], [1, 2], [1, 2])] } }, [1, 2, 3, 4]));
  const t = add({ shape: [1, 3, 1, 2], grid: grid([1, 3, 1, 2]), planes: new Map() }, head.answer.figures[0].tensor, src);
  assert.deepEqual([...t.planes.keys()], [1, 2]);
  assert.deepEqual([...t.planes.get(2)], [3, 4]);
  assert.equal(value(t, 3), 2); // plane 1, cell 1
  assert.equal(value(t, 0), undefined); // plane 0: not held
  assert.ok(has(t, 1, 2) && !has(t, 0, 2));
});

test("an inline answer's base64 blob reads as the frame's bytes", () => {
  const src = fromBase64(Buffer.from(new Float32Array([1.5, -2, Infinity]).buffer).toString("base64"));
  const t = add({ shape: [1, 3], grid: grid([1, 3]), planes: new Map() }, { shape: [1, 3], grid: grid([1, 3]), sent: [[0, 0]] }, src);
  assert.deepEqual([...t.planes.get(0)], [1.5, -2, Infinity]);
});

test("planes are held per tensor id and named again plane by plane", () => {
  const tensors = new Tensors();
  const first = { figures: [entry("in", [1, 6, 1, 1], [0, 1, 2, 3], [0, 4]).tensor].map((tensor) => ({ tensor })) };
  first.__src = readFrame(frame(first, [0, 1, 2, 3])).src;
  assert.ok(tensors.resolve(first));
  assert.deepEqual(tensors.held(), ["in.0", "in.1", "in.2", "in.3"]);
  const second = { figures: [{ tensor: { ...entry("in", [1, 6, 1, 1], [], [0, 4]).tensor } }] }; // all four held
  assert.ok(tensors.resolve(second));
  assert.equal(second.figures[0].t, first.figures[0].t);
  // a page turned: planes 4 and 5 come for the same tensor, the ones held stay
  const turned = { figures: [{ tensor: entry("in", [1, 6, 1, 1], [4, 5], [2, 4]).tensor }] };
  turned.figures[0].tensor.page = [2, 4];
  turned.__src = readFrame(frame(turned, [4, 5])).src;
  assert.ok(tensors.resolve(turned));
  assert.deepEqual([...turned.figures[0].t.planes.keys()].sort(), [0, 1, 2, 3, 4, 5]);
  assert.equal(value(turned.figures[0].t, 5), 5);
});

test("an answer whose page names planes the tab let go cannot be drawn", () => {
  const tensors = new Tensors(8); // two float32 values
  const one = (id, v) => { const a = { figures: [entry(id, [1, 2], [0], [0, 1])] }; a.__src = readFrame(frame(a, v)).src; return a; };
  assert.ok(tensors.resolve(one("a", [1, 2])));
  assert.ok(tensors.resolve(one("b", [3, 4]))); // over the limit: the least recently used goes
  assert.deepEqual(tensors.held(), ["b.0"]);
  assert.equal(tensors.resolve({ figures: [entry("a", [1, 2], [], [0, 1])] }), false);
});

test("a request names at most MAX_HELD planes, the most recently used tensors'", () => {
  const tensors = new Tensors();
  for (let i = 0; i < MAX_HELD + 5; i++) {
    const a = { figures: [entry(`t${i}`, [1], [0], [0, 1])] };
    a.__src = readFrame(frame(a, [i])).src;
    tensors.resolve(a);
  }
  const held = tensors.held();
  assert.equal(held.length, MAX_HELD);
  assert.equal(held[held.length - 1], `t${MAX_HELD + 4}.0`);
});

test("a full answer replaces a quick one, never the other way round; the oldest go past the limit", () => {
  const t = (n) => ({ planes: new Map([[0, new Float32Array(n)]]) });
  const answer = (quick, n = 1) => ({ __quick: quick, figures: [{ t: t(n) }] });
  const answers = new Answers(3 * 4100);
  const quick = answer(true), full = answer(false);
  answers.remember("k", quick);
  answers.remember("k", full);
  assert.equal(answers.get("k"), full);
  answers.remember("k", answer(true));
  assert.equal(answers.get("k"), full);
  answers.remember("k2", answer(false));
  answers.remember("k3", answer(false, 1000)); // 4000 bytes more: the first key goes
  assert.ok(!answers.has("k") && answers.has("k2") && answers.has("k3"));
});

test("an answer whose follow-up never landed is replaced by the newer one; a followed-up one stays", () => {
  const answer = (finish) => ({ finish, figures: [{ t: { planes: new Map([[0, new Float32Array(1)]]) } }] });
  const answers = new Answers();
  const pending = answer(true), again = answer(true);
  answers.remember("k", pending);
  answers.remember("k", again); // the page asked once more: its follow-up is the one that will land
  assert.equal(answers.get("k"), again);
  again.finish = false; // landed: the windows and the badge are in it
  answers.remember("k", answer(true));
  assert.equal(answers.get("k"), again);
});
