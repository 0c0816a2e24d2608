// The heatmap: a tensor's planes (t.planes: those of the page drawn, store.js) side by side as coloured cells (their numbers written where a cell is large
// enough), the colour scales, the cell size that fits the figures on one screen, and the cells under the pointer.
// The scales and the layout are pure (tests/js/heatmap.test.mjs); painting needs a canvas.
import { digits, drawnAxes, summary } from "./format.js";

export const FIGURE_GAP = 18, CAPTION_PX = 76, SMALL_PX = 120; // stage.css's .pg-row gap; a figure's caption (title and stats lines)
export const LABEL_PX = 18; // the row of plane labels ("n 0 · c 1") over a figure of several planes
export const MAX_PLANES = 4; // planes a figure shows at a time: its pager walks through the rest

// The colour rule is the server's (protocol.figure_ranges): each figure comes with the range its colours span, one
// range for figures that share values, so that a value is one colour on every figure of every page. Here a range is
// only painted (scaleFor); a figure without one (nothing finite) is drawn on its own values' extent.
export function chooseScales(figs) {
  const out = {};
  for (const f of figs) out[f.which] = scaleFor(f.range || summary(f.t).extent, Boolean(f.magnitude));
  return out;
}

export function scaleFor([lo, hi], magnitude) {
  let s;
  if (!magnitude && lo < 0 && hi > 0) { const m = Math.max(-lo, hi); s = { lo: -m, hi: m, stops: DIVERGING, diverging: true }; }
  else s = { lo, hi: hi === lo ? lo + 1 : hi, stops: magnitude ? MAGNITUDE : SEQUENTIAL, diverging: false };
  s.lut = []; // 257 colours along the scale (its middle, a diverging scale's 0, exactly on a stop): one lookup a cell
  for (let i = 0; i <= LUT_STEPS; i++) s.lut.push(interpolate(s.stops, i / LUT_STEPS));
  return s;
}
export const DIVERGING = [[0, [5, 48, 97]], [0.25, [67, 147, 195]], [0.5, [247, 247, 247]], [0.75, [214, 96, 77]], [1, [103, 0, 31]]];
export const SEQUENTIAL = [[0, [68, 1, 84]], [0.25, [59, 82, 139]], [0.5, [33, 145, 140]], [0.75, [94, 201, 98]], [1, [253, 231, 37]]];
export const MAGNITUDE = [[0, [255, 255, 255]], [0.5, [253, 141, 60]], [1, [127, 39, 4]]];

export const LUT_STEPS = 256;
export const NAN_RGB = [160, 160, 160], POSINF_RGB = [255, 0, 255], NEGINF_RGB = [0, 255, 255];
export function colour(scale, v) {
  if (Number.isNaN(v)) return NAN_RGB;
  if (v === Infinity) return POSINF_RGB;
  if (v === -Infinity) return NEGINF_RGB;
  const t = (v - scale.lo) / (scale.hi - scale.lo);
  return scale.lut[t <= 0 ? 0 : t >= 1 ? LUT_STEPS : Math.round(t * LUT_STEPS)];
}
export function interpolate(s, t) {
  for (let i = 1; i < s.length; i++) if (t <= s[i][0]) {
    const u = (t - s[i - 1][0]) / (s[i][0] - s[i - 1][0]);
    return [0, 1, 2].map((k) => Math.round(s[i - 1][1][k] + (s[i][1][k] - s[i - 1][1][k]) * u));
  }
  return s[s.length - 1][1];
}

// A tensor ({ shape, grid }) is drawn as its planes side by side, each h × w cells, as the server's grid says
// (protocol.grid, the one owner of the mapping: the axes that number planes, the rows' axis and the columns'; the
// axes it leaves out are 1s a model's node was lifted by).
export function planes(t) {
  const { planes: lead, rows, cols } = t.grid, s = t.shape;
  return { count: lead.reduce((a, k) => a * s[k], 1), h: rows == null ? 1 : s[rows], w: cols == null ? 1 : s[cols] };
}

// A cell's index as its figure names it (its drawn axes': format.js drawnAxes).
export function drawnIndex(t, index) { return drawnAxes(t).map((k) => index[k]); }

