// The chain drawn over its figures: an arrow from each tensor a layer reads to that layer's figure, and each engine
// layer as a box around the figures of the chain layers it computes, labelled with its kernel. The figures stay in
// the stage's row (figures.js lays them out, one line); the arrows are arcs in a band over the row and the boxes are
// outlines over it, placed from the figures' boxes in the page: SVG over a CSS flow, no layout of our own. Which
// engine layer computes which chain layer is the server's word (chainview.py: `chain.engine[].fuses`); this module
// only draws it. The geometry is pure (tests/js/flow.test.mjs); `Flow` puts it in the page.
import { esc } from "./format.js";
import { Trace } from "./trace.js";

const SVG = "http://www.w3.org/2000/svg";
export const PAD = 5, NEST = 4; // a box's margin around its figures; a box inside another's, the more
export const LIFT = 12, RISE = 12; // an arc's height over the figures: LIFT, and RISE more per figure it passes over
export const HUES = ["#7c3aed", "#0f766e", "#b45309", "#be185d", "#1d4ed8", "#4d7c0f"]; // a box's colour, by its engine layer
export const LABEL_PX = 18; // the band under the figures that the boxes' kernel names take
const MARGIN = 12; // the overlay's width past the row's on either side: a box's margin and its nesting

// The engine layers drawn as boxes: those that compute a chain layer (a layer that only moves data into a kernel's
// layout and back computes none: it is counted in the verdict line, not boxed).
export function boxesOf(chain) {
  return (chain.engine || []).filter((e) => e.fuses && e.fuses.length)
    .map((e, i) => ({ name: e.name, kernel: e.kernel, fuses: [...e.fuses], hue: HUES[i % HUES.length] }));
}

// The boxes shown: the engine's, or while a new configuration's engine builds (pending) the last engine's of the
// same layers, stale (dashed) until the verdict: a key press does not blank them. { boxes, stale }.
export function shownBoxes(chain, last) {
  const same = last && last.layers.map((l) => l.key).join() === chain.layers.map((l) => l.key).join();
  if (chain.status === "pending" && same) return { boxes: boxesOf(last), stale: true };
  return { boxes: boxesOf(chain), stale: false };
}

// Each tensor a layer reads, once: { from, to } by the figures' keys.
export function edgesOf(chain) {
  return chain.layers.flatMap((l) => [...new Set(l.sources)].map((s) => ({ from: s, to: l.key })));
}

// The figures' order on the row: the input, then each layer's output in chain order.
export function orderOf(chain) { return ["input", ...chain.layers.map((l) => l.key)]; }

// A box's figures as runs of neighbours on the row (a box whose chain layers are not neighbours is drawn in parts,
// never around a figure it does not compute).
export function runsOf(fuses, order) {
  const at = fuses.map((k) => order.indexOf(k)).filter((i) => i >= 0).sort((a, b) => a - b), runs = [];
  for (const i of at) {
    if (runs.length && runs[runs.length - 1].at(-1) === i - 1) runs[runs.length - 1].push(i);
    else runs.push([i]);
  }
  return runs.map((r) => r.map((i) => order[i]));
}

// Whether two figures lie on one line of the row (a chain's row wraps: stage.css); the figures align by their tops.
export const sameLine = (a, b) => Math.abs(a.y - b.y) < 2;

// A run cut where the row wraps: a box never holds the figures of a line between its parts.
export function byLine(run, rects) {
  const out = [];
  for (const k of run) {
    const last = out.at(-1);
    if (last && sameLine(rects[last.at(-1)], rects[k])) last.push(k); else out.push([k]);
  }
  return out;
}

// The boxes' rectangles from the figures' rectangles (rects[key] = { x, y, w, h }, in the overlay's pixels): each part
// around its figures with PAD to spare, a box around a figure another box already holds NEST further out (`depth`:
// how many it is outside of; its kernel's name a line lower than theirs).
export function boxRects(boxes, rects, order) {
  const depth = {}, out = [];
  for (const b of boxes) {
    const parts = runsOf(b.fuses, order).filter((run) => run.every((k) => rects[k])).flatMap((run) => byLine(run, rects));
    const d = Math.max(0, ...parts.flat().map((k) => depth[k] || 0));
    parts.forEach((run, part) => {
      const rs = run.map((k) => rects[k]), m = PAD + d * NEST;
      const x = Math.min(...rs.map((r) => r.x)) - m, y = Math.min(...rs.map((r) => r.y)) - m;
      out.push({ ...b, part, depth: d, figures: run, x, y, w: Math.max(...rs.map((r) => r.x + r.w)) + m - x, h: Math.max(...rs.map((r) => r.y + r.h)) + m - y });
    });
    for (const k of parts.flat()) depth[k] = d + 1;
  }
  return out;
}

