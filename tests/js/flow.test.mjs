// flow.js: the chain's arrows and engine boxes, from the answer's `chain` and the figures' rectangles.
import assert from "node:assert/strict";
import { test } from "node:test";
import { LIFT, PAD, RISE, arcs, band, boxRects, boxesOf, edgesOf, labelLines, orderOf, runsOf, shownBoxes, verdict } from "../../playground/stage/flow.js";

// the residual starter as chainview.py sends it (engine as TensorRT-RTX 1.7 built it)
const residual = {
  layers: [
    { key: "convolution", layer: "convolution", sources: ["input"] },
    { key: "elementwise", layer: "elementwise", sources: ["convolution", "input"] },
    { key: "activation", layer: "activation", sources: ["elementwise"] },
  ],
  engine: [
    { name: "__myl_Move_myl0_0", kernel: "__myl_Move_0x9b", fuses: [], role: "data movement" },
    { name: "convolution_myl0_1", kernel: "convolution_myl0_1 (correlation)", fuses: ["convolution", "elementwise", "activation"], role: "compute" },
    { name: "__myl_Tran_myl0_2", kernel: "__myl_Tran_0xf8", fuses: [], role: "data movement" },
  ],
  status: "built", builder: "tensorrt_rtx 1.7.1.116",
};
// four figures of 100 × 80 px in a row, 20 px apart, their tops at 40
const row = (keys) => Object.fromEntries(keys.map((k, i) => [k, { x: i * 120, y: 40, w: 100, h: 80 }]));

test("an arrow from each source a layer reads: the residual's SUM reads the convolution and the input", () => {
  assert.deepEqual(edgesOf(residual), [
    { from: "input", to: "convolution" }, { from: "convolution", to: "elementwise" },
    { from: "input", to: "elementwise" }, { from: "elementwise", to: "activation" },
  ]);
  const twice = { layers: [{ key: "elementwise", layer: "elementwise", sources: ["input", "input"] }] };
  assert.deepEqual(edgesOf(twice), [{ from: "input", to: "elementwise" }]); // x + x: one arrow
});

test("only the engine layers that compute a chain layer are boxed; data movement is not", () => {
  assert.deepEqual(boxesOf(residual).map((b) => b.name), ["convolution_myl0_1"]);
  assert.deepEqual(boxesOf({ ...residual, engine: [] }), []);
});

test("one box around every figure its engine layer computes, none around the input", () => {
  const order = orderOf(residual), rects = row(order);
  const [box, ...more] = boxRects(boxesOf(residual), rects, order);
  assert.equal(more.length, 0);
  for (const k of ["convolution", "elementwise", "activation"]) {
    const r = rects[k];
    assert.ok(box.x <= r.x - PAD + 1e-9 && box.y <= r.y - PAD && box.x + box.w >= r.x + r.w + PAD && box.y + box.h >= r.y + r.h + PAD, k);
  }
  assert.ok(box.x > rects.input.x + rects.input.w, "the input stays outside");
});

test("Convolution → PReLU: two boxes side by side, neither around the other's figure", () => {
  const chain = { layers: [{ key: "convolution", sources: ["input"] }, { key: "prelu", sources: ["convolution"] }],
                  engine: [{ name: "c", kernel: "k1", fuses: ["convolution"] }, { name: "p", kernel: "k2", fuses: ["prelu"] }] };
  const order = orderOf(chain), rects = row(order), [c, p] = boxRects(boxesOf(chain), rects, order);
  assert.ok(c.x + c.w < rects.prelu.x && p.x > rects.convolution.x + rects.convolution.w);
});

test("a box whose chain layers are not neighbours is drawn in parts, and a box inside another's is nested", () => {
  assert.deepEqual(runsOf(["a", "c", "d"], ["input", "a", "b", "c", "d"]), [["a"], ["c", "d"]]);
  const order = ["input", "a", "b", "c"], rects = row(order);
  const drawn = boxRects([{ name: "x", kernel: "k", fuses: ["a", "c"] }, { name: "y", kernel: "k", fuses: ["a"] }], rects, order);
  assert.deepEqual(drawn.map((b) => [b.name, b.part, b.figures]), [["x", 0, ["a"]], ["x", 1, ["c"]], ["y", 0, ["a"]]]);
  assert.ok(drawn[2].x < drawn[0].x && drawn[2].w > drawn[0].w, "the second box around a is outside the first");
});

