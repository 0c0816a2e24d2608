// A window sent as its region (protocol.window): tested, counted, walked and outlined as the cells it stands for.
import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_PLANES, inWindow, layout, outlines, windowCell, windowSize } from "../../playground/stage/heatmap.js";

// the grid a tensor of `shape` comes with from the server (protocol.grid): its last two axes a plane's rows and
// columns, those before number its planes; `lifted`: a model's node's axes of 1 left out
const grid = (shape, lifted = []) => {
  const drawn = shape.map((_, k) => k).filter((k) => !(lifted.includes(k) && shape[k] === 1));
  return { planes: drawn.slice(0, -2), rows: drawn.length >= 2 ? drawn[drawn.length - 2] : null, cols: drawn.length ? drawn[drawn.length - 1] : null };
};

const cellsOf = (lo, hi) => { // every cell of the bounds, row-major: what the region stands for
  let out = [[]];
  for (let i = 0; i < lo.length; i++) out = out.flatMap((c) => Array.from({ length: hi[i] - lo[i] + 1 }, (_, k) => [...c, lo[i] + k]));
  return out;
};

test("a region reads exactly the cells of its bounds, in row-major order", () => {
  const region = { lo: [0, 2, 1, 0], hi: [0, 3, 2, 3] }, cells = cellsOf(region.lo, region.hi);
  assert.equal(windowSize(region), cells.length);
  cells.forEach((c, k) => assert.deepEqual(windowCell(region, k), c));
  for (const c of [[0, 2, 1, 0], [0, 3, 2, 3], [0, 1, 1, 0], [1, 2, 1, 0], [0, 2, 0, 0]]) {
    assert.equal(inWindow(region, c), inWindow(cells, c), c.join(","));
  }
  assert.equal(windowCell(cells, 5), cells[5]);
});

test("a region is one rectangle on each plane of the page it covers, not one square per cell", () => {
  const t = { shape: [1, 6, 3, 4], grid: grid([1, 6, 3, 4]) }, g = layout({ t, first: 0 }, 10, null);
  assert.equal(g.count, MAX_PLANES);
  const region = { lo: [0, 1, 0, 0], hi: [0, 5, 2, 3] }; // channels 1 … 5, each whole: planes 1, 2, 3 shown
  const { solid, dashed } = outlines(g, t, region, true);
  const across = g.cols * g.cell + g.gap;
  const rect = (p) => `M${3 + p * across} ${3 + (g.top || 0)}h${4 * g.cell - 4}v${3 * g.cell - 4}h${-(4 * g.cell - 4)}Z`;
  assert.equal(solid, rect(1) + rect(2) + rect(3));
  assert.equal(dashed, "");
  assert.equal(outlines(g, t, { lo: [0, 4, 0, 0], hi: [0, 5, 1, 1] }, true).solid, ""); // off the page
});
