// heatmap.js: the colour scales, the cell size that fits the figures, and the cell under the pointer.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  DIVERGING, LUT_STEPS, MAGNITUDE, MAX_PLANES, NAN_RGB, NEGINF_RGB, POSINF_RGB, SEQUENTIAL, SMALL_PX,
  LABEL_PX, LINE_GAP, MIN_DIGIT_PX, cellAtPoint, padOf, cellLabel, chooseScales, colour, fitCells, interpolate, layout, outlines, planeLabel, planeOf,
  planes, regionPath, scaleFor, shown,
} from "../../playground/stage/heatmap.js";
import { digits } from "../../playground/stage/format.js";

// the grid a tensor of `shape` comes with from the server (protocol.grid): its last two axes a plane's rows and
// columns, those before number its planes; `lifted`: a model's node's axes of 1 left out
const grid = (shape, lifted = []) => {
  const drawn = shape.map((_, k) => k).filter((k) => !(lifted.includes(k) && shape[k] === 1));
  return { planes: drawn.slice(0, -2), rows: drawn.length >= 2 ? drawn[drawn.length - 2] : null, cols: drawn.length ? drawn[drawn.length - 1] : null };
};
const T = (shape, lifted) => ({ shape, grid: grid(shape, lifted) });

// a tensor as the tab holds it: its planes, and the whole tensor's stats as the server sends them
const tensor = (shape, values) => {
  const finite = values.filter(Number.isFinite);
  const stats = { min: finite.length ? Math.min(...finite) : null, max: finite.length ? Math.max(...finite) : null,
                  nan: values.filter(Number.isNaN).length, inf: values.filter((v) => Math.abs(v) === Infinity).length };
  return { ...T(shape), stats, planes: new Map([[0, new Float32Array(values)]]) };
};

test("a range across zero gets the diverging scale, symmetric about zero, zero on its white middle", () => {
  const s = scaleFor([-1, 3], false);
  assert.equal(s.stops, DIVERGING);
  assert.deepEqual([s.lo, s.hi], [-3, 3]);
  assert.deepEqual(colour(s, 0), [247, 247, 247]);
  assert.deepEqual(colour(s, -3), DIVERGING[0][1]);
  assert.deepEqual(colour(s, 3), DIVERGING[DIVERGING.length - 1][1]);
});

test("a one-signed range is sequential, an error map is a magnitude scale, a constant still has a span", () => {
  assert.equal(scaleFor([0, 5], false).stops, SEQUENTIAL);
  assert.equal(scaleFor([-5, 5], true).stops, MAGNITUDE);
  const flat = scaleFor([2, 2], false);
  assert.deepEqual([flat.lo, flat.hi], [2, 3]);
  assert.equal(flat.lut.length, LUT_STEPS + 1);
});

test("colour clamps outside the scale and marks the non-finite", () => {
  const s = scaleFor([0, 1], false);
  assert.deepEqual(colour(s, -10), colour(s, 0));
  assert.deepEqual(colour(s, 10), colour(s, 1));
  assert.equal(colour(s, NaN), NAN_RGB);
  assert.equal(colour(s, Infinity), POSINF_RGB);
  assert.equal(colour(s, -Infinity), NEGINF_RGB);
});

test("interpolate is exact on the stops and linear between them", () => {
  assert.deepEqual(interpolate(MAGNITUDE, 0.5), [253, 141, 60]);
  assert.deepEqual(interpolate([[0, [0, 0, 0]], [1, [100, 200, 50]]], 0.25), [25, 50, 13]);
});

test("each figure is painted on the range the server sends (protocol.figure_ranges owns the rule), an error map on a magnitude scale", () => {
  const s = chooseScales([
    { which: "input", t: tensor([2], [-4, 4]), range: [-13, 13] }, { which: "output", t: tensor([2], [-3, 13]), range: [-13, 13] },
    { which: "kernel", t: tensor([2], [0, 9]), range: [0, 9] }, { which: "error", t: tensor([2], [-7, -3]), range: [-7, -3], magnitude: true },
  ]);
  assert.deepEqual([s.input.lo, s.input.hi, s.output.lo, s.output.hi], [-13, 13, -13, 13]);
  assert.deepEqual([s.kernel.lo, s.kernel.hi, s.kernel.diverging], [0, 9, false]);
  assert.equal(s.error.stops, MAGNITUDE);
  const none = chooseScales([{ which: "output", t: tensor([2], [2, 5]) }]).output; // no range sent: its own extent
  assert.deepEqual([none.lo, none.hi], [2, 5]);
});