// A cell (a full index, or a shorter one whose axes are the tensor's last) as [plane, row, column] on its figure.
export function cellPlace(t, cell) {
  const full = cell.length === t.shape.length ? cell : [...Array(Math.max(0, t.shape.length - cell.length)).fill(0), ...cell];
  const { rows, cols } = t.grid;
  return [planeOf(t, full), rows == null ? 0 : full[rows], cols == null ? 0 : full[cols]];
}

// A figure of many planes (a model's 256 channels) shows MAX_PLANES of them at a time, from `first`. Returns the planes drawn: { first, count, total, h, w }.
export function shown(f) {
  const p = planes(f.t), first = Math.max(0, Math.min(f.first || 0, p.count - 1));
  return { ...p, first, count: Math.min(MAX_PLANES, p.count - first), total: p.count };
}

// The names of the axes that number a tensor's planes, by the rank it is drawn at: n, c[, d]; a kernel's k, c[, d];
// a rank-3 tensor's c.
export function planeAxes(which, rank) {
  const names = which === "kernel" ? ["k", "c", "d"] : rank === 3 ? ["c"] : ["n", "c", "d"];
  return names.slice(0, Math.max(0, rank - 2));
}

// A plane's label: its index along the axes that number planes ("n 0 · c 1"), for the figure's plane `plane`.
export function planeLabel(which, t, plane) {
  const lead = t.grid.planes, axes = planeAxes(which, lead.length + 2), index = planeIndex(t, plane);
  return axes.map((a, i) => `${a} ${index[lead[i]]}`).join(" · ");
}

// A plane's full index (the axes not numbering planes at 0).
function planeIndex(t, plane) {
  const index = t.shape.map(() => 0), lead = t.grid.planes;
  for (let k = lead.length - 1; k >= 0; k--) { index[lead[k]] = plane % t.shape[lead[k]]; plane = Math.floor(plane / t.shape[lead[k]]); }
  return index;
}

// The label a cell of `cell` px shows and its font: six significant digits, the font as large as the cell allows
// (digits scale with cells) down to MIN_DIGIT_PX, or down to `floor` px where one is given (presenter mode: the
// captions' size); a smaller font comes before fewer digits, and the digits never drop below a number's whole part
// (12345.68 is "12346" at the least, never "12300"). `width(text, px)`: the text's width at that font size.
export const MIN_DIGIT_PX = 8;
export function cellLabel(v, cell, width, floor = 0) {
  const least = Math.max(MIN_DIGIT_PX, floor), base = Math.max(9, floor, Math.floor(cell * 0.3)), room = cell - 6;
  const a = Math.abs(v), whole = Number.isFinite(a) && a >= 1 && a < 1e6 ? String(Math.trunc(a)).length : 0;
  let text = "";
  for (let n = 6; n >= Math.max(whole, 3); n--) {
    text = digits(v, n);
    const px = Math.min(base, Math.floor(room * 10 / Math.max(width(text, 10), 1)));
    if (px >= least) return { text, px };
  }
  return { text, px: least };
}

export function fitCells(figs, width, height, presenter) {
  // One cell size for the figures that compare cell for cell; a figure far narrower than the widest (a 3 × 3
  // kernel beside 512 × 512 planes) gets SMALL_PX of its own instead of vanishing. Returns which -> px.
  const cap = presenter ? 120 : 80;
  const dims = figs.map((f) => {
    const p = shown(f), rows = f.pad ? f.pad.hi[0] - f.pad.lo[0] + 1 : p.h, cols = f.pad ? f.pad.hi[1] - f.pad.lo[1] + 1 : p.w;
    return { which: f.which, across: p.count * cols, gaps: p.count - 1, rows, top: p.total > 1 ? LABEL_PX : 0 };
  });
  const widest = Math.max(...dims.map((d) => d.across));
  const small = dims.filter((d) => d.across * 8 < widest), big = dims.filter((d) => d.across * 8 >= widest);
  const room = width - FIGURE_GAP * (figs.length - 1) - 2 * figs.length - small.length * SMALL_PX;
  const across = big.reduce((n, d) => n + d.across, 0), gaps = big.reduce((n, d) => n + d.gaps, 0);
  let wide = room / Math.max(across + gaps, 1); // a gap is a cell wide, and at least 6 px (layout)
  if (wide < 6) wide = (room - 6 * gaps) / Math.max(across, 1);
  const high = (d) => (height - CAPTION_PX - d.top) / (d.rows + 1); // the cell that fits a figure's height
  const fit = (px) => Math.min(cap, px >= 1 ? Math.floor(px) : Math.max(px, 1 / 32)); // below a pixel: sampled
  const common = fit(Math.min(wide, ...big.map(high))), out = {};
  for (const d of big) out[d.which] = common;
  for (const d of small) out[d.which] = fit(Math.max(common, Math.min(SMALL_PX / (d.across + d.gaps), high(d))));
  return out;
}

