// The graph's layout, in a web worker (graph.js starts it), per group as Model Explorer lays a graph out: each
// open group's contents (its level: its children, each a box) laid out by dagre (vendored: dagre.esm.js) on their
// own and kept, and its parent's level laying the open group out as one box of that size (its contents' and a head
// for its name). Opening or closing a group lays out that group's level (where not kept) and its ancestors', not
// the whole graph: a level is laid out again only where its own boxes, their sizes or its edges changed. Off the
// page's thread so that a large graph never holds the page. Messages:
// {seq, levels: [{id, boxes: [{id, w, h} or {id, open: true}], edges: [[from, to]]}] (an open box's level before
// its parent's, the root's last), spacing, head} -> {seq, laid: [the levels dagre laid out for it], levels: [{id,
// width, height, boxes: [[id, x, y, w, h]], edges: [[x, y, x, y, …]]}]} (centres in the level's own coordinates,
// its top left at 0, 0; in the order given).
import dagre from "./dagre.esm.js";

export const KEEP = 4096; // levels kept (an LRU by their inputs): a closed group opened again is not laid out again
const kept = new Map();

if (typeof self !== "undefined" && typeof window === "undefined") self.onmessage = (ev) => { // in the worker
  const msg = ev.data;
  try {
    self.postMessage(layoutLevels(dagre, msg));
  } catch (err) {
    self.postMessage({ seq: msg.seq, error: String(err) });
  }
};

// (dagre, a request, the levels kept) -> its answer (tests/js/layout.test.mjs calls it outside a worker)
export function layoutLevels(d, { seq, levels, spacing, head }, cache = kept) {
  const size = new Map(), out = [], laid = [];
  for (const level of levels) {
    const boxes = level.boxes.map((b) => {
      if (!b.open) return b;
      const [w, h] = size.get(b.id);
      return { id: b.id, w, h };
    });
    const key = JSON.stringify([level.id, boxes, level.edges, spacing]); // everything its layout depends on
    let answer = cache.get(key);
    if (answer) cache.delete(key); // the newest again
    else {
      answer = layout(d, level.id, boxes, level.edges, spacing);
      laid.push(level.id);
    }
    cache.set(key, answer);
    if (cache.size > KEEP) cache.delete(cache.keys().next().value);
    size.set(level.id, [answer.width, answer.height + head]);
    out.push(answer);
  }
  return { seq, laid, levels: out };
}

// one level: its boxes and the edges between them, top to bottom
function layout(d, id, boxes, edges, spacing) {
  const g = new d.graphlib.Graph();
  g.setGraph({ rankdir: "TB", nodesep: spacing.nodesep, ranksep: spacing.ranksep, marginx: spacing.margin,
               marginy: spacing.margin });
  g.setDefaultEdgeLabel(() => ({}));
  for (const b of boxes) g.setNode(b.id, { width: b.w, height: b.h });
  for (const [a, b] of edges) if (g.hasNode(a) && g.hasNode(b)) g.setEdge(a, b);
  d.layout(g);
  const whole = g.graph();
  return {
    id,
    width: whole.width,
    height: whole.height,
    boxes: boxes.map((b) => { const n = g.node(b.id); return [b.id, n.x, n.y, b.w, b.h]; }),
    edges: edges.map(([a, b]) => (g.edge(a, b)?.points || []).flatMap((p) => [p.x, p.y])),
  };
}
