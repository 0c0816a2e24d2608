// trace.js: a cell's trace composed from the layers' read maps, back to the input and down to the output.
import assert from "node:assert/strict";
import { test } from "node:test";
import { LIMIT, back, cellsOf, forward, parsePick } from "../../playground/stage/trace.js";

// input 1×1×1×6 → convolution (1×3 window, output 1×1×1×4) → activation (pointwise) → elementwise SUM of the
// activation and the convolution: the maps chainview.py sends for such a chain
const window = (w) => ({ x: [0, 1, 2].map((d) => [0, 0, 0, w + d]) });
const layers = [
  { key: "convolution", sources: ["input"] },
  { key: "activation", sources: ["convolution"] },
  { key: "elementwise", sources: ["activation", "convolution"] },
];
const trace = {
  convolution: { sources: { x: "input" }, reads: Object.fromEntries([0, 1, 2, 3].map((w) => [`0,0,0,${w}`, window(w)])) },
  activation: { sources: { x: "convolution" }, same: true },
  elementwise: { sources: { a: "activation", b: "convolution" },
                 reads: Object.fromEntries([0, 1, 2, 3].map((w) => [`0,0,0,${w}`, { a: [[0, 0, 0, w]], b: [[0, 0, 0, w]] }])) },
};
const shapes = { input: [1, 1, 1, 6], convolution: [1, 1, 1, 4], activation: [1, 1, 1, 4], elementwise: [1, 1, 1, 4] };
const sorted = (set) => [...set].sort();

test("the output's cell reads its cell in both operands, and through the convolution its window of the input", () => {
  const { cells, stopped } = back(layers, trace, shapes, "elementwise", [0, 0, 0, 2]);
  assert.deepEqual(stopped, []);
  assert.deepEqual(sorted(cells.activation), ["0,0,0,2"]);
  assert.deepEqual(sorted(cells.convolution), ["0,0,0,2"]);
  assert.deepEqual(sorted(cells.input), ["0,0,0,2", "0,0,0,3", "0,0,0,4"]);
});

test("an input cell feeds the convolution cells whose windows hold it, and everything downstream of them", () => {
  const { cells } = forward(layers, trace, "input", [0, 0, 0, 2]);
  assert.deepEqual(sorted(cells.convolution), ["0,0,0,0", "0,0,0,1", "0,0,0,2"]);
  assert.deepEqual(sorted(cells.activation), sorted(cells.convolution));
  assert.deepEqual(sorted(cells.elementwise), sorted(cells.convolution));
  assert.equal(forward(layers, trace, "elementwise", [0, 0, 0, 1]).cells.activation, undefined); // nothing reads it
});

test("padding read outside a tensor is no cell of it", () => {
  const padded = { ...trace, convolution: { sources: { x: "input" }, reads: { "0,0,0,0": { x: [[0, 0, 0, -1], [0, 0, 0, 0], [0, 0, 0, 1]] } } } };
  assert.deepEqual(sorted(back(layers, padded, shapes, "convolution", [0, 0, 0, 0]).cells.input), ["0,0,0,0", "0,0,0,1"]);
});

test("a layer sent without its map stops the trace there and says why", () => {
  const cut = { ...trace, convolution: { sources: { x: "input" }, stopped: "convolution has too many cells" } };
  const { cells, stopped } = back(layers, cut, shapes, "elementwise", [0, 0, 0, 1]);
  assert.deepEqual(stopped, ["convolution has too many cells"]);
  assert.equal(cells.input, undefined);
  assert.deepEqual(forward(layers, cut, "input", [0, 0, 0, 1]).stopped, ["convolution has too many cells"]);
});

test("a region is every cell between its corners in row-major order; a trace keeps at most LIMIT cells a tensor", () => {
  assert.deepEqual(cellsOf({ lo: [0, 1, 0], hi: [0, 2, 1] }), [[0, 1, 0], [0, 1, 1], [0, 2, 0], [0, 2, 1]]);
  const big = { sources: { x: "input" }, reads: { "0,0": { x: { lo: [0, 0], hi: [199, 199] } } } };
  const r = back([{ key: "reduce", sources: ["input"] }], { reduce: big }, { input: [200, 200], reduce: [1, 1] }, "reduce", [0, 0]);
  assert.equal(r.cells.input.size, LIMIT);
  assert.match(r.stopped[0], /more than 20000 cells/);
});

test("a link's picked cell is KEY:INDEX, anything else is none", () => {
  assert.deepEqual(parsePick("activation:0,0,1,2"), { key: "activation", index: [0, 0, 1, 2] });
  assert.deepEqual(parsePick("convolution2:3"), { key: "convolution2", index: [3] });
  for (const bad of [null, "", "activation", "activation:", "activation:1,-2", "x:1,2,3,4,5,6", "a b:1", "<b>:1"]) assert.equal(parsePick(bad), null, bad);
});