// A figure's geometry at `cell` px a cell: its planes side by side, as many a line as `room` px holds (a
// documentation gallery's one cell size in a narrow picture: the planes wrap instead of running past its edge), each
// line of planes under its labels.
export const LINE_GAP = 8; // px between two lines of planes
export function layout(f, cell, pad, room = Infinity) {
  const p = shown(f);
  const lo = pad ? pad.lo : [0, 0], hi = pad ? pad.hi : [p.h - 1, p.w - 1];
  const rows = hi[0] - lo[0] + 1, cols = hi[1] - lo[1] + 1, gap = Math.max(cell, 6);
  const top = p.total > 1 ? LABEL_PX : 0; // the planes' labels, over them
  const across = Math.max(1, Math.min(p.count, Math.floor((room - 2 + gap) / (cols * cell + gap)))), lines = Math.ceil(p.count / across);
  return { ...p, cell, lo, rows, cols, gap, top, across, lines, width: Math.ceil(across * cols * cell + (across - 1) * gap + 2),
           height: Math.ceil(lines * (rows * cell + top) + (lines - 1) * LINE_GAP + 2) };
}

// The corner of the k-th plane drawn (its cell (lo, lo), under its label), in px from the canvas's corner.
export function planeXY(g, k) {
  const line = Math.floor(k / (g.across || g.count || 1)), at = k - line * (g.across || g.count || 1);
  return [1 + at * (g.cols * g.cell + g.gap), 1 + (g.top || 0) + line * (g.rows * g.cell + (g.top || 0) + LINE_GAP)];
}

// A canvas at a figure's size: resized only where its size changed (a resize hands the compositor a new bitmap and
// resets the context), else cleared.
export function sized(c, g, dpr) {
  const w = Math.round(g.width * dpr), h = Math.round(g.height * dpr), ctx = c.getContext("2d");
  if (c.width !== w || c.height !== h) {
    c.width = w; c.height = h; c.style.width = g.width + "px"; c.style.height = g.height + "px"; ctx.__px = null;
  } else { ctx.setTransform(1, 0, 0, 1, 0, 0); ctx.clearRect(0, 0, w, h); }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
}

