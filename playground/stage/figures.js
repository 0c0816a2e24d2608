// The figures row: one heatmap per tensor of an answer (input, kernel, output, compare mode's and error maps), each
// with its title, stats line and plane pager; hover (the tooltip, the windows a cell reads or feeds), a click that
// picks an output cell, and the PNG of all of them. The stage gives the answer and the picked cell (`stage.answer`,
// `stage.pick`, `stage.setPick`).
import { drawnAxes, esc, precise, stats } from "./format.js";
import { FIGURE_GAP, MAX_PLANES, cellAt, chooseScales, clear, drawnIndex, fitCells, fitOverlay, inWindow, layout, mark, markRegion, overlay, padOf, paint, shown, sized, strokeMarks, windowCell, windowSize } from "./heatmap.js";
import { has, value } from "./store.js";

// Cells keep their size while values change (padding that widens the input, a refusal's banner): the row
// scrolls sideways instead, up to this many times its width; past it (or on a resize, a new input, another set
// of figures) the cells are fitted again.
export const KEEP_UP_TO = 1.6;
const MIN_FIGURE_PX = 120; // a figure's width at least: its caption's words
const PRESENTER_CAP = 120; // fitCells' largest cell in presenter mode
const MAX_LINES = 4, WRAP_LOSS = 0.85; // a chain's lines of figures, and the width a wrap leaves unused (about)
const BOLD = "bold 12px system-ui, sans-serif", SMALL = "11px system-ui, sans-serif"; // the PNG's captions

export class Figures {
  constructor(stage, rowEl, tip) {
    Object.assign(this, { stage, rowEl, tip, presenter: Boolean(stage.data.presenter) });
    this.figs = {}; this.pages = {}; this.kept = null;
  }

  // Where the figures may go: the row's width, and the window's height under the row's top (less, in presenter
  // mode, the picked cell's line under the figures; the controls are beside them).
  room() {
    const line = this.stage.answer && this.stage.answer.cells ? Math.max(this.stage.cellEl?.offsetHeight || 0, 40) : 0;
    const under = this.presenter ? line + 16 : 110;
    const flow = (parseFloat(this.rowEl.style.paddingTop) || 0) + (parseFloat(this.rowEl.style.paddingBottom) || 0); // a chain's arcs and kernel names (flow.js)
    return { width: this.rowEl.clientWidth || 800,
             height: Math.max(200, window.innerHeight - this.rowEl.getBoundingClientRect().top - under - flow) };
  }

  // The smallest font a cell's digits take: in presenter mode the captions' (the room reads the digits before the
  // captions: fewer digits before smaller ones), else heatmap.js's own floor.
  least() {
    if (!this.presenter) return 0;
    const cap = this.rowEl.querySelector("figcaption");
    return cap ? Math.round(parseFloat(getComputedStyle(cap).fontSize)) : 16;
  }

  // One size for every figure's cells: the page's (view.cell: a documentation gallery's one size), else the kept
  // one while it still fits (KEEP_UP_TO), else the largest that fits. Kept for the same figures of the same first
  // shape drawing as many planes each: a plane more (Gather's mode DEFAULT, another output map) is another layout,
  // fitted again, not one that runs past the row's edge.
  cells(figs) {
    const fixed = Number(this.stage.data.cell) || 0;
    this.fitted = false;
    if (fixed) return Object.fromEntries(figs.map((f) => [f.which, fixed]));
    const { width, height } = this.room(), key = `${figs.map((f) => f.which).join(",")}|${figs[0].t.shape}|${figs.map((f) => shown(f).count)}`;
    const across = (px) => figs.reduce((w, f) => w + Math.max(layout(f, px[f.which], f.pad).width, MIN_FIGURE_PX) + FIGURE_GAP, -FIGURE_GAP);
    // a chain's row wraps (stage.css): its figures fill as many lines as give its cells the largest size
    const lines = this.stage.data.chain ? this.lines(figs, width, height) : 1;
    let fresh = fitCells(figs, width * lines * WRAP_LOSS ** (lines - 1), height / lines, this.presenter);
    // a narrow figure's caption holds it wider: the cells shrink while that narrows the row, and no further (on a
    // phone the captions alone are wider than the stage: the row scrolls, its cells kept big enough to read)
    const least = figs.length * (MIN_FIGURE_PX + FIGURE_GAP) - FIGURE_GAP;
    while (lines === 1 && across(fresh) > Math.max(width, least) && Object.values(fresh).every((v) => v > 4)) {
      fresh = Object.fromEntries(Object.entries(fresh).map(([w, v]) => [w, Math.floor(v) - 1]));
    }
    const k = this.kept, resized = this.resized;
    this.resized = false;
    // the same figures in about the same room (a page scrollbar coming or going is not a new room); after a resize
    // (a sidebar opening in steps of its slide) kept cells must fit the width, not scroll: the slide's last step
    // may be a few pixels from the step they were fitted at
    if (k && k.key === key && Math.abs(k.width - width) <= 40 && Math.abs(k.height - height) <= 80) {
      if (across(k.px) <= width * lines * (resized ? 1 : KEEP_UP_TO)) { this.fitted = false; return k.px; }
    }
    this.kept = { key, width, height, px: fresh };
    this.fitted = true; // fitted afresh: presenter mode's figures may grow into the room left (grow)
    return fresh;
  }

