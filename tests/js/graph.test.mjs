// The graph's layout: a model's node names are never an object's keys (dagre keeps its nodes as properties); the
// boxes the worker lays out are named by groups.js ("n:" + the node's name), which no object holds already.
import assert from "node:assert/strict";
import { test } from "node:test";
import dagre from "../../playground/graph/dagre.esm.js";
import { buildTree } from "../../playground/graph/groups.js";
import { layoutLevels } from "../../playground/graph/layout.js";
import { levelEdges, levels, place } from "../../playground/graph/levels.js";

const HOSTILE = ["__proto__", "constructor", "hasOwnProperty", "toString", "valueOf", "x"];

test("dagre itself cannot take a model's names as node keys", () => {
  const g = new dagre.graphlib.Graph();
  g.setNode("constructor", { width: 1, height: 1 });
  assert.equal(g.nodeCount(), 0);  // "constructor" in {} is true: dagre takes it as already there
});

test("every node is laid out by its name, whatever the name", () => {
  const nodes = HOSTILE.map((id) => ({ id, op: "Relu", status: "agrees", diff: 0 }));
  const edges = HOSTILE.slice(1).map((id, i) => [HOSTILE[i], id, "1", HOSTILE[i]]);
  const tree = buildTree(nodes), asked = levels(tree, new Set(), levelEdges(tree, edges));
  const answer = layoutLevels(dagre, {
    seq: 1, head: 20, spacing: { nodesep: 24, ranksep: 36, margin: 16 },
    levels: asked.map((l) => ({ id: l.id, boxes: l.boxes.map((b) => ({ id: b.id, w: 190, h: 46 })),
                                edges: l.edges.map((e) => [e.from, e.to]) })),
  }, new Map());
  const laid = place(asked, answer, 20);
  const at = new Map(laid.boxes.map(([id, x, y]) => [id, { x, y }]));
  assert.deepEqual([...at.keys()], HOSTILE.map((id) => "n:" + id));
  for (const [id, box] of at) assert.ok(Number.isFinite(box.x) && Number.isFinite(box.y), id);
  const ys = HOSTILE.map((id) => at.get("n:" + id).y);
  assert.deepEqual(ys, [...ys].sort((a, b) => a - b));  // a chain: each node a rank below the one before
  assert.equal(new Set(ys).size, HOSTILE.length);
  assert.equal(laid.edges.filter((e) => e.points.length >= 4).length, HOSTILE.length - 1);
  assert.ok(laid.width > 0 && laid.height > 0);
});
