// The model page's graph: the model's nodes laid out by dagre (vendored: dagre.esm.js, @dagrejs/dagre, MIT), each
// a box coloured by its verdict; a node that opens as a layer is a link to its layer's page. Every text is set as
// text (textContent): a model's names are never markup. The page hands: nodes [{id, label, detail, status, href}],
// edges [[from, to]]; DAGRE_SOURCE (the vendored module's text) is prepended by the page's Python.
const NODE_W = 190, NODE_H = 46;
const NS = "http://www.w3.org/2000/svg";
let dagreModule = null;

function loadDagre() {
  // the vendored module as it ships, loaded from its own text (no static route, no edit of the file)
  if (!dagreModule) {
    const url = URL.createObjectURL(new Blob([DAGRE_SOURCE], { type: "text/javascript" }));
    dagreModule = import(url).then((m) => { URL.revokeObjectURL(url); return m.default || m; });
  }
  return dagreModule;
}

function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (parent) parent.append(e);
  return e;
}

export default function (component) {
  const { data, parentElement } = component;
  let root = parentElement.querySelector(".pg-graph");
  if (root && root.__key === data.key) return;
  if (!root) {
    root = document.createElement("div");
    root.className = "pg-graph";
    parentElement.append(root);
  }
  root.__key = data.key;
  root.replaceChildren();
  loadDagre().then((dagre) => draw(root, data, dagre)).catch((err) => {
    root.textContent = "The graph could not be drawn: " + err;
  });
}

function draw(root, data, dagre) {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "TB", nodesep: 24, ranksep: 36, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of data.nodes) g.setNode(n.id, { width: NODE_W, height: NODE_H });
  for (const [a, b] of data.edges) if (g.hasNode(a) && g.hasNode(b)) g.setEdge(a, b);
  dagre.layout(g);
  const size = g.graph();
  const svg = el("svg", { width: size.width, height: size.height, viewBox: `0 0 ${size.width} ${size.height}`,
                          role: "img", "aria-label": "the model's graph" }, root);
  for (const e of g.edges()) {
    const pts = g.edge(e).points.map((p) => `${p.x},${p.y}`).join(" ");
    el("polyline", { points: pts, class: "pg-graph-edge" }, svg);
  }
  const byId = new Map(data.nodes.map((n) => [n.id, n]));
  for (const id of g.nodes()) {
    const n = byId.get(id), box = g.node(id);
    const holder = n.href ? el("a", { href: n.href, target: "_self" }, svg) : svg;
    const group = el("g", { class: `pg-graph-node pg-graph-${n.status}`,
                            transform: `translate(${box.x - NODE_W / 2},${box.y - NODE_H / 2})` }, holder);
    group.dataset.node = n.id;
    el("rect", { width: NODE_W, height: NODE_H, rx: 6 }, group);
    const title = el("title", {}, group);
    title.textContent = `${n.label}\n${n.detail}`;
    const label = el("text", { x: 8, y: 18, class: "pg-graph-label" }, group);
    label.textContent = n.label.length > 28 ? n.label.slice(0, 27) + "…" : n.label;
    const detail = el("text", { x: 8, y: 36, class: "pg-graph-detail" }, group);
    detail.textContent = n.short.length > 30 ? n.short.slice(0, 29) + "…" : n.short;
  }
  root.dataset.drawn = String(g.nodeCount());
}