  // The lines a chain's figures wrap over: the count (up to MAX_LINES) whose fitted cells are the largest.
  lines(figs, width, height) {
    let best = 1, size = 0;
    for (let n = 1; n <= Math.min(figs.length, MAX_LINES); n++) {
      const px = Math.min(...Object.values(fitCells(figs, width * n * WRAP_LOSS ** (n - 1), height / n, this.presenter)));
      if (px > size) { best = n; size = px; }
    }
    return best;
  }

  // The figures of the answer shown. A figure that stays (the same `which`) keeps its elements and canvases (a
  // fresh 2-D context costs more than painting a small tensor), and is painted again only where its picture
  // changed: a kernel a padding step leaves alone is not redrawn.
  draw(grown = null) { // grown: the cells grow() gave the figures just drawn
    const a = this.stage.answer, figs = a.figures.map((f) => ({ ...f, title: sourced(f, this.stage.data.source) }));
    const scales = chooseScales(figs);
    for (const f of figs) { f.pad = this.padding(f.which); f.first = this.pages[f.which] || 0; }
    // a page of planes the tab does not hold (turned, or an answer asked before the turn): asked for, then drawn
    const missing = figs.map((f) => [f, shown(f)]).filter(([f, g]) => !has(f.t, g.first, g.count));
    if (missing.length) { this.stage.askPlanes(missing.map(([f, g]) => [f.t, g.first, g.count])); return; }
    const cellPx = grown || this.cells(figs);
    this.rowEl.dataset.cells = JSON.stringify(cellPx); // for tests: the size each figure's cells are drawn at
    const old = this.figs, els = figs.map((f) => (old[f.which] ? old[f.which].el : this.figure(f.which)));
    for (const el of [...this.rowEl.children]) if (!els.includes(el)) el.remove(); // a frame, a figure gone
    this.figs = {};
    // the page written first (places, widths, canvases' sizes), then painted: a canvas in the page works out the
    // page's layout when its font is set, once where nothing was written between
    // the page's one cell size (view.cell) does not shrink to the row: a figure's planes wrap at its width instead
    const least = this.least(), wrap = Number(this.stage.data.cell) ? this.room().width : Infinity;
    const fresh = figs.map((f, i) => {
      const el = els[i], was = old[f.which];
      if (this.rowEl.children[i] !== el) this.rowEl.insertBefore(el, this.rowEl.children[i] || null);
      const g = layout(f, cellPx[f.which], f.pad, wrap);
      el.style.width = Math.max(g.width, MIN_FIGURE_PX) + "px"; // the caption wraps under its figure
      const fig = { ...f, g, least, canvas: el.__canvas, overlay: el.__overlay, scale: scales[f.which], el, dpr: window.devicePixelRatio || 1 };
      this.figs[f.which] = fig;
      if (was && samePicture(was, fig)) return null;
      sized(fig.canvas, g, fig.dpr); fitOverlay(fig.overlay, g);
      return fig;
    });
    for (const fig of fresh) if (fig) paint(fig, this.presenter);
    figs.forEach((f, i) => {
      const el = els[i], g = this.figs[f.which].g;
      const text = `<b>${esc(f.title)}</b><br><span class="pg-stats">${esc(stats(f.t))}</span>` +
        (f.scale ? `<br><span class="pg-scale">${esc(f.scale)}</span>` : ""); // why its colours are not its inputs'
      const caption = text + (g.total > g.count ? `|${g.first}|${g.count}|${g.total}` : "");
      if (el.__caption !== caption) { // the pager's buttons are the caption's: made again with it
        const cap = el.querySelector("figcaption");
        cap.innerHTML = text;
        if (g.total > g.count) cap.append(this.pager(f.which, g));
        el.__caption = caption;
      }
    });
    this.outlinePick();
    this.stage.chainDrawing?.draw(); // a chain's arrows, engine boxes and trace over the figures just drawn
    if (this.presenter && this.fitted && !grown) this.grow(cellPx);
  }

