// groups.js: the graph's groups from name scopes, folded repeats, split levels; and what a cut of the tree shows
// (levels.js).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  LEVEL, MAX_CHILDREN, ancestors, buildTree, describe, firstExpanded, stem,
} from "../../playground/graph/groups.js";
import { levelEdges, levels } from "../../playground/graph/levels.js";

const node = (id, op = "Relu", status = "agrees", diff = 0) => ({ id, path: id, op, status, diff });

// a model of `blocks` alike blocks (conv → relu → add each), a stem before them and a head after them
function blocks(count, ops = ["Conv", "Relu", "Add"]) {
  const nodes = [node("/stem/conv", "Conv"), node("/stem/relu")];
  for (let b = 0; b < count; b++) for (const op of ops) nodes.push(node(`/blocks/blocks.${b}/${op.toLowerCase()}`, op));
  nodes.push(node("/head/pool", "GlobalAveragePool"), node("/head/fc", "Gemm"));
  const edges = nodes.slice(1).map((n, i) => [nodes[i].id, n.id, "1×8×4×4", nodes[i].id + ":0"]);
  return { nodes, edges };
}

// what the graph lays out with `expanded` open (levels.js, as graph.js asks it): the levels by id
const shown = (tree, expanded, edges) => new Map(levels(tree, expanded, levelEdges(tree, edges)).map((l) => [l.id, l]));

test("name scopes make groups, and a node's box is named by its last part", () => {
  const { nodes } = blocks(2, ["Conv", "Relu"]);
  const tree = buildTree(nodes);
  assert.deepEqual(tree.root.children.map((c) => c.id), ["g:/stem", "g:/blocks", "g:/head"]);
  assert.equal(tree.items.get("g:/stem").children[0].name, "conv");
  assert.equal(tree.items.get("g:/blocks").count, 4);
});

test("alike consecutive blocks fold into one box that holds them; a block that differs stays out", () => {
  const { nodes } = blocks(5);
  nodes.splice(2 + 3 * 4, 0, node("/blocks/blocks.4/extra", "Mul")); // the last block computes one more op
  const tree = buildTree(nodes);
  const inner = tree.items.get("g:/blocks").children;
  assert.deepEqual(inner.map((c) => [c.kind, c.name]), [["fold", "blocks.0 … blocks.3"], ["group", "blocks.4"]]);
  assert.equal(inner[0].repeat, 4);
  assert.equal(inner[0].count, 12);
  assert.deepEqual(inner[0].children.map((c) => c.name), ["blocks.0", "blocks.1", "blocks.2", "blocks.3"]);
  assert.equal(stem("blocks.12"), "blocks.");
});

test("a group of one child is that child, its name the two joined", () => {
  const tree = buildTree([node("/a/b/c/x"), node("/a/b/c/y"), node("/z")]);
  assert.deepEqual(tree.root.children.map((c) => [c.id, c.name]), [["g:/a/b/c", "a/b/c"], ["n:/z", "z"]]);
});

test("no group holds more than 1,000 children, and the top level holds at most LEVEL items", () => {
  const flat = Array.from({ length: 10_000 }, (_, i) => node(`Relu_${i}`));
  const scoped = Array.from({ length: 2_500 }, (_, i) => node(`/wide/n${i}`, i % 2 ? "Relu" : "Add"));
  for (const nodes of [flat, scoped]) {
    const tree = buildTree(nodes);
    assert.ok(tree.root.children.length <= LEVEL, tree.root.children.length);
    let leaves = 0;
    for (const item of tree.items.values()) {
      if (item.kind === "node") leaves++;
      else assert.ok(item.children.length <= MAX_CHILDREN, `${item.id}: ${item.children.length}`);
    }
    assert.equal(leaves, nodes.length);
    assert.equal(tree.root.count, nodes.length);
  }
  // DenseNet-121's 668 unnamed nodes: a balanced tree, 6 parts of 5 parts of 5 parts of 4 or 5 nodes
  const dense = buildTree(Array.from({ length: 668 }, (_, i) => node(`Conv_${i}`, "Conv")));
  assert.deepEqual(dense.root.children.map((p) => p.count), [111, 111, 112, 111, 111, 112]);
  assert.equal(dense.root.children[0].name, "Conv_0 … Conv_110");
  assert.deepEqual(dense.root.children[0].children.map((p) => p.count), [22, 22, 22, 22, 23]);
  assert.deepEqual(dense.root.children[0].children[0].children.map((p) => p.count), [4, 4, 5, 4, 5]);
});

