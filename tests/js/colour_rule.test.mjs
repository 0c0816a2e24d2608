// The stage's colour rule against the table the server's ranges are held to (tests/test_colour_range.py):
// one rule, so a constant, all-zero or rounding-noise tensor is one colour.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { SEQUENTIAL, colour, interpolate, scaleFor } from "../../playground/stage/heatmap.js";

const { cases } = JSON.parse(readFileSync(new URL("../fixtures/colour_rule.json", import.meta.url), "utf8"));

for (const c of cases) {
  test(`the stage draws ${c.name} on the table's scale`, () => {
    const s = scaleFor(c.range || [0, 1], false); // no finite value: the extent's [0, 1] (format.js)
    assert.deepEqual({ lo: s.lo, hi: s.hi, diverging: s.diverging }, c.scale);
    if (c.range && c.range[0] === c.range[1]) assert.deepEqual(colour(s, c.range[0]), SEQUENTIAL[0][1]);
  });
}

test("the home page's pictures are painted in the stage's sequential scale, as heatmap.js paints it", () => {
  const source = readFileSync(new URL("../../playground/ui/home_pictures.py", import.meta.url), "utf8");
  const listed = source.match(/^VIRIDIS = \(([^)]*)\)/m)[1].match(/#[0-9a-f]{6}/g);
  const hex = (rgb) => "#" + rgb.map((v) => v.toString(16).padStart(2, "0")).join("");
  assert.deepEqual(listed, listed.map((_, i) => hex(interpolate(SEQUENTIAL, i / (listed.length - 1)))));
});
