// store.js: the tensors the tab holds by id and the answers it has drawn.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Answers, MAX_HELD, Tensors, decode } from "../../playground/stage/store.js";

const b64 = (values) => Buffer.from(new Float32Array(values).buffer).toString("base64");
const figure = (id, values) => ({ tensor: { shape: [values.length], id, data: b64(values) } });
const named = (id) => ({ tensor: { shape: [1], id } }); // an answer naming a tensor the tab said it holds

test("a tensor's base64 float32 values decode to its shape and values", () => {
  const t = decode({ shape: [1, 3], data: b64([1.5, -2, Infinity]) });
  assert.deepEqual(t.shape, [1, 3]);
  assert.deepEqual([...t.values], [1.5, -2, Infinity]);
});

test("a tensor is decoded once and named again by its id", () => {
  const tensors = new Tensors();
  const first = { figures: [figure("in", [1, 2])] };
  assert.ok(tensors.resolve(first));
  assert.equal(first.figures[0].tensor.data, undefined); // the text is let go once decoded
  const second = { figures: [named("in")] };
  assert.ok(tensors.resolve(second));
  assert.equal(second.figures[0].t, first.figures[0].t);
  assert.deepEqual(tensors.held(), ["in"]);
});

test("an answer naming a tensor the tab let go cannot be drawn", () => {
  const tensors = new Tensors(8); // two float32 values
  tensors.resolve({ figures: [figure("a", [1, 2])] });
  tensors.resolve({ figures: [figure("b", [3, 4])] }); // over the limit: the least recently used goes
  assert.deepEqual(tensors.held(), ["b"]);
  assert.equal(tensors.resolve({ figures: [named("a")] }), false);
});

test("a request names at most MAX_HELD tensors, the most recently used", () => {
  const tensors = new Tensors();
  for (let i = 0; i < MAX_HELD + 5; i++) tensors.resolve({ figures: [figure(`t${i}`, [i])] });
  const held = tensors.held();
  assert.equal(held.length, MAX_HELD);
  assert.equal(held[held.length - 1], `t${MAX_HELD + 4}`);
});

test("a full answer replaces a quick one, never the other way round; the oldest go past the limit", () => {
  const t = (n) => ({ values: new Float32Array(n) });
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