test("a tensor is drawn as its planes, MAX_PLANES at a time from the page's first", () => {
  assert.deepEqual(planes(T([2, 3, 4, 5])), { count: 6, h: 4, w: 5 });
  const p = shown({ t: T([1, 10, 2, 2]), first: 8 });
  assert.deepEqual([p.first, p.count, p.total], [8, 2, 10]);
  assert.equal(shown({ t: T([1, 10, 2, 2]) }).count, MAX_PLANES);
});

test("one cell size for figures that compare cell for cell; a far narrower one gets a size of its own", () => {
  const big = (which) => ({ which, t: T([1, 1, 64, 64]) });
  const px = fitCells([big("input"), { which: "kernel", t: T([1, 1, 3, 3]) }, big("output")], 1000, 800, false);
  assert.equal(px.input, px.output);
  assert.ok(px.kernel > px.input && px.kernel * 3 <= SMALL_PX, JSON.stringify(px));
  const capped = fitCells([{ which: "input", t: T([1, 1, 2, 2]) }], 4000, 4000, false);
  assert.equal(capped.input, 80); // presenter mode lets it grow further
  assert.equal(fitCells([{ which: "input", t: T([1, 1, 2, 2]) }], 4000, 4000, true).input, 120);
});

test("the layout and the cell under a point agree, across planes and the padding drawn", () => {
  const f = { t: T([1, 2, 3, 4]) }, g = layout(f, 10, { lo: [-1, -1], hi: [3, 4] });
  assert.deepEqual([g.rows, g.cols, g.gap, g.count], [5, 6, 10, 2]);
  assert.deepEqual(cellAtPoint(g, f.t, 15, 15), { index: [0, 0, 0, 0], shown: [0, 0, 0, 0], flat: 0 });
  const x = g.cols * g.cell + g.gap + 25; // the second plane's third column (its padding column first)
  assert.deepEqual(cellAtPoint(g, f.t, x, 35), { index: [0, 1, 2, 1], shown: [0, 1, 2, 1], flat: 12 + 2 * 4 + 1 });
  assert.equal(cellAtPoint(g, f.t, 5, 5), null); // the padding: no cell of the tensor
  assert.equal(planeOf(T([2, 3, 4, 5]), [1, 2, 0, 0]), 5);
});

test("a figure's planes wrap at the room given: no wider than it, each line under its labels, cells found where drawn", () => {
  const f = { t: T([1, 8, 3, 4]) }, wide = layout(f, 10, null), g = layout(f, 10, null, 100);
  assert.deepEqual([wide.across, wide.lines, g.across, g.lines], [MAX_PLANES, 1, 2, 2]); // 2 planes of 40 px and a gap
  assert.ok(g.width <= 100 && g.width === 2 * 40 + 10 + 2, g.width);
  assert.equal(g.height, 2 * (3 * 10 + LABEL_PX) + LINE_GAP + 2);
  const band = 3 * 10 + LABEL_PX + LINE_GAP; // the third plane: the second line's first, its cell (1, 2)
  assert.deepEqual(cellAtPoint(g, f.t, 25, band + 15), { index: [0, 2, 1, 2], shown: [0, 2, 1, 2], flat: (2 * 3 + 1) * 4 + 2 });
  assert.equal(cellAtPoint(g, f.t, 25, 35), null); // between the lines: the next line's labels
  const { solid } = outlines(g, f.t, [[0, 3, 0, 0]], false); // the fourth plane: second line, second place
  assert.equal(solid, `M${1 + 40 + 10 + 2} ${1 + LABEL_PX + band + 2}h6v6h-6Z`);
  assert.equal(layout(f, 10, null, 10).across, 1); // one plane a line at the least, however narrow the room
});

test("a cell keeps the digits a lesson is about: six significant where they fit", () => {
  assert.equal(digits(12345.68, 6), "12345.7"); // the powers-of-ten kernel's output
  assert.equal(digits(12344, 6), "12344"); // FP16's rounding of it
  assert.equal(digits(0.5, 6), "0.5");
  assert.equal(digits(1234567, 6), "1.23457e6");
  assert.equal(digits(0.0000123456, 4), "1.235e-5");
  assert.equal(digits(NaN, 6), "NaN");
  const width = (s, px) => s.length * px * 0.6; // a font whose digits are 0.6 em wide
  const wide = cellLabel(12345.68, 56, width);
  assert.equal(wide.text, "12345.7");
  assert.ok(wide.px >= 11 && width(wide.text, wide.px) <= 56 - 6, JSON.stringify(wide));
  assert.equal(cellLabel(12344, 52, width).text, "12344");
  assert.ok(cellLabel(12345.68, 100, width).px > wide.px); // digits scale with cells
  assert.equal(cellLabel(12345.68, 24, width).text.length < 7, true); // a small cell: fewer digits, still legible
});