test("a cut of the tree shows collapsed containers as boxes, edges between the boxes that hold their ends", () => {
  const { nodes, edges } = blocks(3);
  const tree = buildTree(nodes);
  const top = shown(tree, new Set(), edges).get(tree.root.id);
  assert.deepEqual(top.boxes.map((b) => b.id), ["g:/stem", "g:/blocks", "g:/head"]);
  assert.deepEqual(top.edges.map((e) => [e.from, e.to, e.n]), [["g:/stem", "g:/blocks", 1], ["g:/blocks", "g:/head", 1]]);
  assert.equal(top.edges[0].label, "1×8×4×4");
  // a tensor read three times across a cut is one tensor on its edge; two tensors are two
  const twice = [...edges, ["/stem/relu", "/blocks/blocks.0/add", "1×8×4×4", "/stem/relu:0"],
                 ["/stem/conv", "/blocks/blocks.0/add", "1×8×4×4", "/stem/conv:0"]];
  assert.deepEqual(shown(tree, new Set(), twice).get(tree.root.id).edges.map((e) => e.n), [2, 1]);
  const open = shown(tree, new Set(["g:/blocks", "f:g:/blocks/blocks.0"]), edges);
  assert.deepEqual([...open.keys()], ["f:g:/blocks/blocks.0", "g:/blocks", tree.root.id]); // inner levels first
  assert.ok(open.get(tree.root.id).boxes.some((b) => b.id === "g:/blocks" && b.open));
  const fold = open.get("f:g:/blocks/blocks.0");
  assert.ok(fold.boxes.some((b) => b.id === "g:/blocks/blocks.1" && !b.open));
  assert.ok(fold.edges.some((e) => e.from === "g:/blocks/blocks.0" && e.to === "g:/blocks/blocks.1"));
});

test("names are Map keys, never an object's: __proto__ and constructor are nodes like any other", () => {
  const nodes = [node("__proto__"), node("constructor"), node("/toString/hasOwnProperty")];
  const edges = [["__proto__", "constructor", "1"], ["constructor", "/toString/hasOwnProperty", "2"]];
  const tree = buildTree(nodes);
  const v = shown(tree, new Set(), edges).get(tree.root.id);
  assert.deepEqual(v.boxes.map((b) => b.id), ["n:__proto__", "n:constructor", "n:/toString/hasOwnProperty"]);
  assert.equal(v.edges.length, 2);
  assert.equal(Object.getPrototypeOf({}).polluted, undefined);
});

test("a container's colour is its worst member's, its |diff| the largest", () => {
  const tree = buildTree([node("/g/a", "Relu", "agrees", 1e-7), node("/g/b", "Add", "differs", 0.5),
                          node("/g/c", "Shape", "none", null)]);
  const g = tree.items.get("g:/g");
  assert.equal(g.status, "differs");
  assert.equal(g.diff, 0.5);
  assert.deepEqual(g.statuses, { differs: 1, agrees: 1, open: 0, none: 1 });
  assert.equal(describe(g), "3 nodes · 1 differs · 1 agrees · 1 grey");
});

test("the first view opens groups while it shows at most 8 boxes and outlines, folds stay folded", () => {
  const { nodes } = blocks(40);
  const tree = buildTree(nodes);
  const first = firstExpanded(tree); // 3 groups; the stem's 2 nodes (5), the blocks' fold (6); the head's 2: 8 at most
  assert.deepEqual([...first], ["g:/stem", "g:/blocks", "g:/head"]);
  assert.deepEqual([...firstExpanded(tree, 7)], ["g:/stem", "g:/blocks"]);
  assert.ok(![...first].some((id) => id.startsWith("f:")));
  assert.deepEqual(ancestors(tree, "/blocks/blocks.7/relu"), [
    "g:/blocks", "f:g:/blocks/blocks.0", "p:f:g:/blocks/blocks.0:6", "g:/blocks/blocks.7"]); // 40 alike: 6 parts
  assert.deepEqual(tree.items.get("f:g:/blocks/blocks.0").children.map((c) => c.children.length), [6, 7, 7, 6, 7, 7]);
  assert.equal(tree.items.get("p:f:g:/blocks/blocks.0:6").name, "blocks.6 … blocks.12");
  assert.deepEqual(ancestors(tree, "nothing"), []);
});

test("a group counts the keep-FP32 plan's nodes it holds and says so first", () => {
  const nodes = ["/ln/Sub", "/ln/Pow", "/ln/ReduceMean_1", "/head/Add", "/head/Mul"].map((id) => (
    { id, op: "Add", status: "agrees", diff: 0, kept: id === "/ln/Pow" || id === "/ln/ReduceMean_1" }));
  const tree = buildTree(nodes);
  const ln = tree.items.get("g:/ln");
  assert.equal(ln.kept, 2);
  assert.equal(tree.root.kept, 2);
  assert.ok(describe(ln).startsWith("3 nodes · 2 kept in FP32"), describe(ln));
  assert.equal(tree.items.get("g:/head").kept, 0);
  assert.ok(!describe(tree.items.get("g:/head")).includes("kept"));
});
