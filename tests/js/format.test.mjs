// format.js: the numbers and text the stage writes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { digits, esc, extent, markdown, markdownInline, precise, stats, summary } from "../../playground/stage/format.js";

const table = JSON.parse(readFileSync(new URL("../fixtures/spellings.json", import.meta.url), "utf8"));
const num = (v) => ({ NaN: NaN, Inf: Infinity, "-Inf": -Infinity, "-0": -0 })[v] ?? v;

test("digits spells as the server's numbers.digits does (one table)", () => {
  for (const [v, n, text] of table.digits) assert.equal(digits(num(v), n), text, `${v} at ${n}`);
});

test("a hovered value is spelled as the server's numbers.precise (one table)", () => {
  for (const [v, text] of table.precise) assert.equal(precise(num(v)), text, String(v));
  assert.equal(precise(Math.fround(0.1)), "0.1");
});

test("esc escapes every character that could open markup", () => {
  assert.equal(esc(`<img src=x onerror="a('b')">&`), "&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;");
  assert.equal(esc(null), "");
});

test("markdown makes paragraphs, lists, bold and code of escaped text", () => {
  assert.equal(markdownInline("**a** `b<c>`"), "<b>a</b> <code>b&lt;c&gt;</code>");
  assert.equal(markdown("one\n- x\n- y\ntwo"), "<p>one</p><ul><li>x</li><li>y</li></ul><p>two</p>");
  assert.equal(markdown("- last"), "<ul><li>last</li></ul>");
});

test("extent skips the non-finite and falls back to 0…1", () => {
  assert.deepEqual(extent([3, NaN, -2, Infinity]), [-2, 3]);
  assert.deepEqual(extent([NaN]), [0, 1]);
});

test("stats are the whole tensor's, the server's: NaN and Inf counted, 0…1 where nothing is finite", () => {
  const t = { shape: [1, 8, 2, 2], grid: { planes: [0, 1], rows: 2, cols: 3 }, stats: { min: 1, max: 4, nan: 1, inf: 1 }, planes: new Map([[0, new Float32Array([9, 9, 9, 9])]]) };
  assert.equal(stats(t), "shape (1, 8, 2, 2) · min 1 · max 4 · 1 NaN · 1 Inf"); // not the plane held's 9s
  assert.deepEqual(summary({ shape: [1], stats: { min: null, max: null, nan: 1, inf: 0 } }).extent, [0, 1]);
  const lesson = { shape: [1, 2], grid: { planes: [], rows: 0, cols: 1 }, stats: { min: 12344, max: 12345.68, nan: 0, inf: 0 } }; // FP16's rounding beside FP32's
  assert.equal(stats(lesson), "shape (1, 2) · min 12344 · max 12345.7"); // six digits: the lesson is not rounded away
});

test("a stats line names the shape as drawn: a model's node at its own rank, the 1s it was lifted by left out", () => {
  const t = { shape: [1, 16, 16, 1], grid: { planes: [0], rows: 1, cols: 2 }, stats: { min: 0, max: 1, nan: 0, inf: 0 } };
  assert.equal(stats(t), "shape (1, 16, 16) · min 0 · max 1");
});