// The arcs: each from the top of its source's figure to the top of its reader's, as high as the figures it passes
// over ask (a reader on a later line of the row: from under the source, down through the gap between the lines); a
// figure's arcs leave (arrive) at points spread along its top, so two never share an end.
export function arcs(edges, rects, order) {
  const drawn = edges.filter((e) => rects[e.from] && rects[e.to]);
  const ends = (key, side) => drawn.filter((e) => e[side] === key);
  const at = (e, side) => { // the x of an edge's end: its place among the figure's ends of that side, by span
    const key = e[side], r = rects[key], all = ends(key, side).sort((a, b) => order.indexOf(a[side === "from" ? "to" : "from"]) - order.indexOf(b[side === "from" ? "to" : "from"]));
    const k = all.indexOf(e), n = all.length, half = side === "from" ? [0.5, 0.95] : [0.05, 0.5];
    return r.x + r.w * (half[0] + (half[1] - half[0]) * (k + 1) / (n + 1));
  };
  return drawn.map((e) => {
    const a = rects[e.from], b = rects[e.to], span = Math.abs(order.indexOf(e.to) - order.indexOf(e.from));
    const x0 = at(e, "from"), x1 = at(e, "to"), y1 = b.y;
    if (!sameLine(a, b)) {
      const y0 = a.y + a.h + PAD, mid = (y0 + y1) / 2;
      return { ...e, span, top: y1, d: `M${x0} ${y0}C${x0} ${mid} ${x1} ${mid} ${x1} ${y1 - 1}` };
    }
    const top = Math.min(a.y, y1) - LIFT - RISE * (span - 1);
    return { ...e, span, top, d: `M${x0} ${a.y}C${x0} ${top} ${x1} ${top} ${x1} ${y1 - 1}` };
  });
}

// The band over the figures that the highest arc takes.
export function band(edges, order) {
  const spans = edges.map((e) => Math.abs(order.indexOf(e.to) - order.indexOf(e.from)));
  return LIFT + RISE * Math.max(0, ...spans.map((s) => s - 1)) + PAD + 4;
}

// The lines of kernel names under the figures: one per box nested around a figure (figures' rectangles aside).
export function labelLines(boxes, order) {
  const rects = Object.fromEntries(order.map((k, i) => [k, { x: i * 10, y: 0, w: 8, h: 8 }]));
  return 1 + Math.max(0, ...boxRects(boxes, rects, order).map((b) => b.depth));
}

// The engine's line under the figures: its builder and what it made of the chain, or that the verdict is awaited.
export function verdict(chain) {
  const st = chain.status, who = chain.builder || "TensorRT";
  if (st === "pending") return "Engine: building… its layers' boxes follow the builder's verdict (dashed: the last engine's).";
  if (st === "not_built") return "No TensorRT builds here: no engine, no boxes.";
  if (st === "refused" || st === "failed") return `The engine was not built (${who}): no boxes.`;
  const boxes = boxesOf(chain), moves = (chain.engine || []).length - boxes.length;
  const rtx = /rtx/i.test(who) ? " (TensorRT-RTX's fusions are not full TensorRT's)" : "";
  const parts = boxes.map((b) => (b.fuses.length > 1 ? `${b.fuses.join(" + ")} in one` : `${b.fuses[0]} alone`));
  return `Engine by ${who}${rtx}: ${boxes.length} computing layer${boxes.length === 1 ? "" : "s"} (${parts.join("; ")})` +
    `${moves ? `, ${moves} moving data between layouts` : ""}. Built, not run.`;
}

// An element's markup, written only where it changed: a key press that moves no figure rewrites nothing.
function html(el, markup) { if (el.__html !== markup) { el.innerHTML = markup; el.__html = markup; } }