// A figure's tensor on its canvas, sized for it first (`sized`: the page's figures are all sized before any is
// painted, see figures.js).
export function paint(fig, presenter) {
  const { g, canvas, t, scale } = fig;
  const ctx = canvas.getContext("2d"), text = g.cell >= (presenter ? 26 : 22);
  const colours = [], bitmaps = planeBitmaps(t, g, scale);
  ctx.imageSmoothingEnabled = false;
  // set only when it changes (kept by a canvas that kept its size): a canvas in the page works out its style and
  // layout whenever its font is set
  const setFont = (px) => { if (px !== ctx.__px) { ctx.font = `${px}px system-ui, sans-serif`; ctx.__px = px; } };
  const width = (s, px) => (px === 10 ? width10(s) : (setFont(px), ctx.measureText(s).width));
  for (let p = 0; p < g.count; p++) {
    const [x0, y0] = planeXY(g, p), ox = x0 - g.lo[1] * g.cell, oy = y0 - g.lo[0] * g.cell;
    if (g.top) { // the plane's label: which n and c (a kernel's k and c) it is
      ctx.fillStyle = "#374151"; ctx.textAlign = "left"; ctx.textBaseline = "top"; setFont(LABEL_PX - 5);
      ctx.fillText(planeLabel(fig.which, t, g.first + p), x0, y0 - g.top, Math.max(g.cols * g.cell, 40));
    }
    if (g.lo[0] < 0 || g.lo[1] < 0 || g.rows > g.h || g.cols > g.w) { // the padded border, dashed
      ctx.save(); ctx.setLineDash([4, 3]); ctx.strokeStyle = "#6b7280"; ctx.lineWidth = 1;
      ctx.strokeRect(x0 + 0.5, y0 + 0.5, g.cols * g.cell - 1, g.rows * g.cell - 1); ctx.restore();
    }
    ctx.drawImage(bitmaps[p], ox, oy, g.w * g.cell, g.h * g.cell);
    const values = t.planes.get(g.first + p); // the tensor's plane drawn here
    if (text) for (let i = 0, n = g.h * g.w; i < n; i++) colours[i] = colour(scale, values[i]);
    if (g.cell >= 6) { // cell borders: a white (zero) cell of a diverging scale stays visible
      ctx.beginPath(); ctx.strokeStyle = "rgba(0,0,0,0.22)"; ctx.lineWidth = 1;
      for (let i = 0; i <= g.h; i++) { ctx.moveTo(ox, oy + i * g.cell + 0.5); ctx.lineTo(ox + g.w * g.cell, oy + i * g.cell + 0.5); }
      for (let j = 0; j <= g.w; j++) { ctx.moveTo(ox + j * g.cell + 0.5, oy); ctx.lineTo(ox + j * g.cell + 0.5, oy + g.h * g.cell); }
      ctx.stroke();
    }
    if (text) { // the numbers, as large as a cell allows and never wider than it; a font size's at once
      ctx.textAlign = "center"; ctx.textBaseline = "middle";
      const bySize = new Map();
      for (let i = 0; i < g.h; i++) for (let j = 0; j < g.w; j++) {
        const label = cellLabel(values[i * g.w + j], g.cell, width, fig.least);
        if (!bySize.has(label.px)) bySize.set(label.px, []);
        bySize.get(label.px).push([label.text, i, j]);
      }
      for (const [px, labels] of bySize) {
        setFont(px);
        for (const [s, i, j] of labels) {
          const c = colours[i * g.w + j];
          ctx.fillStyle = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2] > 140 ? "#111" : "#fff";
          ctx.fillText(s, ox + (j + 0.5) * g.cell, oy + (i + 0.5) * g.cell, g.cell - 4);
        }
      }
    }
  }
}

// A label's width at 10 px (cellLabel's yardstick), measured once on a canvas of its own: the cells' labels repeat
// from one drawing to the next, and the painting canvas keeps the font it writes in.
let measurer = null;
const widths = new Map();
function width10(s) {
  let w = widths.get(s);
  if (w === undefined) {
    if (!measurer) { measurer = document.createElement("canvas").getContext("2d"); measurer.font = "10px system-ui, sans-serif"; }
    if (widths.size >= 8192) widths.clear();
    widths.set(s, (w = measurer.measureText(s).width));
  }
  return w;
}

export function planeBitmaps(t, g, scale) { // one pixel a cell, kept per tensor, scale and page: a revisit only scales them
  const key = `${scale.lo}|${scale.hi}|${scale.stops === DIVERGING}|${scale.stops === MAGNITUDE}|${g.first}|${g.count}`;
  if (t.__bitmaps && t.__bitmaps.key === key) return t.__bitmaps.planes;
  const planes = [], n = g.h * g.w;
  for (let p = g.first; p < g.first + g.count; p++) {
    const c = document.createElement("canvas"), values = t.planes.get(p); // the page's planes: sent or asked for
    c.width = g.w; c.height = g.h;
    const cx = c.getContext("2d"), img = cx.createImageData(g.w, g.h);
    for (let i = 0; i < n; i++) {
      const rgb = colour(scale, values[i]);
      img.data[4 * i] = rgb[0]; img.data[4 * i + 1] = rgb[1]; img.data[4 * i + 2] = rgb[2]; img.data[4 * i + 3] = 255;
    }
    cx.putImageData(img, 0, 0);
    planes.push(c);
  }
  t.__bitmaps = { key, planes };
  return planes;
}

export function cellXY(g, plane, h, w) {
  const [x, y] = planeXY(g, plane - g.first);
  return [x + (w - g.lo[1]) * g.cell, y + (h - g.lo[0]) * g.cell];
}

export function planeOf(t, index) { // the flat plane number of a full index
  let p = 0;
  for (const k of t.grid.planes) p = p * t.shape[k] + index[k];
  return p;
}

