// The graph's elements (graph.js draws with them): SVG and HTML made with their attributes, every text set as text;
// a box's sizes at the page's type; a text cut to its room.

// A box and the spacing, at the root's 16 px type; drawn at the page's type (presenter mode's root is larger: the
// names grow as every rem-sized text does, their boxes with them). The names' sizes are graph.css's, in rem.
export const BOX = { w: 190, h: 46, pad: 7, label: 18, detail: 36, inset: 8, nodesep: 24, ranksep: 40, margin: 16,
                     shape: 12, stack: 4 };
const NS = "http://www.w3.org/2000/svg";

export function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (parent) parent.append(e);
  return e;
}

export function html(name, attrs, parent, text) {
  const e = document.createElement(name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  if (parent) parent.append(e);
  return e;
}

export function scaled(root) {
  const u = parseFloat(getComputedStyle(root.ownerDocument.documentElement).fontSize) / 16 || 1;
  return Object.fromEntries(Object.entries(BOX).map(([k, v]) => [k, v * u]));
}

// (text, room) -> the text, cut with "…" where it is wider than `room`: measured on a canvas in `sample`'s font, so
// a graph of many boxes lays out once, not per box.
export function textFitter(sample) {
  const ctx = sample.ownerDocument.createElement("canvas").getContext("2d");
  const s = getComputedStyle(sample);
  ctx.font = `${s.fontStyle} ${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
  return (text, room) => {
    if (ctx.measureText(text).width <= room) return text;
    let lo = 1, hi = text.length - 1; // the longest head that fits with its "…"
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(text.slice(0, mid) + "…").width <= room) lo = mid; else hi = mid - 1;
    }
    return text.slice(0, lo) + "…";
  };
}
