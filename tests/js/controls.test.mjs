// controls.js, its pure parts: snapping to the values a control offers, its note, its keys, a value slider's range.
import assert from "node:assert/strict";
import { test } from "node:test";
import { controlKeys, note, permutationText, permutations, snap, valueRange } from "../../playground/stage/controls.js";

test("a control that offers every value does not snap", () => {
  assert.equal(snap(3, undefined, 2, true), 3);
  assert.equal(snap(3, [], 2, false), 3);
});

test("a key press goes to the next offered value the way it moved", () => {
  assert.equal(snap(2, [1, 2], 1, true), 2); // C = 4, two output maps: ArrowRight from 1
  assert.equal(snap(3, [1, 2, 4], 2, true), 4); // the nearest (2 or 4, a tie) would stay: one step always moves
  assert.equal(snap(3, [1, 2, 8], 2, true), 8); // the nearest would be 2
  assert.equal(snap(7, [1, 2, 8], 8, true), 2);
});

test("Home and End go to the ends of what is offered", () => {
  assert.equal(snap(32, [1, 2, 4], 1, true), 4); // End past the last offered
  assert.equal(snap(1, [1, 2, 4], 4, true), 1);
  assert.equal(snap(0, [2, 4], 4, true), 2); // Home under the first offered
});

test("the pointer lands on the nearest offered value, a tie going the way it moved", () => {
  assert.equal(snap(5, [1, 2, 8], 2, false), 8);
  assert.equal(snap(4, [1, 2, 8], 8, false), 2);
  assert.equal(snap(3, [2, 4], 2, false), 4);
  assert.equal(snap(3, [2, 4], 4, false), 2);
});

test("a value offered alone is where the control stays, whichever way it is pushed", () => {
  for (const [v, from, stepwise] of [[2, 1, true], [0, 1, true], [9, 1, false]]) assert.equal(snap(v, [1], from, stepwise), 1);
});

test("snapping reads the offered values it is given: the latest answer's, not the page's first", () => {
  const first = { offered: [1] }, latest = { offered: [1, 2] }; // C = 4 after num_output_maps 1 -> 2
  assert.equal(snap(2, first.offered, 1, true), 1);
  assert.equal(snap(2, latest.offered, 1, true), 2);
});

test("the note says why a control is unused, what it offers, or that it offers one value", () => {
  assert.equal(note({ used: false, why_unused: "used when type is CLIP" }), "used when type is CLIP");
  assert.equal(note({ used: true, offered: [1, 2, 4] }), "offers 1, 2, 4");
  assert.equal(note({ used: true, offered: [1] }), "only 1 fits this configuration");
  assert.equal(note({ used: true, offered: [1, 2], names: ["C", "H"] }), ""); // a list of names says it itself
  assert.equal(note({ used: true }), "");
});

test("a control's keys: its own, or an optional switch and one per axis", () => {
  assert.deepEqual(controlKeys({ key: "c.stride" }), ["c.stride"]);
  assert.deepEqual(controlKeys({ key: "c.pad", axes: ["h", "w"], keys: { h: "c.pad.h", w: "c.pad.w" } }), ["c.pad.h", "c.pad.w"]);
  assert.deepEqual(controlKeys({ key: "r.s", set_key: "r.s.set", axes: ["h"], keys: { h: "r.s.h" } }), ["r.s.set", "r.s.h"]);
});

test("a per-value slider spans its declared slide, else twice the value either way within the bounds", () => {
  assert.deepEqual(valueRange({ slide: [-3, 3] }, 100), [-3, 3]);
  assert.deepEqual(valueRange({}, 2), [-4, 4]);
  assert.deepEqual(valueRange({}, 0.1), [-1, 1]);
  assert.deepEqual(valueRange({ min: 0, max: 2 }, 5), [0, 2]);
});

test("a permutation's control offers every whole order, the identity first, none half-made", () => {
  const four = permutations(4);
  assert.equal(four.length, 24);
  assert.deepEqual(four[0], [0, 1, 2, 3]);
  for (const p of four) assert.deepEqual([...p].sort(), [0, 1, 2, 3]); // each axis exactly once
  assert.equal(new Set(four.map(String)).size, 24);
  assert.ok(four.some((p) => String(p) === "0,2,3,1")); // NCHW → NHWC is one pick
  assert.equal(permutations(5).length, 120);
  assert.equal(permutationText([0, 2, 3, 1], ["n", "c", "h", "w"]), "0, 2, 3, 1  (n h w c)");
  assert.equal(permutationText([1, 0], undefined), "1, 0");
});
