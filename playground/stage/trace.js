// The chain's hover trace: the cell under the pointer, the cells of its sources it reads, theirs in theirs back to
// the chain's input, and the cells downstream that read it; a click picks a cell, whose trace stays while the
// pointer is elsewhere. It composes the layers' read maps the answer carries (`chain.trace`, chainview.py: each
// layer's windows, as a layer page's; a pointwise layer's map is "same") in the browser: a hover asks nothing. The
// composition is pure (tests/js/trace.test.mjs); `Trace` draws it on the figures' overlays (heatmap.js's marks).
import { cellAt, clear, mark, markRegion } from "./heatmap.js";

export const LIMIT = 20000; // cells kept per tensor: past it the trace says where it stopped
export const WORK = 400000; // cells read while composing, kept or not
export const HOVER = "#ff6600", READS = "#0057b8", FEEDS = "#2e7d32"; // the cell, what it reads, what reads it

export const PICK_KEY = "pick"; // the link's picked cell: pick=KEY:INDEX (chain_address.PICK_KEY)
export const keyOf = (index) => index.join(",");
export const indexOf = (key) => key.split(",").map(Number);

// A window's cells: a list as sent, or a region's every cell ({ lo, hi }, inclusive), in row-major order.
export function cellsOf(w) {
  if (Array.isArray(w)) return w;
  const out = [], { lo, hi } = w, cell = [...lo];
  for (;;) {
    out.push([...cell]);
    let k = cell.length - 1;
    while (k >= 0 && cell[k] === hi[k]) { cell[k] = lo[k]; k--; }
    if (k < 0) return out;
    cell[k]++;
  }
}

// A link's picked cell ("activation:0,0,1,2") as { key, index }, or null where it is not one (the server names the
// rule: chain_address.from_query).
export function parsePick(text) {
  const m = /^([A-Za-z_][A-Za-z0-9_]*):(\d+(?:,\d+){0,4})$/.exec(text || "");
  return m ? { key: m[1], index: indexOf(m[2]) } : null;
}

const inside = (c, shape) => c.length === shape.length && c.every((v, i) => v >= 0 && v < shape[i]);

// {input name: window} of one output cell in a layer's map: what it reads, or its own cell ("same"), or null where
// the map was not sent (past its bounds).
function readsOf(map, cell) {
  if (map.same) return Object.fromEntries(Object.keys(map.sources).map((n) => [n, [indexOf(cell)]]));
  return map.reads ? map.reads[cell] || {} : null;
}

// The cells a tensor's cell depends on, back to the input: { cells: {KEY: Set of "i,j,…"}, stopped: [why] }.
// `layers`: chain.layers (in chain order), `trace`: chain.trace, `shapes`: {KEY: shape}.
export function back(layers, trace, shapes, key, index) {
  const cells = { [key]: new Set([keyOf(index)]) }, stopped = [];
  let work = 0;
  const at = layers.findIndex((l) => l.key === key);
  for (let i = at; i >= 0; i--) {
    const k = layers[i].key, need = cells[k], map = trace[k];
    if (!need || !need.size || !map) continue;
    if (!map.same && !map.reads) { stopped.push(map.stopped || `${k} sent no read map`); continue; }
    for (const cell of need) {
      const read = readsOf(map, cell);
      for (const [name, w] of Object.entries(read)) {
        const src = map.sources[name], into = (cells[src] ||= new Set());
        for (const c of cellsOf(w)) {
          if (++work > WORK) { stopped.push(`the trace read more than ${WORK} cells`); return { cells, stopped }; }
          if (!inside(c, shapes[src])) continue; // padding: read, but no cell of the tensor
          if (into.size >= LIMIT) { stopped.push(`${src}: more than ${LIMIT} cells`); return { cells, stopped }; }
          into.add(keyOf(c));
        }
      }
    }
  }
  return { cells, stopped };
}

// Each layer's map turned around: {source KEY: Map("i,j,…" of the source -> ["i,j,…" of the layer's output])},
// made once per answer and layer, as a hover first needs it (`cache`: the answer's).
function readersOf(map, cache, key) {
  if (cache[key]) return cache[key];
  const inv = {};
  if (map.reads) {
    for (const [out, read] of Object.entries(map.reads)) {
      for (const [name, w] of Object.entries(read)) {
        const m = (inv[map.sources[name]] ||= new Map());
        for (const c of cellsOf(w)) { const s = keyOf(c); if (!m.has(s)) m.set(s, []); m.get(s).push(out); }
      }
    }
  }
  return (cache[key] = inv);
}