test("a smaller font comes before fewer digits, and the digits keep a number's whole part", () => {
  const width = (s, px) => s.length * px * 0.56; // about system-ui's digits
  // the powers-of-ten lesson at two output maps: its cells about 30 px
  for (const cell of [24, 30, 36, 44]) {
    for (const v of [12345.679, 97831.27, 23156.49]) {
      const label = cellLabel(v, cell, width);
      assert.ok(!/00$/.test(label.text), `${v} at ${cell} px reads ${label.text}`); // never 12300, 97800
      assert.ok(label.text.replace(/[-.]/g, "").length >= 5 && label.px >= MIN_DIGIT_PX, JSON.stringify(label));
    }
  }
  // six digits while they fit at MIN_DIGIT_PX: 7 characters of 0.56 em need 8 · 0.56 · 7 ≈ 31 px, a cell of 37
  assert.deepEqual(cellLabel(12345.679, 40, width), { text: "12345.7", px: 8 });
  assert.equal(cellLabel(12345.679, 30, width).text, "12346"); // then five: the whole part, no fewer
  assert.equal(cellLabel(0.123456, 24, width).text.length <= 8, true); // a fraction may drop digits: no whole part
});

test("a floor (presenter mode's captions) keeps the digits that large: fewer digits before a smaller font", () => {
  const width = (s, px) => s.length * px * 0.6;
  const free = cellLabel(12345.68, 56, width), floored = cellLabel(12345.68, 56, width, 16);
  assert.ok(free.px < 16, JSON.stringify(free)); // six digits at 12 px without the floor
  assert.equal(floored.px >= 16 && width(floored.text, floored.px) <= 56 - 6, true, JSON.stringify(floored));
  assert.equal(floored.text, "12346");
  assert.equal(cellLabel(0.5, 56, width, 16).text, "0.5"); // a short value keeps its digits
  // where no count of digits fits at the floor, the most digits of the narrowest text (not "12300": as wide)
  assert.equal(cellLabel(12345.68, 40, width, 16).text, "12346");
});

test("each plane carries its n and c (a kernel's k and c)", () => {
  assert.equal(planeLabel("input", T([1, 4, 3, 3]), 2), "n 0 · c 2");
  assert.equal(planeLabel("output", T([2, 3, 3, 3]), 4), "n 1 · c 1");
  assert.equal(planeLabel("kernel", T([2, 4, 3, 3]), 5), "k 1 · c 1");
  assert.equal(planeLabel("output", T([1, 2, 2, 3, 3]), 3), "n 0 · c 1 · d 1");
  const one = layout({ t: T([1, 1, 3, 3]) }, 10, null), four = layout({ t: T([1, 4, 3, 3]) }, 10, null);
  assert.equal(one.top, 0);
  assert.equal(four.top, LABEL_PX); // the labels' row over the planes
  assert.equal(four.height, one.height + LABEL_PX);
});

test("the server's range wins over the values: rounding noise is drawn as one colour", () => {
  const noise = tensor([1, 1, 1, 2], [7e-12, -7e-12]);
  const own = chooseScales([{ which: "output", t: noise }]).output;
  assert.equal(own.diverging, true); // its own values stretch ±7e-12 over the whole diverging scale
  const served = chooseScales([{ which: "output", t: noise, range: [0, 0] }]).output;
  assert.deepEqual(colour(served, 7e-12), colour(served, -7e-12)); // one value: one colour
});

test("a mark's outlines: one square inside each cell, the padding's dashed, a cell on another page of planes none", () => {
  const t = { t: T([1, 6, 3, 4]) }, g = layout({ ...t, first: 0 }, 10, { lo: [-1, -1], hi: [3, 4] });
  assert.equal(g.count, MAX_PLANES);
  const { solid, dashed } = outlines(g, t.t, [[0, 0, 0, 0], [0, 1, 2, 3], [0, 0, -1, 0], [0, MAX_PLANES, 0, 0]], true);
  // plane 0's cell (0, 0) sits one padding cell in from the figure's corner (1 px border); plane 1 one plane across
  const across = g.cols * g.cell + g.gap;
  assert.equal(solid, `M13 ${13 + g.top}h6v6h-6ZM${13 + across + 30} ${13 + g.top + 20}h6v6h-6Z`);
  assert.equal(dashed, `M13 ${3 + g.top}h6v6h-6Z`);
  assert.equal(outlines(g, t.t, [[0, 0, -1, 0]], false).dashed, ""); // not asked to dash: drawn solid
});