test("an arc that passes over figures rises higher, and the band over the row holds the highest", () => {
  const order = orderOf(residual), rects = row(order), drawn = arcs(edgesOf(residual), rects, order);
  const skip = drawn.find((a) => a.from === "input" && a.to === "elementwise");
  const next = drawn.find((a) => a.from === "input" && a.to === "convolution");
  assert.equal(next.top, 40 - LIFT);
  assert.equal(skip.top, 40 - LIFT - RISE);
  assert.ok(band(edgesOf(residual), order) >= LIFT + RISE);
  // the input's two arrows leave it at two points, the SUM's two arrive at two
  assert.notEqual(skip.d.split("C")[0], next.d.split("C")[0]);
  const into = drawn.filter((a) => a.to === "elementwise").map((a) => a.d.split(" ").at(-2));
  assert.equal(new Set(into).size, 2);
  // every arc ends on its reader's top, inside its width
  for (const a of drawn) {
    const [x, y] = a.d.split(" ").slice(-2).map(Number), r = rects[a.to];
    assert.ok(x > r.x && x < r.x + r.w && Math.abs(y - (r.y - 1)) < 1e-9, `${a.from}>${a.to}`);
  }
});

test("the verdict line names the builder, what fused, and waits while the engine builds", () => {
  const text = verdict(residual);
  assert.match(text, /tensorrt_rtx 1\.7\.1\.116/);
  assert.match(text, /fusions are not full TensorRT's/);
  assert.match(text, /convolution \+ elementwise \+ activation in one/);
  assert.match(text, /2 moving data/);
  assert.match(verdict({ ...residual, status: "pending", engine: [] }), /building/);
  assert.match(verdict({ ...residual, status: "not_built", engine: [] }), /No TensorRT/);
});

test("where the row wraps, a box is drawn in a part per line and an arrow to the next line leaves from under its source", () => {
  // input, convolution, elementwise on the first line; activation under the input
  const rects = { input: { x: 0, y: 40, w: 100, h: 80 }, convolution: { x: 120, y: 40, w: 100, h: 80 },
                  elementwise: { x: 240, y: 40, w: 100, h: 80 }, activation: { x: 0, y: 200, w: 100, h: 80 } };
  const order = orderOf(residual), drawn = boxRects(boxesOf(residual), rects, order);
  assert.deepEqual(drawn.map((b) => b.figures), [["convolution", "elementwise"], ["activation"]]);
  assert.ok(drawn[0].x > rects.input.x + rects.input.w, "the first line's part leaves the input out");
  const down = arcs(edgesOf(residual), rects, order).find((a) => a.to === "activation");
  const [x0, y0] = down.d.slice(1).split("C")[0].split(" ").map(Number);
  assert.ok(y0 > rects.elementwise.y + rects.elementwise.h && x0 > rects.elementwise.x, down.d);
});

test("a box nested around another's figure names its kernel a line lower, and the row keeps a line for each", () => {
  const order = ["input", "convolution", "scale"];
  const boxes = [{ name: "c", kernel: "k1", fuses: ["convolution"] }, { name: "p", kernel: "k2", fuses: ["convolution", "scale"] }];
  const drawn = boxRects(boxes, row(order), order);
  assert.deepEqual(drawn.map((b) => b.depth), [0, 1]);
  assert.equal(labelLines(boxes, order), 2);
  assert.equal(labelLines([boxes[0]], order), 1);
  assert.equal(labelLines([], order), 1);
});

test("while a new configuration's engine builds, the last engine's boxes stay, stale; another chain's do not", () => {
  const pending = { ...residual, status: "pending", engine: [] };
  assert.deepEqual(shownBoxes(pending, residual).boxes.map((b) => b.name), ["convolution_myl0_1"]);
  assert.equal(shownBoxes(pending, residual).stale, true);
  const other = { ...pending, layers: residual.layers.slice(0, 2) };
  assert.deepEqual(shownBoxes(other, residual), { boxes: [], stale: false });
  assert.deepEqual(shownBoxes(pending, undefined), { boxes: [], stale: false });
  assert.equal(shownBoxes(residual, undefined).stale, false);
});