// The cells downstream that read a tensor's cell, through every layer after it: { cells: {KEY: Set}, stopped }.
export function forward(layers, trace, key, index, cache = {}) {
  const cells = { [key]: new Set([keyOf(index)]) }, stopped = [];
  let work = 0;
  for (const l of layers) {
    const map = trace[l.key];
    if (!map) continue;
    const fed = Object.values(map.sources).filter((s) => cells[s] && cells[s].size);
    if (!fed.length) continue;
    if (!map.same && !map.reads) { stopped.push(map.stopped || `${l.key} sent no read map`); continue; }
    const into = (cells[l.key] ||= new Set()), inv = map.same ? null : readersOf(map, cache, l.key);
    for (const src of new Set(fed)) {
      for (const c of cells[src]) {
        const outs = inv ? (inv[src] && inv[src].get(c)) || [] : [c];
        work += outs.length;
        if (work > WORK) { stopped.push(`the trace read more than ${WORK} cells`); return { cells, stopped }; }
        for (const o of outs) {
          if (into.size >= LIMIT) { stopped.push(`${l.key}: more than ${LIMIT} cells`); return { cells, stopped }; }
          into.add(o);
        }
      }
    }
  }
  return { cells, stopped };
}

// The trace on a row of figures: `show(chain, figs)` after each drawing (the figures' overlays are cleared by it),
// `figs()`: the figures drawn, by key (figures.js's `figs`: { g, t, overlay, canvas }).
export class Trace {
  constructor(rowEl, figs, linked = true) { // linked: the page's address holds the pick (a compared chain's does not)
    Object.assign(this, { rowEl, figs, linked, chain: null, pick: null, cache: {} });
    if (linked) this.pick = parsePick(new URLSearchParams(window.location.search).get(PICK_KEY));
    this.note = Object.assign(document.createElement("div"), { className: "pg-trace-note" }); // where a trace stopped
    rowEl.after(this.note);
    const at = (ev) => { // the figure and cell under the pointer, or null
      const el = ev.target.closest && ev.target.closest("[data-figure] .pg-canvas");
      const which = el && el.closest("[data-figure]").dataset.figure, fig = which && this.figs()[which];
      const c = fig && cellAt(fig, ev);
      return c ? { key: which, index: c.index } : null;
    };
    // figures.js's own handlers clear the overlays as the pointer moves and leaves: the trace is drawn after them
    rowEl.addEventListener("mousemove", (ev) => { const c = at(ev); if (c) this.draw(c); else this.draw(this.pick); });
    rowEl.addEventListener("mouseleave", () => setTimeout(() => this.draw(this.pick), 0));
    rowEl.addEventListener("click", (ev) => { const c = at(ev); if (c) { this.pick = c; this.draw(c); this.link(); } });
  }

  link() { // the picked cell into the address bar, beside the stage's keys (which keep it)
    if (!this.linked) return;
    const url = new URL(window.location.href);
    url.searchParams.set(PICK_KEY, `${this.pick.key}:${keyOf(this.pick.index)}`);
    url.search = url.searchParams.toString().replace(/%2C/g, ",").replace(/%3A/g, ":"); // reads as the page's own keys
    try { window.history.replaceState(window.history.state, "", url.toString()); } catch (e) { /* too many writes: the next click writes it */ }
  }

  show(chain) { // a new answer: its maps; the picked cell kept where its tensor still holds it
    if (!this.chain || chain.trace !== this.chain.trace) this.cache = {}; // the maps turned around, per answer
    this.chain = chain;
    const figs = this.figs(), fig = this.pick && Object.hasOwn(figs, this.pick.key) && figs[this.pick.key]; // a link's key: any text
    if (this.pick && !(fig && inside(this.pick.index, fig.t.shape))) this.pick = null;
    this.draw(this.pick);
  }

  draw(at) {
    const figs = this.figs(), chain = this.chain;
    for (const f of Object.values(figs)) clear(f.overlay);
    const row = this.rowEl.dataset;
    row.tracePick = this.pick ? `${this.pick.key}:${keyOf(this.pick.index)}` : "";
    if (!at || !chain || !chain.trace || !Object.hasOwn(figs, at.key)) { row.traced = "{}"; this.note.textContent = ""; return; }
    const id = `${at.key}:${keyOf(at.index)}`; // the pointer moves within a cell: composed once
    if (!this.last || this.last.id !== id || this.last.trace !== chain.trace) {
      const shapes = Object.fromEntries(Object.entries(figs).map(([k, f]) => [k, f.t.shape]));
      this.last = { id, trace: chain.trace, up: back(chain.layers, chain.trace, shapes, at.key, at.index),
                    down: forward(chain.layers, chain.trace, at.key, at.index, this.cache) };
    }
    const { up, down } = this.last;
    const counts = {};
    for (const [cells, colour, sign] of [[up.cells, READS, -1], [down.cells, FEEDS, 1]]) {
      for (const [k, set] of Object.entries(cells)) {
        if (k === at.key || !figs[k] || !set.size) continue;
        markRegion(figs[k], [...set].map(indexOf), colour);
        counts[k] = sign * set.size;
      }
    }
    mark(figs[at.key], [at.index], HOVER, false);
    row.traced = JSON.stringify(counts); // for tests: cells outlined per tensor (read: negative, reading: positive)
    const stopped = [...new Set([...up.stopped, ...down.stopped])].join("; ");
    if (this.note.textContent !== (stopped && `The trace stops: ${stopped}.`)) this.note.textContent = stopped && `The trace stops: ${stopped}.`;
  }
}
