// The graph's levels, pure (graph.js asks the layout worker for them; tests/js/layout.test.mjs checks them): the
// root and each open group is a level, its children the boxes it lays out (an open child one box of its own
// level's size), its edges those of the model whose ends it holds in two different children (an edge into an open
// group ends at the group's border; inside, the group's own level draws its part). The levels laid out (layout.js,
// each in its own coordinates) are placed in one picture: an open group's level inside its box, under its head.

// The model's edges [from, to, label, tensor] by the level that holds them: level id -> [{from, to, label, n}]
// (one per pair of its children: its label the first tensor's, `n` the distinct tensors it carries). Once per tree:
// a level's children do not change as groups open.
export function levelEdges(tree, edges) {
  const paths = new Map(); // node id -> its items, the root's child first
  const pathOf = (id) => {
    let p = paths.get(id);
    if (!p) {
      p = [];
      for (let at = tree.leafOf.get(id); at && at !== tree.root; at = at.parent) p.push(at);
      paths.set(id, p.reverse());
    }
    return p;
  };
  const byLevel = new Map(), joined = new Map();
  for (const [a, b, label, tensor] of edges) {
    if (!tree.leafOf.has(a) || !tree.leafOf.has(b) || a === b) continue;
    const pa = pathOf(a), pb = pathOf(b);
    let i = 0;
    while (pa[i] === pb[i]) i++; // the first items apart: two children of the level that holds both
    const level = i === 0 ? tree.root.id : pa[i - 1].id, from = pa[i].id, to = pb[i].id;
    const key = level + "\u0000" + from + "\u0000" + to;
    let e = joined.get(key);
    if (!e) {
      joined.set(key, (e = { from, to, label: label ?? "", n: 0, tensors: new Set() }));
      if (!byLevel.has(level)) byLevel.set(level, []);
      byLevel.get(level).push(e);
    }
    e.tensors.add(tensor ?? a);
    e.n = e.tensors.size;
  }
  return byLevel;
}

// The levels `expanded` (a Set of container ids; the root always is) shows: [{id, boxes: [{id, open}], edges}], an
// open child's level before its parent's, the root's last (the order the worker lays them out in)
export function levels(tree, expanded, byLevel) {
  const out = [];
  const walk = (item) => {
    const boxes = item.children.map((c) => ({ id: c.id, open: c.kind !== "node" && expanded.has(c.id) }));
    for (const c of item.children) if (c.kind !== "node" && expanded.has(c.id)) walk(c);
    out.push({ id: item.id, boxes, edges: byLevel.get(item.id) || [] });
  };
  walk(tree.root);
  return out;
}

// The levels' layouts (the worker's answer, by the request's `asked` levels) in one picture: {width, height, boxes:
// [[id, x, y]] (the closed boxes' centres), clusters: [[id, x, y, w, h]] (the open groups' boxes), edges: [{points,
// from, to, label, n}]}; `head`: the room over an open group's level for its name.
export function place(asked, answer, head) {
  const laid = new Map(answer.levels.map((a) => [a.id, a]));
  const edgesOf = new Map(asked.map((l) => [l.id, l.edges]));
  const root = answer.levels[answer.levels.length - 1];
  const out = { width: root.width, height: root.height, boxes: [], clusters: [], edges: [] };
  const walk = (level, ox, oy) => {
    const a = laid.get(level);
    (edgesOf.get(level) || []).forEach((e, i) => {
      const pts = a.edges[i].map((v, j) => v + (j % 2 ? oy : ox));
      out.edges.push({ points: pts, from: e.from, to: e.to, label: e.label, n: e.n });
    });
    for (const [id, x, y, w, h] of a.boxes) {
      const cx = ox + x, cy = oy + y;
      if (laid.has(id)) {
        out.clusters.push([id, cx, cy, w, h]);
        walk(id, cx - w / 2, cy - h / 2 + head);
      } else out.boxes.push([id, cx, cy]);
    }
  };
  walk(root.id, 0, 0);
  return out;
}
