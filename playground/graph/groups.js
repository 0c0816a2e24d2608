// The graph's grouping, pure (graph.js draws it; tests/js/groups.test.mjs checks it): a model's nodes become a tree
// of groups from their name scopes (`/blocks/blocks.3/conv1` sits in `/blocks` then `/blocks/blocks.3`), runs of
// alike sibling groups fold into one box (`blocks.0 … blocks.11 ×12`), and a level of too many children splits
// into parts of consecutive ones. What is shown is the tree cut at the collapsed containers: each model edge
// becomes an edge between the boxes that hold its ends. A model's names are its text, never an object's key:
// every lookup by name is a Map.

export const MAX_CHILDREN = 1000; // a scope group's children at most: a larger one splits (Model Explorer's rule)
export const LEVEL = 8; // the top level's (and a fold's) items at most: a chain of them fits 720 px, readable
export const FIRST_VIEW = 8; // boxes (an open group's outline one of them) the first view opens groups up to

const STATUSES = ["differs", "agrees", "open", "none"]; // a container's colour: its worst member's

// nodes: [{id, path, op, status, diff, kept}] in the model's order (ONNX's: topological); path: the name whose scopes
// group the node where it is not its own (its output's, where the model leaves it unnamed). -> {root, items, leafOf}
export function buildTree(nodes) {
  const items = new Map(), leafOf = new Map();
  const root = container("root", "group", "", null);
  items.set(root.id, root);
  for (const n of nodes) {
    const parts = String(n.path || n.id).split("/").filter(Boolean);
    let at = root, key = "";
    for (const p of parts.slice(0, -1)) {
      key += "/" + p;
      let g = items.get("g:" + key);
      if (!g) {
        g = container("g:" + key, "group", p, at);
        items.set(g.id, g);
        at.children.push(g);
      }
      at = g;
    }
    const leaf = { id: "n:" + n.id, kind: "node", name: parts.length ? parts[parts.length - 1] : String(n.id), node: n,
                   parent: at, count: 1 };
    items.set(leaf.id, leaf);
    leafOf.set(n.id, leaf);
    at.children.push(leaf);
  }
  const signatures = new Map();
  shape(root, items, signatures);
  return { root, items, leafOf };
}

function container(id, kind, name, parent) {
  return { id, kind, name, parent, children: [], count: 0 };
}

// bottom up: a group of one child is that child; each container's count, statuses, largest |diff| and signature
// (what its contents compute, as a small number: alike blocks share it); alike runs folded, long levels split
function shape(item, items, signatures) {
  if (item.kind === "node") {
    item.sig = intern(signatures, "op:" + item.node.op);
    return;
  }
  for (const c of item.children) shape(c, items, signatures);
  item.children = item.children.map((c) => (c.kind === "group" && c.children.length === 1 &&
                                            c.children[0].kind !== "fold" ? lift(c, items) : c));
  item.children = fold(item.children, item, items, signatures);
  if (item.kind === "group" && item.id !== "root") split(item, MAX_CHILDREN, items, signatures);
  else split(item, LEVEL, items, signatures);
  sum(item, signatures);
}

function lift(group, items) {
  const only = group.children[0];
  items.delete(group.id);
  only.parent = group.parent;
  only.name = group.name + "/" + only.name;
  return only;
}

function sum(item, signatures) {
  item.count = 0;
  item.statuses = Object.fromEntries(STATUSES.map((s) => [s, 0]));
  item.diff = null;
  item.kept = 0; // nodes the keep-FP32 plan keeps (a closed group carries their outline)
  for (const c of item.children) {
    c.parent = item;
    item.count += c.count;
    item.kept += c.kind === "node" ? (c.node.kept ? 1 : 0) : c.kept;
    if (c.kind === "node") item.statuses[c.node.status] = (item.statuses[c.node.status] || 0) + 1;
    else for (const s of STATUSES) item.statuses[s] += c.statuses[s];
    const d = c.kind === "node" ? c.node.diff : c.diff;
    if (typeof d === "number" && (item.diff === null || d > item.diff)) item.diff = d;
  }
  item.status = STATUSES.find((s) => item.statuses[s] > 0) || "none";
  item.sig = intern(signatures, item.kind + "(" + item.children.map((c) => c.sig).join(",") + ")");
}

