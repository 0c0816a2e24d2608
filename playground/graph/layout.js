// The graph's layout, in a web worker (graph.js starts it): the boxes shown, laid out by dagre (vendored:
// dagre.esm.js), the expanded groups as compound clusters around their contents, off the page's thread so that
// a large graph never holds the page. Messages:
// {seq, boxes: [{id, parent, w, h}], clusters: [{id, parent}], edges: [[from, to]], spacing} -> {seq, width,
// height, boxes: [[id, x, y]], clusters: [[id, x, y, w, h]], edges: [[x, y, x, y, …]]} (centres, in the order given).
import dagre from "./dagre.esm.js";

if (typeof self !== "undefined" && typeof window === "undefined") self.onmessage = (ev) => { // in the worker
  const msg = ev.data;
  try {
    self.postMessage(layout(dagre, msg));
  } catch (err) {
    self.postMessage({ seq: msg.seq, error: String(err) });
  }
};

// (dagre, a request) -> its answer (tests/js/layout.test.mjs calls it outside a worker)
export function layout(d, { seq, boxes, clusters, edges, spacing }) {
  const g = new d.graphlib.Graph({ compound: clusters.length > 0 });
  g.setGraph({ rankdir: "TB", nodesep: spacing.nodesep, ranksep: spacing.ranksep, marginx: spacing.margin,
               marginy: spacing.margin });
  g.setDefaultEdgeLabel(() => ({}));
  for (const c of clusters) g.setNode(c.id, {});
  for (const b of boxes) g.setNode(b.id, { width: b.w, height: b.h });
  for (const c of clusters) if (c.parent !== null) g.setParent(c.id, c.parent);
  for (const b of boxes) if (b.parent !== null) g.setParent(b.id, b.parent);
  for (const [a, b] of edges) if (g.hasNode(a) && g.hasNode(b)) g.setEdge(a, b);
  d.layout(g);
  const size = g.graph();
  return {
    seq,
    width: size.width,
    height: size.height,
    boxes: boxes.map((b) => { const n = g.node(b.id); return [b.id, n.x, n.y]; }),
    clusters: clusters.map((c) => { const n = g.node(c.id); return [c.id, n.x, n.y, n.width, n.height]; }),
    edges: edges.map(([a, b]) => (g.edge(a, b)?.points || []).flatMap((p) => [p.x, p.y])),
  };
}
