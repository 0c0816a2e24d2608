// layout.js and levels.js: the worker's layout, called here outside a worker, on the vendored dagre, one level (the
// root, each open group) at a time: an open group's box holds its boxes, every edge runs from one box to the next,
// a level already laid out is kept, and opening a group lays out only its level and its ancestors'.
import assert from "node:assert/strict";
import { test } from "node:test";
import dagre from "../../playground/graph/dagre.esm.js";
import { layoutLevels } from "../../playground/graph/layout.js";
import { levelEdges, levels, place } from "../../playground/graph/levels.js";
import { buildTree, firstExpanded } from "../../playground/graph/groups.js";

const spacing = { nodesep: 24, ranksep: 40, margin: 16 }, head = 20;

// a dagre that counts its layouts and the boxes of each
function counting() {
  const calls = [];
  return { calls, d: { graphlib: dagre.graphlib, layout: (g) => { calls.push(g.nodeCount()); dagre.layout(g); } } };
}

function lay(tree, expanded, byLevel, d, cache, seq = 1) {
  const asked = levels(tree, expanded, byLevel);
  const request = {
    seq, spacing, head,
    levels: asked.map((l) => ({ id: l.id, boxes: l.boxes.map((b) => (b.open ? b : { id: b.id, w: 190, h: 46 })),
                                edges: l.edges.map((e) => [e.from, e.to]) })),
  };
  const answer = layoutLevels(d, request, cache);
  return { answer, laid: place(asked, answer, head) };
}

const inside = (b, [, cx, cy, cw, ch]) => Math.abs(b[0] - cx) + 95 <= cw / 2 && Math.abs(b[1] - cy) + 23 <= ch / 2;

test("an open group's box holds its boxes under its head; each edge leaves its source and reaches its target", () => {
  const nodes = ["/stem/a", "/g/b", "/g/c", "/head/d"].map((id) => ({ id, op: "Relu", status: "agrees", diff: 0 }));
  const edges = [["/stem/a", "/g/b", "1×2", "t0"], ["/g/b", "/g/c", "1×2", "t1"], ["/g/c", "/head/d", "1×2", "t2"]];
  const tree = buildTree(nodes);
  const { answer, laid } = lay(tree, new Set(["g:/g"]), levelEdges(tree, edges), dagre, new Map(), 3);
  assert.equal(answer.seq, 3);
  const at = new Map(laid.boxes.map(([id, x, y]) => [id, [x, y]]));
  const [group] = laid.clusters;
  assert.equal(group[0], "g:/g");
  for (const id of ["n:/g/b", "n:/g/c"]) {
    assert.ok(inside(at.get(id), group), id);
    assert.ok(at.get(id)[1] - 23 >= group[2] - group[4] / 2 + head, id); // under the group's name
  }
  const centre = (id) => at.get(id) ?? group.slice(1, 3);
  assert.ok(centre("n:/stem/a")[1] + 23 <= group[2] - group[4] / 2); // the stem above it, the graph top to bottom
  assert.deepEqual(laid.edges.map((e) => [e.from, e.to]).sort(),
                   [["g:/g", "n:/head/d"], ["n:/g/b", "n:/g/c"], ["n:/stem/a", "g:/g"]]);
  for (const e of laid.edges) { // from the source's box (or the group's border) down to the target's
    const [from, to] = [centre(e.from), centre(e.to)], pts = e.points;
    assert.ok(pts.length >= 4 && pts[1] >= from[1] && pts[pts.length - 1] <= to[1], `${e.from} → ${e.to}`);
  }
  const into = laid.edges.find((e) => e.to === "g:/g").points; // into the open group: it ends at its border
  assert.ok(Math.abs(into[into.length - 1] - (group[2] - group[4] / 2)) < 1);
  assert.ok(laid.width > 190 && laid.height > 4 * 46);
});

