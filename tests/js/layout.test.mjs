// layout.js: the worker's layout, called here outside a worker, on the vendored dagre: an open group's outline holds
// its boxes, and every edge runs from one box to the next.
import assert from "node:assert/strict";
import { test } from "node:test";
import dagre from "../../playground/graph/dagre.esm.js";
import { layout } from "../../playground/graph/layout.js";
import { buildTree, visible } from "../../playground/graph/groups.js";

const spacing = { nodesep: 24, ranksep: 40, margin: 16 };

test("an open group's outline holds its boxes; each edge leaves its source and reaches its target", () => {
  const nodes = ["/stem/a", "/g/b", "/g/c", "/head/d"].map((id) => ({ id, op: "Relu", status: "agrees", diff: 0 }));
  const edges = [["/stem/a", "/g/b", "1×2", "t0"], ["/g/b", "/g/c", "1×2", "t1"], ["/g/c", "/head/d", "1×2", "t2"]];
  const v = visible(buildTree(nodes), new Set(["g:/g"]), edges);
  const request = {
    seq: 3, clusters: v.clusters, edges: v.edges.map((e) => [e.from, e.to]),
    boxes: v.boxes.map((b) => ({ ...b, w: 190, h: 46 })), spacing,
  };
  const r = layout(dagre, request);
  assert.equal(r.seq, 3);
  const at = new Map(r.boxes.map(([id, x, y]) => [id, { x, y }]));
  const [[, cx, cy, cw, ch]] = r.clusters;
  for (const id of ["n:/g/b", "n:/g/c"]) { // inside the group's outline
    const b = at.get(id);
    assert.ok(Math.abs(b.x - cx) + 95 <= cw / 2 && Math.abs(b.y - cy) + 23 <= ch / 2, id);
  }
  const outside = at.get("g:/stem") ?? at.get("n:/stem/a");
  assert.ok(outside.y + 23 <= cy - ch / 2); // the stem above it, the graph top to bottom
  r.edges.forEach((pts, i) => {
    const [from, to] = request.edges[i].map((id) => at.get(id));
    assert.ok(pts.length >= 4 && pts[1] >= from.y && pts[pts.length - 1] <= to.y, request.edges[i].join(" → "));
  });
  assert.ok(r.width > 190 && r.height > 4 * 46);
});