// The flow over a row of figures: `draw(chain)` after each drawing of the figures (and on its own where the row
// scrolls or changes size).
export class Flow {
  constructor(rowEl) {
    this.rowEl = rowEl; this.chain = null;
    this.layer = document.createElement("div");
    this.layer.className = "pg-flow";
    this.svg = document.createElementNS(SVG, "svg");
    this.svg.setAttribute("class", "pg-flow-arcs");
    this.svg.innerHTML = `<defs><marker id="pg-flow-head" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto-start-reverse">` +
      `<path d="M0 0L8 4L0 8Z" fill="#374151"/></marker></defs><g></g>`;
    this.boxesEl = document.createElement("div");
    this.layer.append(this.svg, this.boxesEl);
    this.line = document.createElement("div");
    this.line.className = "pg-engine-line";
    rowEl.after(this.line);
    rowEl.parentElement.insertBefore(this.layer, rowEl);
    this.again = () => { if (this.chain) this.draw(this.chain); };
    rowEl.addEventListener("scroll", this.again, { passive: true });
    this.resizer = new ResizeObserver(this.again);
    this.resizer.observe(rowEl);
  }

  stop() { this.rowEl.removeEventListener("scroll", this.again); this.resizer.disconnect(); }

  draw(chain) {
    this.chain = chain;
    if (chain.status === "built" || chain.status === "cached") this.built = chain;
    const { boxes, stale } = shownBoxes(chain, this.built);
    const order = orderOf(chain), edges = edgesOf(chain), row = this.rowEl;
    const top = band(edges, order), lines = labelLines(boxes, order);
    const under = lines * LABEL_PX + PAD + NEST * (lines - 1) + 4; // the kernels' names under the figures
    if (row.style.paddingTop !== `${top}px`) row.style.paddingTop = `${top}px`;
    if (row.style.paddingBottom !== `${under}px`) row.style.paddingBottom = `${under}px`;
    const gap = `${top + under}px`; // a wrapped line's arcs over it, the line before's kernel names
    if (row.style.rowGap !== gap) row.style.rowGap = gap;
    // the overlay lies over the row's box (inside .pg-figures, which is positioned); figures measured against it
    // (MARGIN wider on either side: a box around a figure at the row's edge is drawn whole)
    const host = row.parentElement.getBoundingClientRect(), box = row.getBoundingClientRect(), m = MARGIN;
    const place = `left:${box.left - host.left - m}px;top:${box.top - host.top}px;width:${row.clientWidth + 2 * m}px;height:${box.height}px`;
    if (this.layer.__place !== place) {
      this.layer.style.cssText = place; this.layer.__place = place;
      this.svg.setAttribute("width", row.clientWidth + 2 * m); this.svg.setAttribute("height", box.height);
    }
    const rects = {};
    for (const el of row.querySelectorAll("[data-figure]")) {
      const r = el.getBoundingClientRect();
      rects[el.dataset.figure] = { x: r.left - box.left + m, y: r.top - box.top, w: r.width, h: r.height };
    }
    html(this.svg.querySelector("g"), arcs(edges, rects, order).map((a) =>
      `<path data-arrow="${esc(a.from)}>${esc(a.to)}" d="${a.d}" fill="none" stroke="#374151" stroke-width="1.5" marker-end="url(#pg-flow-head)"/>`).join(""));
    html(this.boxesEl, boxRects(boxes, rects, order).map((b) =>
      `<div class="pg-engine-box${stale ? " pg-engine-stale" : ""}" data-engine-layer="${esc(b.name)}" data-fuses="${esc(b.fuses.join(" "))}" data-part="${b.part}" ` +
      `title="${esc(`engine layer ${b.name}: ${b.kernel} computes ${b.fuses.join(" + ")}`)}" ` +
      `style="left:${b.x}px;top:${b.y}px;width:${b.w}px;height:${b.h}px;border-color:${b.hue}">` +
      (b.part ? "" : `<span class="pg-engine-kernel" style="top:calc(100% + ${b.depth * (LABEL_PX - NEST)}px);color:${b.hue}">${esc(b.kernel)}</span>`) + `</div>`).join(""));
    const text = verdict(chain);
    if (this.line.textContent !== text) { this.line.textContent = text; this.line.dataset.status = chain.status; }
  }
}

// What the stage draws of a chain (stage.js makes one where its page is a chain's, and draws it after each drawing
// of the figures and after the engine's verdict): the flow and the hover trace, from the answer's `chain` (layers,
// engine), its read maps (`trace`), its engine's status and builder.
export class ChainDrawing {
  constructor(stage, rowEl) {
    this.stage = stage;
    this.flow = new Flow(rowEl);
    this.trace = new Trace(rowEl, () => stage.figures.figs, stage.data.url !== false);
  }

  draw() {
    const a = this.stage.answer;
    if (!a || !a.chain) return;
    const chain = { ...a.chain, trace: a.trace, status: a.engine.status, builder: a.chain.builder };
    this.flow.draw(chain);
    this.trace.show(chain);
  }

  stop() { this.flow.stop(); }
}
