// figures.js: an input figure of a model's node on its real input names where its tensor comes from.
import assert from "node:assert/strict";
import { test } from "node:test";
import { sourced } from "../../playground/stage/figures.js";

test("an input figure says its origin while the page gives one; other figures and pages keep their title", () => {
  const source = { node: "relu", inputs: [["input", "/block/LayerNorm's output, by ONNX Runtime"]] };
  assert.equal(sourced({ which: "input", title: "Input" }, source), "Input = /block/LayerNorm's output, by ONNX Runtime");
  assert.equal(sourced({ which: "output", title: "Output (reference)" }, source), "Output (reference)");
  assert.equal(sourced({ which: "input", title: "Input" }, { node: "relu" }), "Input"); // a pattern the user picked
  assert.equal(sourced({ which: "input", title: "Input" }, null), "Input"); // a layer page of its own
  assert.equal(sourced({ which: "__proto__", title: "Input" }, { inputs: [] }), "Input");
});
