// The model page's graph: the model's nodes laid out by dagre (vendored: dagre.esm.js, @dagrejs/dagre, MIT), each
// a box coloured by its verdict; a node that opens as a layer is a link to its layer's page. Every text is set as
// text (textContent, value): a model's names are never markup. The page hands: nodes [{id, label, detail, short,
// status, href}], edges [[from, to]], first (the first node that differs, or null), groups [{name, type, nodes,
// chain, why}] (the engine's fused layers, each with its chain page's URL or why it is none); DAGRE_SOURCE (the
// vendored module's text) is prepended by the page's Python. What is a chain is Python's decision: this side only
// gathers the shift-clicked nodes (state "selection") and draws the links it is given.
// A node's box and the spacing, at the root's 16 px type; drawn at the page's type (presenter mode's root is larger:
// the names grow as every rem-sized text does, their boxes with them). The names' sizes are graph.css's, in rem.
const BOX = { w: 190, h: 46, pad: 7, label: 18, detail: 36, inset: 8, nodesep: 24, ranksep: 36, margin: 16 };
const NS = "http://www.w3.org/2000/svg";
const MIN_K = 0.05, MAX_K = 4;
const FIT_K = 2;  // Fit enlarges a small graph up to twice its size: its names legible on a projector
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

function html(name, attrs, parent, text) {
  const e = document.createElement(name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  if (parent) parent.append(e);
  return e;
}

export default function (component) {
  const { data, parentElement } = component;
  let root = parentElement.querySelector(".pg-graph");
  if (root) root.__component = component;  // the latest setStateValue
  if (root && root.__key === data.key) return;
  if (!root) {
    root = document.createElement("div");
    root.className = "pg-graph";
    parentElement.append(root);
    root.__component = component;
  }
  root.__key = data.key;
  root.__listening?.abort();  // the window's listeners of the graph drawn before
  root.__listening = new AbortController();
  root.replaceChildren();
  loadDagre().then((dagre) => draw(root, data, dagre)).catch((err) => {
    root.textContent = "The graph could not be drawn: " + err;
  });
}

function scaled(root) {
  const u = parseFloat(getComputedStyle(root.ownerDocument.documentElement).fontSize) / 16 || 1;
  return Object.fromEntries(Object.entries(BOX).map(([k, v]) => [k, v * u]));
}

// (text, room) -> the text, cut with "…" where it is wider than `room` ("ReduceMean → identity (shuffle)" fits, an
// op's long name may not): measured on a canvas in `sample`'s font, so a graph of 1500 boxes lays out once, not per box.
function textFitter(sample) {
  const ctx = sample.ownerDocument.createElement("canvas").getContext("2d");
  const s = getComputedStyle(sample);
  ctx.font = `${s.fontStyle} ${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
  return (text, room) => {
    if (ctx.measureText(text).width <= room) return text;
    let n = text.length - 1;
    while (n > 1 && ctx.measureText(text.slice(0, n) + "…").width > room) n--;
    return text.slice(0, n) + "…";
  };
}

// {size, at: Map(node id -> its box {x, y}), edges: [points]}. dagre keeps its nodes as an object's properties, so a
// model's name ("__proto__", "constructor") is never its key: each node is laid out as "n" + its index.
export function layout(data, dagre, dim) {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "TB", nodesep: dim.nodesep, ranksep: dim.ranksep, marginx: dim.margin, marginy: dim.margin });
  g.setDefaultEdgeLabel(() => ({}));
  const key = new Map(data.nodes.map((n, i) => [n.id, "n" + i]));
  for (const n of data.nodes) g.setNode(key.get(n.id), { width: dim.w, height: dim.h });
  for (const [a, b] of data.edges) if (key.has(a) && key.has(b)) g.setEdge(key.get(a), key.get(b));
  dagre.layout(g);
  return {
    size: g.graph(),
    at: new Map([...key].map(([id, k]) => [id, g.node(k)])),
    edges: g.edges().map((e) => g.edge(e).points),
  };
}

function draw(root, data, dagre) {
  const dim = scaled(root), NODE_W = dim.w, NODE_H = dim.h, PAD = dim.pad;
  const laid = layout(data, dagre, dim), at = laid.at;
  const size = laid.size;
  const byId = new Map(data.nodes.map((n) => [n.id, n]));

  // the bar: search, fit, the first difference, the selection
  const bar = html("div", { class: "pg-graph-bar" }, root);
  const listId = "pg-graph-names-" + Math.random().toString(36).slice(2);
  const search = html("input", { type: "search", class: "pg-graph-search", placeholder: "Find a node by name",
                                 "aria-label": "find a node by name", list: listId }, bar);
  const names = html("datalist", { id: listId }, bar);
  for (const n of data.nodes) html("option", {}, names).value = n.id;
  const fitButton = html("button", { type: "button", class: "pg-graph-fit", title: "show the whole graph" }, bar,
                         "Fit");
  let jump = null;
  if (data.first && byId.has(data.first)) {
    jump = html("button", { type: "button", class: "pg-graph-jump" }, bar, "First difference: " + data.first);
    jump.title = "centre the first node whose reference and ONNX Runtime part ways";
  }
  const said = html("span", { class: "pg-graph-said", "aria-live": "polite" }, bar);
  const picked = html("span", { class: "pg-graph-picked" }, bar);
  const clear = html("button", { type: "button", class: "pg-graph-clear", hidden: "" }, bar, "Clear selection");

  const view = html("div", { class: "pg-graph-view" }, root);
  const svg = el("svg", { role: "img", "aria-label": "the model's graph" }, view);
  const world = el("g", { class: "pg-graph-world" }, svg);

  const boxes = new Map();  // id -> the node's <g>
  let fitDetail = null;  // the details' measure, made at the first box (its font is graph.css's)
  for (const grp of data.groups || []) {
    const members = grp.nodes.filter((id) => at.has(id)).map((id) => at.get(id));
    if (!members.length) continue;
    const x0 = Math.min(...members.map((b) => b.x)) - NODE_W / 2 - PAD;
    const y0 = Math.min(...members.map((b) => b.y)) - NODE_H / 2 - PAD;
    const x1 = Math.max(...members.map((b) => b.x)) + NODE_W / 2 + PAD;
    const y1 = Math.max(...members.map((b) => b.y)) + NODE_H / 2 + PAD;
    const holder = grp.chain ? el("a", { href: grp.chain, target: "_self" }, world) : world;
    const rect = el("rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0, rx: 10,
                              class: "pg-graph-fused" + (grp.chain ? " pg-graph-chain" : "") }, holder);
    rect.dataset.layer = grp.name;
    const title = el("title", {}, rect);
    title.textContent = `engine layer ${grp.name} (${grp.type}) computes ${grp.nodes.join(", ")}\n` +
      (grp.chain ? "click: open these nodes as a chain" : "not a chain: " + grp.why);
  }
  for (const points of laid.edges) {
    const pts = points.map((p) => `${p.x},${p.y}`).join(" ");
    el("polyline", { points: pts, class: "pg-graph-edge" }, world);
  }
  for (const [id, box] of at) {
    const n = byId.get(id);
    const holder = n.href ? el("a", { href: n.href, target: "_self" }, world) : world;
    const group = el("g", { class: `pg-graph-node pg-graph-${n.status}` + (id === data.first ? " pg-graph-first" : ""),
                            transform: `translate(${box.x - NODE_W / 2},${box.y - NODE_H / 2})` }, holder);
    group.dataset.node = n.id;
    el("rect", { width: NODE_W, height: NODE_H, rx: 6 }, group);
    const title = el("title", {}, group);
    title.textContent = `${n.label}\n${n.detail}` + (id === data.first ? "\nthe first node that differs" : "") +
      "\nshift-click: select for a chain";
    const label = el("text", { x: dim.inset, y: dim.label, class: "pg-graph-label" }, group);
    label.textContent = n.label.length > 28 ? n.label.slice(0, 27) + "…" : n.label;
    const detail = el("text", { x: dim.inset, y: dim.detail, class: "pg-graph-detail" }, group);
    fitDetail = fitDetail || textFitter(detail);
    detail.textContent = fitDetail(n.short, NODE_W - 2 * dim.inset);
    boxes.set(id, group);
  }

  // pan and zoom: one transform on the world; the wheel zooms about the pointer, a drag pans
  const t = { k: 1, x: 0, y: 0 };
  const apply = () => {
    world.setAttribute("transform", `translate(${t.x},${t.y}) scale(${t.k})`);
    root.dataset.zoom = t.k.toFixed(3);
  };
  const zoomAt = (k, px, py) => {
    k = Math.min(MAX_K, Math.max(MIN_K, k));
    t.x = px - (px - t.x) * (k / t.k);
    t.y = py - (py - t.y) * (k / t.k);
    t.k = k;
    apply();
  };
  const fit = () => {
    const w = view.clientWidth || 800, h = view.clientHeight || 600;
    t.k = Math.min(MAX_K, Math.max(MIN_K, Math.min(w / size.width, h / size.height, FIT_K)));
    t.x = (w - size.width * t.k) / 2;
    t.y = (h - size.height * t.k) / 2;
    apply();
  };
  const centre = (id) => {
    const box = at.get(id), w = view.clientWidth || 800, h = view.clientHeight || 600;
    t.k = Math.max(t.k, 1);
    t.x = w / 2 - box.x * t.k;
    t.y = h / 2 - box.y * t.k;
    apply();
    for (const b of root.querySelectorAll(".pg-graph-found")) b.classList.remove("pg-graph-found");
    boxes.get(id).classList.add("pg-graph-found");
    root.dataset.centred = id;
  };
  view.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = view.getBoundingClientRect();
    zoomAt(t.k * Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
  let drag = null, dragged = false;
  view.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0) return;
    drag = { x: ev.clientX, y: ev.clientY, tx: t.x, ty: t.y };
    dragged = false;
  });
  window.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (!dragged && Math.hypot(dx, dy) < 4) return;  // a click, not a drag
    dragged = true;
    view.classList.add("pg-graph-panning");
    t.x = drag.tx + dx;
    t.y = drag.ty + dy;
    apply();
  }, { signal: root.__listening.signal });
  window.addEventListener("pointerup", () => { drag = null; view.classList.remove("pg-graph-panning"); },
                          { signal: root.__listening.signal });

  // a click: a drag's end follows no link; shift-click selects a node for a chain (Python says whether it is one)
  const selection = [];
  const showSelection = () => {
    for (const [id, b] of boxes) b.classList.toggle("pg-graph-picked", selection.includes(id));
    picked.textContent = selection.length ? `${selection.length} selected for a chain` : "";
    clear.hidden = !selection.length;
    root.__component.setStateValue("selection", [...selection]);
  };
  svg.addEventListener("click", (ev) => {
    if (dragged) { ev.preventDefault(); ev.stopPropagation(); dragged = false; return; }
    if (!ev.shiftKey) return;
    const box = ev.target.closest(".pg-graph-node");
    if (!box) return;
    ev.preventDefault();
    const id = box.dataset.node, at = selection.indexOf(id);
    if (at >= 0) selection.splice(at, 1); else selection.push(id);
    showSelection();
  }, true);
  clear.addEventListener("click", () => { selection.length = 0; showSelection(); });

  fitButton.addEventListener("click", fit);
  if (jump) jump.addEventListener("click", () => centre(data.first));
  const find = () => {
    const q = search.value.trim();
    if (!q) return;
    const low = q.toLowerCase();
    const hit = byId.has(q) ? q : data.nodes.find((n) => n.id.toLowerCase().includes(low))?.id;
    if (hit === undefined) {
      said.textContent = "no node's name holds " + JSON.stringify(q);
      return;
    }
    said.textContent = "";
    centre(hit);
  };
  search.addEventListener("keydown", (ev) => { if (ev.key === "Enter") find(); });
  search.addEventListener("change", find);

  // the first view: the whole graph where its names stay readable, else its top (the model's inputs) at full width
  const first = () => {
    fit();
    if (t.k >= 0.6) return;
    const w = view.clientWidth || 800;
    t.k = Math.min(1, w / size.width);
    t.x = (w - size.width * t.k) / 2;
    t.y = 0;
    apply();
  };
  first();
  requestAnimationFrame(first);
  root.dataset.drawn = String(at.size);
}