export function cellAt(fig, ev) { // the cell under a pointer event, or null
  const r = fig.canvas.getBoundingClientRect();
  return cellAtPoint(fig.g, fig.t, ev.clientX - r.left - 1, ev.clientY - r.top - 1 - (fig.g.top || 0));
}

// The cell at (x, y) px from a figure's first cell's corner: its full index (the read maps' and the pick's), its
// index as drawn (`drawnIndex`: the tooltip's) and its flat position, or null. Planes wrap onto lines (`across` a
// line); the axes left out are 1s: the flat position is the full index's.
export function cellAtPoint(g, t, x, y) {
  const across = g.across || g.count || 1, band = g.rows * g.cell + (g.top || 0) + LINE_GAP, line = Math.floor(y / band);
  const at = Math.floor(x / (g.cols * g.cell + g.gap)), j = Math.floor((x - at * (g.cols * g.cell + g.gap)) / g.cell) + g.lo[1];
  const i = Math.floor((y - line * band) / g.cell) + g.lo[0], drawn = line * across + at, plane = g.first + drawn;
  if (at < 0 || at >= across || drawn >= g.count || i < 0 || j < 0 || i >= g.h || j >= g.w) return null;
  const index = planeIndex(t, plane), { rows, cols } = t.grid;
  if (rows != null) index[rows] = i;
  if (cols != null) index[cols] = j;
  return { index, shown: drawnIndex(t, index), flat: (plane * g.h + i) * g.w + j };
}

// The marks over a figure (the picked cell, the cells a hovered one reads or feeds) are outlines in an SVG laid over
// its canvas, not a second canvas: a canvas is a bitmap the page hands the compositor whole on every change (a
// figure's two were most of a frame's cost), an outline is a few path commands. Each mark is kept as path data
// ([d, colour, dash]), which the PNG strokes again on its own canvas (strokeMarks).
const SVG = "http://www.w3.org/2000/svg";

export function overlay() { const el = document.createElementNS(SVG, "svg"); el.setAttribute("class", "pg-overlay"); el.__marks = []; return el; }

export function fitOverlay(el, g) { // the overlay at its figure's size, in CSS pixels
  if (el.getAttribute("width") !== String(g.width)) el.setAttribute("width", g.width);
  if (el.getAttribute("height") !== String(g.height)) el.setAttribute("height", g.height);
}

export function clear(el) { if (el.__marks.length) { el.replaceChildren(); el.__marks = []; } }

// A window as the server sends it (protocol.window): its cells, or its region { lo, hi } (inclusive bounds of full
// indices: a whole group, a reduced axis), every cell of which it reads in row-major order.
export const isRegion = (cells) => !Array.isArray(cells);

export function inWindow(cells, index) { // whether the window reads the cell `index`
  if (isRegion(cells)) return index.every((v, i) => v >= cells.lo[i] && v <= cells.hi[i]);
  const key = index.join(",");
  return cells.some((c) => c.join(",") === key);
}

export function windowSize(cells) {
  return isRegion(cells) ? cells.lo.reduce((n, lo, i) => n * (cells.hi[i] - lo + 1), 1) : cells.length;
}

export function windowCell(cells, k) { // the window's k-th cell (a region's in row-major order)
  if (!isRegion(cells)) return cells[k];
  const cell = [];
  for (let i = cells.lo.length - 1; i >= 0; i--) {
    const d = cells.hi[i] - cells.lo[i] + 1;
    cell.unshift(cells.lo[i] + (k % d));
    k = Math.floor(k / d);
  }
  return cell;
}

// The padding a figure of tensor `t` is drawn with: the read map's extent (protocol.extent, every axis) along the
// rows and columns of its grid, { lo: [row, col], hi: [row, col] }.
export function padOf(extent, t) {
  const { rows, cols } = t.grid, at = (b, k) => (k == null ? 0 : b[k]);
  return { lo: [at(extent.lo, rows), at(extent.lo, cols)], hi: [at(extent.hi, rows), at(extent.hi, cols)] };
}