// a scoped model as PyTorch's exporter names one: stages (each other one's blocks with Tanh for Relu: not alike) of
// blocks of five nodes (alike within a stage: folded), in a chain
function scoped(blocks, stages = 4) {
  const nodes = [], edges = [];
  let prev = null;
  for (let b = 0; b < blocks; b++) {
    const stage = Math.floor((b * stages) / blocks);
    for (const op of ["mul", stage % 2 ? "tanh" : "relu", "add", "sigmoid", "mul_1"]) {
      const id = `/stages/stage.${stage}/block.${b}/${op}`;
      nodes.push({ id, op, status: "agrees", diff: 0 });
      if (prev) edges.push([prev, id, "1×8", prev]);
      prev = id;
    }
  }
  return { nodes, edges };
}

test("a sibling opened leaves a group's inner layout as it was, and its level is not laid out again", () => {
  const { nodes, edges } = scoped(8, 2);
  const tree = buildTree(nodes), byLevel = levelEdges(tree, edges), cache = new Map();
  // stage.0's fold of four alike blocks open; its first block open, then the second (its sibling)
  const fold = tree.items.get("g:/stages/stage.0").children[0], [block0, block1] = fold.children.map((c) => c.id);
  assert.equal(fold.kind, "fold");
  const a = new Set([...firstExpanded(tree), fold.id, block0]);
  const one = lay(tree, a, byLevel, dagre, cache);
  const both = lay(tree, new Set([...a, block1]), byLevel, dagre, cache);
  // block.1's level, then each level that holds it; block.0's and stage.1's kept
  assert.deepEqual(both.answer.laid, [block1, fold.id, "g:/stages/stage.0", "g:/stages", "root"]);
  const inner = (r) => r.answer.levels.find((l) => l.id === block0);
  assert.deepEqual(inner(both), inner(one)); // its boxes where they were, in its own coordinates
  const rel = (r) => { // its boxes from its box's top left, in the whole picture
    const [, cx, cy, w, h] = r.laid.clusters.find((c) => c[0] === block0);
    const mine = new Set(inner(r).boxes.map((b) => b[0]));
    const r6 = (v) => Math.round(v * 1e6) / 1e6;
    return r.laid.boxes.filter((b) => mine.has(b[0])).map(([id, x, y]) => [id, r6(x - cx + w / 2), r6(y - cy + h / 2)]);
  };
  assert.deepEqual(rel(both), rel(one));
  assert.ok(rel(one).length > 0);
});

test("opening a group of a 10,000-node tree lays out that group's level and its ancestors' only", () => {
  const { nodes, edges } = scoped(2000);
  assert.equal(nodes.length, 10000);
  const tree = buildTree(nodes), byLevel = levelEdges(tree, edges), cache = new Map();
  let expanded = firstExpanded(tree);
  const { d, calls } = counting();
  const first = lay(tree, expanded, byLevel, d, cache);
  assert.equal(calls.length, first.answer.levels.length); // the first view: each of its levels once
  // open the first closed group, then one inside it, then one inside that: each time its level and its ancestors'
  let last = null;
  for (let step = 0; step < 3; step++) {
    const shown = levels(tree, expanded, byLevel);
    const closed = shown.flatMap((l) => l.boxes).find((b) => !b.open && !b.id.startsWith("n:") &&
                                                            (step === 0 || tree.items.get(b.id).parent.id === last));
    last = closed.id;
    expanded = new Set([...expanded, last]);
    calls.length = 0;
    const r = lay(tree, expanded, byLevel, d, cache);
    const chain = [];
    for (let at = tree.items.get(last); at; at = at.parent) chain.push(at.id);
    assert.deepEqual(r.answer.laid, chain, `step ${step}`); // the group, its parent, …, the root: nothing else
    const sizes = chain.map((id) => tree.items.get(id).children.length);
    assert.deepEqual(calls, sizes, `step ${step}`); // one dagre call per level, of that level's boxes only
    assert.ok(Math.max(...calls) <= 8, calls.join()); // no level of thousands: the whole tree is never laid out
    assert.ok(r.laid.boxes.length > shown.flatMap((l) => l.boxes).filter((b) => !b.open).length); // it shows more
  }
  calls.length = 0; // closed again: every level as it was laid out before, kept
  const again = lay(tree, firstExpanded(tree), byLevel, d, cache);
  assert.deepEqual([again.answer.laid, calls], [[], []]);
  assert.deepEqual(again.laid, first.laid);
});