  // Presenter mode: the figures take the free width and height. fitCells keeps a cell's height and a caption's
  // 76 px spare for every figure; once drawn, the room really left under the figures and beside them is known, and
  // the shared cells grow by what both leave (digits scale with cells), drawn once more.
  grow(cellPx) {
    const figs = Object.values(this.figs), { width, height } = this.room(), top = this.rowEl.getBoundingClientRect().top;
    const common = Math.max(...Object.values(cellPx)), sharing = figs.filter((f) => cellPx[f.which] === common);
    if (!sharing.length || common < 1) return;
    const across = figs.reduce((w, f) => w + f.el.offsetWidth + FIGURE_GAP, -FIGURE_GAP);
    const units = sharing.reduce((n, f) => n + f.g.across * f.g.cols + (f.g.across - 1) * (f.g.gap === f.g.cell ? 1 : 0), 0);
    let by = Math.floor((width - across) / Math.max(units, 1));
    const slack = 8; // the lines under the figures may settle a few pixels taller once the cells have grown
    for (const f of sharing) by = Math.min(by, Math.floor((top + height - slack - f.el.getBoundingClientRect().bottom) / f.g.rows));
    by = Math.min(by, PRESENTER_CAP - common);
    if (by < 1) return;
    const px = { ...cellPx };
    for (const f of sharing) px[f.which] = common + by;
    if (this.kept) this.kept.px = px; // kept as any fitted size is: a value change does not shrink it back
    this.draw(px);
  }

  figure(which) { // a figure's elements, wired once: its handlers read the figure drawn there now
    const el = document.createElement("figure");
    el.className = "pg-figure"; el.dataset.figure = which;
    const canvas = document.createElement("canvas"), marks = overlay();
    const holder = document.createElement("div"); holder.className = "pg-canvas"; holder.append(canvas, marks);
    el.append(holder, document.createElement("figcaption"));
    Object.assign(el, { __canvas: canvas, __overlay: marks });
    this.wire(which, holder);
    return el;
  }

  // Before the first answer's values are here (a large configuration's come by the route): a frame per figure, its
  // title and shape, where the figure will be drawn, so that the stage is never blank.
  frames(answer) {
    this.rowEl.innerHTML = answer.figures.map((f) => `<div class="pg-frame" data-frame="${esc(f.which)}"><b>${esc(f.title)}</b><br>` +
      `shape (${esc(drawnAxes(f.tensor).map((k) => f.tensor.shape[k]).join(", "))}) · drawing…</div>`).join("");
  }

  pager(which, g) { // planes first … last of total, and the buttons that walk through them
    const nav = document.createElement("div"); nav.className = "pg-pager";
    const step = (d) => { this.pages[which] = Math.max(0, Math.min(g.total - 1, g.first + d * MAX_PLANES)); this.draw(); };
    const button = (text, d, label) => {
      const b = document.createElement("button"); b.textContent = text; b.setAttribute("aria-label", label);
      b.disabled = d < 0 ? g.first === 0 : g.first + g.count >= g.total; b.onclick = () => step(d); return b;
    };
    const what = document.createElement("span");
    what.textContent = `planes ${g.first + 1}–${g.first + g.count} of ${g.total}`;
    nav.append(button("‹", -1, `previous ${MAX_PLANES} planes of ${which}`), what, button("›", 1, `next ${MAX_PLANES} planes of ${which}`));
    return nav;
  }