test("a region's border: a box of cells one outline, cells apart (a stride) each their own, another page none", () => {
  const shape = T([1, 6, 3, 4]), g = layout({ t: shape, first: 0 }, 10, null);
  const edges = (d) => d.split("M").filter(Boolean).length;
  assert.equal(edges(regionPath(g, shape, [[0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0], [0, 0, 1, 1]])), 8); // 2 × 2: 8 sides
  const [x, y] = [1, 1 + (g.top || 0)];
  assert.equal(regionPath(g, shape, [[0, 0, 0, 0]]), `M${x} ${y}h10M${x} ${y + 10}h10M${x} ${y}v10M${x + 10} ${y}v10`);
  assert.equal(edges(regionPath(g, shape, [[0, 0, 0, 0], [0, 0, 0, 2]])), 8); // a column apart: two boxes
  assert.equal(regionPath(g, shape, [[0, MAX_PLANES, 0, 0]]), ""); // a plane on the next page
});

test("a model's node lifted to rank 4 is drawn at its own rank: (1, 16, 16) as one 16 × 16 matrix, its cells named so", () => {
  const t = T([1, 16, 16, 1], [3]); // a (1, 16, 16) token tensor, a 1 appended for the layer
  assert.deepEqual(planes(t), { count: 1, h: 16, w: 16 });
  const g = layout({ t }, 10, null);
  assert.deepEqual([g.count, g.rows, g.cols, g.top], [1, 16, 16, 0]);
  const c = cellAtPoint(g, t, 5 * 10 + 3, 7 * 10 + 3); // row 7, column 5
  assert.deepEqual(c, { index: [0, 7, 5, 0], shown: [0, 7, 5], flat: 7 * 16 + 5 });
  // a read map's cell (the layer's full index) is outlined where the tooltip names it
  assert.equal(outlines(g, t, [[0, 7, 5, 0]], false).solid, `M${1 + 5 * 10 + 2} ${1 + 7 * 10 + 2}h6v6h-6Z`);
  assert.equal(regionPath(g, t, [[0, 7, 5, 0]]), `M51 71h10M51 81h10M51 71v10M61 71v10`);
  const row = outlines(g, t, { lo: [0, 2, 0, 0], hi: [0, 2, 15, 0] }, false).solid; // a softmax's row: one rectangle
  assert.equal(row, `M${1 + 2} ${1 + 2 * 10 + 2}h${16 * 10 - 4}v${10 - 4}h${-(16 * 10 - 4)}Z`);
  assert.equal(planeOf(t, [0, 7, 5, 0]), 0);
});

test("ranks 1 to 3 as the user reads them: one row, one matrix, B matrices", () => {
  assert.deepEqual(planes(T([7])), { count: 1, h: 1, w: 7 });
  assert.deepEqual(planes(T([])), { count: 1, h: 1, w: 1 });
  assert.deepEqual(planes(T([3, 5])), { count: 1, h: 3, w: 5 });
  const b = T([2, 16, 16, 1], [3]); // (2, 16, 16) lifted: two 16 × 16 matrices
  assert.deepEqual(planes(b), { count: 2, h: 16, w: 16 });
  assert.equal(planeLabel("output", b, 1), "c 1");
  const g = layout({ t: b }, 10, null), x = g.cols * g.cell + g.gap + 3 * 10 + 1;
  assert.deepEqual(cellAtPoint(g, b, x, 2 * 10 + 1), { index: [1, 2, 3, 0], shown: [1, 2, 3], flat: 256 + 2 * 16 + 3 });
  const lead = T([1, 1, 16, 16], [0]); // a matrix product's 1 put before: the same one matrix
  assert.deepEqual([planes(lead), cellAtPoint(layout({ t: lead }, 10, null), lead, 31, 21).shown], [{ count: 1, h: 16, w: 16 }, [0, 2, 3]]);
});

test("the input's padding is the extent along the rows and columns its grid draws", () => {
  const extent = { lo: [0, -1, -2, 0], hi: [0, 16, 17, 0] };
  assert.deepEqual(padOf(extent, T([1, 16, 16, 1], [3])), { lo: [-1, -2], hi: [16, 17] }); // a model's (1, 16, 16)
  assert.deepEqual(padOf({ lo: [0, 0, 0, -3], hi: [0, 0, 5, 11] }, T([1, 1, 6, 9])), { lo: [0, -3], hi: [5, 11] });
  assert.deepEqual(padOf({ lo: [-2], hi: [8] }, T([7])), { lo: [0, -2], hi: [0, 8] }); // one row
});