function intern(signatures, text) {
  let id = signatures.get(text);
  if (id === undefined) signatures.set(text, (id = signatures.size));
  return id;
}

// a name's stem: its trailing number taken off (`blocks.3` -> `blocks.`, `layer12` -> `layer`)
export function stem(name) {
  return name.replace(/\d+$/, "");
}

// runs of two or more consecutive sibling groups that compute alike (one signature) under one stem -> one fold each
function fold(children, parent, items, signatures) {
  const out = [];
  for (let i = 0; i < children.length;) {
    const a = children[i];
    let j = i + 1;
    if (a.kind === "group" && /\d$/.test(a.name)) {
      while (j < children.length && children[j].kind === "group" && children[j].sig === a.sig &&
             stem(children[j].name) === stem(a.name)) j++;
    }
    if (j - i < 2) { out.push(a); i++; continue; }
    const run = children.slice(i, j), last = run[run.length - 1];
    const f = container("f:" + a.id, "fold", `${a.name} … ${last.name}`, parent);
    f.repeat = run.length;
    f.children = run;
    items.set(f.id, f);
    split(f, LEVEL, items, signatures);
    sum(f, signatures);
    out.push(f);
    i = j;
  }
  return out;
}

// more than `max` children: parts of consecutive ones, a balanced tree (each level at most `max` items, the parts
// as even as they go): 668 nodes at 8 a level are 6 parts of 5 parts of 5 parts of 4 or 5 nodes
function split(item, max, items, signatures) {
  const n = item.children.length;
  if (n <= max) return;
  const levels = Math.ceil(Math.log(n) / Math.log(max) - 1e-9);
  const count = Math.ceil(n / Math.ceil(Math.pow(n, (levels - 1) / levels))); // parts, then as even as they go
  const parts = [];
  for (let k = 0; k < count; k++) {
    const i = Math.floor((k * n) / count), run = item.children.slice(i, Math.floor(((k + 1) * n) / count));
    if (run.length === 1) { parts.push(run[0]); continue; }
    const p = container(`p:${item.id}:${i}`, "part", `${run[0].name} … ${run[run.length - 1].name}`, item);
    p.children = run;
    items.set(p.id, p);
    split(p, max, items, signatures);
    sum(p, signatures);
    parts.push(p);
  }
  item.children = parts;
}

// The containers that hold a node, outermost first (expanding them shows it); [] for a node at the top
export function ancestors(tree, nodeId) {
  const out = [];
  for (let at = tree.leafOf.get(nodeId)?.parent; at && at !== tree.root; at = at.parent) out.unshift(at.id);
  return out;
}

// The first view's expanded set: groups and parts opened breadth first, each while the boxes shown (and the open
// groups' outlines, which take a box's room) stay within `budget` (a fold stays folded: its blocks are alike)
export function firstExpanded(tree, budget = FIRST_VIEW) {
  const expanded = new Set();
  let shown = tree.root.children.length;
  const queue = [...tree.root.children];
  while (queue.length) {
    const c = queue.shift();
    if (c.kind === "node" || c.kind === "fold") continue;
    if (shown + c.children.length > budget) continue;
    expanded.add(c.id);
    shown += c.children.length; // its box is its outline now
    queue.push(...c.children);
  }
  return expanded;
}

// A container's words: its name, and what it holds
export function describe(item) {
  if (item.kind === "node") return item.node.op;
  const s = item.statuses, said = [`${item.count} node${item.count === 1 ? "" : "s"}`];
  if (item.kept) said.push(`${item.kept} kept in FP32`); // the plan's, first: the box's line cuts the last words
  if (s.differs) said.push(`${s.differs} differ${s.differs === 1 ? "s" : ""}`);
  if (s.agrees) said.push(`${s.agrees} agree${s.agrees === 1 ? "s" : ""}`);
  if (s.none) said.push(`${s.none} grey`); // the legend's word: no layer computes them
  return (item.kind === "fold" ? `×${item.repeat} alike · ` : "") + said.join(" · ");
}