  named(which, index) { // a cell's index as its figure names it (its drawn axes': the tooltip's, the picked line's)
    const f = this.stage.answer.figures.find((g) => g.which === which);
    return f ? drawnIndex(f.tensor, index) : index;
  }

  padding(which) { // the input's panel grows by the padding the windows read (drawn dashed): the server's extent,
    // along the rows and columns its grid draws (a scalar's: none)
    const cells = this.stage.answer.cells, input = this.stage.answer.figures.find((f) => f.which === "input");
    return which === "input" && cells && cells.extent && input ? padOf(cells.extent, input.tensor) : null;
  }

  outlinePick() { // the layer's region on the input (a slice's), the picked output cell and the input window it reads
    for (const f of Object.values(this.figs)) clear(f.overlay);
    const cells = this.stage.answer.cells, pick = this.stage.pick;
    if (!cells || !this.figs.output) return;
    if (cells.region && this.figs.input) markRegion(this.figs.input, cells.region, "#2e7d32");
    mark(this.figs.output, [pick], "#ff6600", false);
    if (this.figs.input) mark(this.figs.input, cells.reads[pick.join(",")] || [], "#000000", true);
    this.markAlso(pick, "#000000");
  }

  markAlso(index, colour) { // a layer of several inputs: the cell each other input gives this output cell
    for (const [which, map] of Object.entries(this.stage.answer.cells.also || {})) {
      if (this.figs[which] && map[index.join(",")]) mark(this.figs[which], map[index.join(",")], colour, true);
    }
  }

  wire(which, holder) {
    const tip = this.tip, root = this.stage.root;
    const move = (ev) => {
      const fig = this.figs[which], c = cellAt(fig, ev);
      if (!c) { tip.style.display = "none"; this.outlinePick(); return; }
      tip.innerHTML = `${esc(fig.title)} (${c.shown.join(", ")})<br>value = ${precise(value(fig.t, c.flat))}`;
      const r = root.getBoundingClientRect();
      tip.style.display = "block";
      tip.style.left = Math.min(ev.clientX - r.left + 14, r.width - 180) + "px";
      tip.style.top = ev.clientY - r.top + 14 + "px";
      this.hover(fig, c.index);
    };
    holder.addEventListener("pointerdown", (ev) => { this.lastPointer = ev.pointerType; });
    holder.addEventListener("mousemove", (ev) => { if (this.lastPointer !== "touch") move(ev); }); // not a tap's echo
    holder.addEventListener("mouseleave", () => { tip.style.display = "none"; this.outlinePick(); });
    holder.addEventListener("pointerup", (ev) => { // a tap shows the value, a second hides it
      if (ev.pointerType !== "touch") return;
      const c = cellAt(this.figs[which], ev), key = c ? `${which}:${c.index.join(",")}` : "";
      if (!c || tip.dataset.tapped === key) { tip.style.display = "none"; tip.dataset.tapped = ""; return; }
      move(ev);
      tip.dataset.tapped = key;
    });
    holder.addEventListener("click", (ev) => {
      const c = cellAt(this.figs[which], ev);
      if (c && which === "output" && this.stage.answer.cells) this.stage.setPick(c.index);
    });
  }

