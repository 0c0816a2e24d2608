// format.js: the numbers and text the stage writes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { esc, exact, extent, markdown, markdownInline, short, stats, summary } from "../../playground/stage/format.js";

test("short keeps four significant digits and drops trailing zeros", () => {
  assert.equal(short(3.14159), "3.142");
  assert.equal(short(-0.5), "-0.5");
  assert.equal(short(12345), "12350");
  assert.equal(short(0), "0");
});

test("short writes the very large and the very small with an exponent", () => {
  assert.equal(short(123456), "1.2e5");
  assert.equal(short(0.0001234), "1.2e-4");
  assert.equal(short(-1e-7), "-1.0e-7");
});

test("short names the non-finite", () => {
  assert.equal(short(NaN), "NaN");
  assert.equal(short(Infinity), "+Inf");
  assert.equal(short(-Infinity), "-Inf");
});

test("exact writes float32's seven significant digits", () => {
  assert.equal(exact(Math.fround(0.1)), "0.1");
  assert.equal(exact(1 / 3), "0.3333333");
  assert.equal(exact(-Infinity), "-Inf");
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
  const t = { shape: [1, 8, 2, 2], stats: { min: 1, max: 4, nan: 1, inf: 1 }, planes: new Map([[0, new Float32Array([9, 9, 9, 9])]]) };
  assert.equal(stats(t), "shape (1, 8, 2, 2) · min 1 · max 4 · 1 NaN · 1 Inf"); // not the plane held's 9s
  assert.deepEqual(summary({ shape: [1], stats: { min: null, max: null, nan: 1, inf: 0 } }).extent, [0, 1]);
});
