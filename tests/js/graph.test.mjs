// graph.js's layout: a model's node names are never an object's keys (dagre keeps its nodes as properties).
import assert from "node:assert/strict";
import { test } from "node:test";
import dagre from "../../playground/graph/dagre.esm.js";
import { layout } from "../../playground/graph/graph.js";

const DIM = { w: 190, h: 46, nodesep: 24, ranksep: 36, margin: 16 };
const HOSTILE = ["__proto__", "constructor", "hasOwnProperty", "toString", "valueOf", "x"];

test("dagre itself cannot take a model's names as node keys", () => {
  const g = new dagre.graphlib.Graph();
  g.setNode("constructor", { width: 1, height: 1 });
  assert.equal(g.nodeCount(), 0);  // "constructor" in {} is true: dagre takes it as already there
});

test("every node is laid out by its name, whatever the name", () => {
  const nodes = HOSTILE.map((id) => ({ id }));
  const edges = HOSTILE.slice(1).map((id, i) => [HOSTILE[i], id]);
  const laid = layout({ nodes, edges }, dagre, DIM);
  assert.deepEqual([...laid.at.keys()], HOSTILE);
  for (const [id, box] of laid.at) assert.ok(Number.isFinite(box.x) && Number.isFinite(box.y), id);
  const ys = HOSTILE.map((id) => laid.at.get(id).y);
  assert.deepEqual(ys, [...ys].sort((a, b) => a - b));  // a chain: each node a rank below the one before
  assert.equal(new Set(ys).size, HOSTILE.length);
  assert.equal(laid.edges.length, HOSTILE.length - 1);
  assert.ok(laid.size.width > 0 && laid.size.height > 0);
});