  hover(fig, index) { // output → its input window; input → the outputs it feeds; kernel tap → its input cells
    const cells = this.stage.answer.cells;
    if (!cells) return;
    this.outlinePick();
    if (fig.which === "output") {
      const reads = cells.reads[index.join(",")];
      if (reads && this.figs.input) mark(this.figs.input, reads, "#0057b8", true);
      this.markAlso(index, "#0057b8");
    } else if (fig.which === "input") {
      const fed = [];
      for (const [out, reads] of Object.entries(cells.reads)) if (inWindow(reads, index)) fed.push(out.split(",").map(Number));
      if (this.figs.output) mark(this.figs.output, fed, "#0057b8", false);
    } else if (fig.which === "kernel") {
      // a convolution's reads are channel by channel, each its window's taps row by row: (c, tap) is one cell
      const reads = cells.reads[this.stage.pick.join(",")] || [], sp = fig.t.shape.slice(2);
      const taps = sp.reduce((a, b) => a * b, 1), tap = index.slice(2).reduce((acc, v, i) => acc * sp[i] + v, 0);
      const hit = windowSize(reads) === fig.t.shape[1] * taps ? [windowCell(reads, index[1] * taps + tap)] : [];
      if (this.figs.input) mark(this.figs.input, hit, "#c2185b", true);
    }
  }

  picture(scale = 2) { // the PNG's canvas (savePng), `scale` device pixels a CSS pixel
    const pad = 12, title = 18, figs = Object.values(this.figs);
    if (!figs.length) return null;
    const probe = document.createElement("canvas").getContext("2d");
    const measure = (text, font) => { probe.font = font; return Math.ceil(probe.measureText(text).width); };
    const cols = figs.map((f) => Math.max(f.g.width, measure(f.title, BOLD), measure(stats(f.t), SMALL)));
    const width = cols.reduce((w, c) => w + c + FIGURE_GAP, pad * 2 - FIGURE_GAP);
    const height = pad * 2 + title + Math.max(...figs.map((f) => f.g.height)) + 44;
    const out = document.createElement("canvas");
    out.width = width * scale; out.height = height * scale;
    const ctx = out.getContext("2d"), answer = this.stage.answer;
    ctx.scale(scale, scale);
    ctx.fillStyle = "#ffffff"; ctx.fillRect(0, 0, width, height);
    ctx.fillStyle = "#111827"; ctx.font = "bold 15px system-ui, sans-serif"; ctx.textBaseline = "top";
    ctx.fillText(`${answer.title} · ${answer.shapes}`, pad, pad);
    let x = pad;
    figs.forEach((f, i) => {
      const y = pad + title + 6, sharp = { ...f, canvas: document.createElement("canvas") };
      sized(sharp.canvas, f.g, scale); // `scale` device pixels a CSS pixel
      paint(sharp, this.presenter);
      ctx.drawImage(sharp.canvas, x, y, f.g.width, f.g.height);
      strokeMarks(ctx, f.overlay, x, y);
      ctx.fillStyle = "#111827"; ctx.font = BOLD;
      ctx.fillText(f.title, x, y + f.g.height + 4);
      ctx.font = SMALL;
      ctx.fillText(stats(f.t), x, y + f.g.height + 20);
      x += cols[i] + FIGURE_GAP;
    });
    return out;
  }

  // Every figure, its title and its stats, on one picture at twice the screen's pixels with an opaque white
  // background (a transparent one loses its dark text in a dark-mode document), saved as `name`.png. Each figure
  // is painted again at that scale (crisp digits, not the screen's upscaled), and each column is as wide as its
  // caption: a kernel's stats line never runs into the next figure's.
  savePng(name) {
    const out = this.picture();
    if (!out) return;
    out.toBlob((blob) => {
      const a = document.createElement("a");
      a.href = URL.createObjectURL(blob); a.download = `${name}.png`; a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 1000);
    });
  }
}

// Whether a figure drawn before shows the same picture: its tensor, its cells' geometry and its colours (paint's inputs).
function samePicture(was, fig) {
  const g = fig.g, h = was.g, s = fig.scale, r = was.scale;
  return was.t === fig.t && was.dpr === fig.dpr && was.least === fig.least && s.lo === r.lo && s.hi === r.hi && s.stops === r.stops &&
    Object.keys(g).every((k) => (Array.isArray(g[k]) ? g[k].join() === h[k].join() : g[k] === h[k]));
}

// An input figure of a model's node on its real input says where its tensor comes from ("Input = relu's output, by
// ONNX Runtime"): the page's words ([figure, origin] pairs), a Map by figure
export function sourced(f, source) {
  const from = source && source.inputs ? new Map(source.inputs).get(f.which) : undefined;
  return from ? `${f.title} = ${from}` : f.title;
}