// A region's outlines: one rectangle on each plane of the page drawn that it covers (not one per cell). A region of
// fewer axes than the tensor is of its last ones.
function regionOutlines(g, t, { lo, hi }, paths) {
  const off = t.shape.length - lo.length, { rows, cols } = t.grid;
  const at = (bound, k) => (k == null || k < off ? 0 : bound[k - off]);
  for (let plane = g.first; plane < g.first + g.count; plane++) {
    const index = planeIndex(t, plane); // the plane's index along the axes numbering planes, against the region's
    if (t.grid.planes.some((k) => k >= off && (index[k] < lo[k - off] || index[k] > hi[k - off]))) continue;
    const [x, y] = cellXY(g, plane, at(lo, rows), at(lo, cols));
    const w = (at(hi, cols) - at(lo, cols) + 1) * g.cell - 4, h = (at(hi, rows) - at(lo, rows) + 1) * g.cell - 4;
    paths.solid += `M${x + 2} ${y + 2}h${w}v${h}h${-w}Z`;
  }
  return paths;
}

// The outlines of `cells` (full indices, or shorter ones of the last axes; or a region) on a figure of tensor `t`
// laid out as `g`, as path data: { solid, dashed } (dashed: cells outside the tensor, its padding, where
// `dashOutside`); a cell on another page of planes has none.
export function outlines(g, t, cells, dashOutside) {
  const paths = { solid: "", dashed: "" };
  if (isRegion(cells)) return regionOutlines(g, t, cells, paths);
  for (const c of cells) {
    const [plane, h, w] = cellPlace(t, c);
    if (plane < g.first || plane >= g.first + g.count) continue;
    const inside = h >= 0 && w >= 0 && h < g.h && w < g.w, [x, y] = cellXY(g, plane, h, w), side = g.cell - 4;
    paths[dashOutside && !inside ? "dashed" : "solid"] += `M${x + 2} ${y + 2}h${side}v${side}h${-side}Z`;
  }
  return paths;
}

export function mark(fig, cells, colour, dashOutside) { // a white halo under the colour: visible on any cell
  const paths = outlines(fig.g, fig.t, cells, dashOutside);
  for (const [d, dash] of [[paths.solid, ""], [paths.dashed, "4 3"]]) if (d) stroke(fig, d, colour, dash);
}

// The border of a set of cells (a slice's region): each cell's sides that no other cell of the set shares, so a
// box of cells reads as one box and cells apart (a stride) as boxes apart.
export function regionPath(g, t, cells) {
  const seen = new Set(), shown = [];
  for (const c of cells) {
    const [plane, h, w] = cellPlace(t, c);
    if (plane < g.first || plane >= g.first + g.count) continue;
    seen.add(`${plane},${h},${w}`); shown.push([plane, h, w]);
  }
  let d = "";
  for (const [plane, h, w] of shown) {
    const [x, y] = cellXY(g, plane, h, w), s = g.cell, out = (dh, dw) => !seen.has(`${plane},${h + dh},${w + dw}`);
    if (out(-1, 0)) d += `M${x} ${y}h${s}`;
    if (out(1, 0)) d += `M${x} ${y + s}h${s}`;
    if (out(0, -1)) d += `M${x} ${y}v${s}`;
    if (out(0, 1)) d += `M${x + s} ${y}v${s}`;
  }
  return d;
}

export function markRegion(fig, cells, colour) {
  const d = regionPath(fig.g, fig.t, cells);
  if (d) stroke(fig, d, colour, "");
}

function stroke(fig, d, colour, dash) {
  for (const [width, line] of [[4, "#ffffff"], [2, colour]]) {
    const path = document.createElementNS(SVG, "path");
    for (const [k, v] of Object.entries({ d, fill: "none", stroke: line, "stroke-width": width, "stroke-dasharray": dash || "none" })) path.setAttribute(k, v);
    fig.overlay.append(path);
  }
  fig.overlay.__marks.push([d, colour, dash]);
}

export function strokeMarks(ctx, el, x, y) { // the overlay's marks on a canvas (the PNG), its corner at (x, y)
  ctx.save(); ctx.translate(x, y);
  for (const [d, colour, dash] of el.__marks) {
    const path = new Path2D(d);
    ctx.setLineDash(dash ? dash.split(" ").map(Number) : []);
    for (const [width, stroke] of [[4, "#ffffff"], [2, colour]]) { ctx.lineWidth = width; ctx.strokeStyle = stroke; ctx.stroke(path); }
  }
  ctx.restore();
}
