// The model page's graph: the model's nodes in groups from their name scopes (groups.js: collapsed at first, alike
// blocks folded, no level too long), laid out in a web worker (layout.js, by the vendored dagre: dagre.esm.js,
// @dagrejs/dagre, MIT), panned and zoomed (viewport.js), with a minimap (minimap.js), each box coloured by its verdict (a node the keep-FP32 plan
// keeps outlined); a node that opens as a layer is a link to its layer's page, a grey node's click says why it
// does not open, a group's click opens it. Every text is set as text (textContent, value): a model's names are
// never markup, and never an object's key (Maps only). The modules are served as files beside each other
// (serve/assets.py): imported, and the worker started, by relative address. The page hands {key, url, says_drawn}:
// the graph's data is fetched from `url` (serve/graph_data.py), once per key (the first taken from what the page's
// HTML named, fetched as this module first ran, where it is the same data). It holds: nodes [{id, path, op,
// short, detail, status, href, diff, shape, kept}], edges [[writer, its output, reader, shape]] (by the nodes'
// indices), first (the first node that differs, or null) and first_label (its button's words, where not "First
// difference"), groups [{name, type, nodes, chain, why}] (the engine's fused layers, each with its chain page's URL
// or why it is none), says_drawn (the page's menu waits on the first view: its "drawn" trigger then). What is a
// chain is Python's decision: this side only gathers the shift-clicked nodes (state "selection").
import * as G from "./groups.js";
import * as L from "./levels.js";
import * as M from "./minimap.js";
import * as V from "./viewport.js";
import { el, html, scaled, textFitter } from "./draw.js";

const SLOW_MS = 2500; // a layout that takes longer may be cancelled (Netron's offer)

export default function (component) {
  const { data, parentElement } = component;
  let root = parentElement.querySelector(".pg-graph");
  if (root) root.__component = component; // the latest setStateValue
  if (root && root.__key === data.key) return;
  if (!root) {
    root = document.createElement("div");
    root.className = "pg-graph";
    parentElement.append(root);
    root.__component = component;
  }
  root.__key = data.key;
  root.__listening?.abort(); // the window's listeners of the graph drawn before
  root.__listening = new AbortController();
  root.__worker?.terminate();
  root.replaceChildren();
  root.dataset.graphState = "loading";
  root.__began = performance.now(); // the graph's own time: its address here -> its first view drawn (data-graph-ms)
  layoutWorker(root); // started while the data is fetched
  const key = data.key, url = new URL(data.url, window.location.href);
  const fetched = earlyIn.then(() => {
    const e = early;
    early = null; // what the page's HTML named serves its first graph only
    return e && url.pathname.endsWith("/" + e.id) ? e.ready || prepare(JSON.parse(e.text)) : null;
  });
  fetched.then((ready) => ready || fetch(url).then((r) => {
    if (!r.ok) throw new Error(`its data: ${r.status} (reload the page)`);
    return r.json();
  }).then(prepare)).then((ready) => {
    if (root.__key === key) draw(root, ready, data.says_drawn); // not a graph since replaced
  }).catch((err) => {
    root.textContent = "The graph could not be drawn: " + err.message;
    root.dataset.graphState = "error";
  });
}

// The layout worker: one per graph, its replies matched to the latest request (an older one is dropped). One is
// started as this module is first run (the model page's HTML runs it early, ui/entry.py): the first graph's layout
// does not wait for the worker's start and dagre's compile.
const startWorker = () => new Worker(new URL("./layout.js", import.meta.url), { type: "module" });
let spare = typeof window !== "undefined" && typeof Worker !== "undefined" ? startWorker() : null;

function layoutWorker(root) {
  const worker = spare || startWorker();
  spare = null;
  root.__worker = worker;
  return worker;
}

// The graph's data with its tree of groups and each level's edges: made once, as soon as the data is in
function prepare(data) {
  const tree = G.buildTree(data.nodes);
  // [writer, its output, reader, shape] by the nodes' indices -> [from, to, shape, tensor] by their names
  const edges = data.edges.map(([a, k, b, shape]) => [data.nodes[a].id, data.nodes[b].id, shape, a + ":" + k]);
  return { data, tree, byLevel: L.levelEdges(tree, edges) }; // a level's children do not change as groups open
}

// The data the model page's HTML names (ui/entry.py: the link's last drawn), fetched as this module is first run,
// while Streamlit loads, and prepared when the page's thread is idle (its own start goes first): {id, text, ready}
let early = null;
const earlyIn = typeof document !== "undefined" && document.querySelector('meta[name="pg-graph-data"]')
  ? fetch(document.querySelector('meta[name="pg-graph-data"]').content).then((r) => r.ok && r.text().then((text) => {
    early = { id: r.headers.get("X-Graph-Data"), text, ready: null };
    const idle = window.requestIdleCallback || setTimeout;
    idle(() => { if (early && !early.ready) early.ready = prepare(JSON.parse(early.text)); });
  })).catch(() => null)
  : Promise.resolve();

function draw(root, { data, tree, byLevel }, saysDrawn) {
  const dim = scaled(root);
  const byId = new Map(data.nodes.map((n) => [n.id, n]));
  let expanded = G.firstExpanded(tree);
  const holdsFirst = new Set(data.first ? G.ancestors(tree, data.first) : []); // its closed groups carry its mark

  // the bar: search, fit, the first difference, the selection, what the graph says
  const bar = html("div", { class: "pg-graph-bar" }, root);
  const listId = "pg-graph-names-" + Math.random().toString(36).slice(2);
  const search = html("input", { type: "search", class: "pg-graph-search", placeholder: "Find a node by name",
                                 "aria-label": "find a node by name", list: listId }, bar);
  const names = html("datalist", { id: listId }, bar);
  search.addEventListener("focus", () => { // the names offered once asked for: the first view does not wait on them
    if (names.childElementCount) return;
    for (const n of data.nodes.slice(0, 5000)) html("option", {}, names).value = n.id; // the list stays quick
  });
  const fitButton = html("button", { type: "button", class: "pg-graph-fit", title: "show the whole graph" }, bar,
                         "Fit");
  const collapseButton = html("button", { type: "button", class: "pg-graph-collapse",
                                          title: "close every group: the first view again" }, bar, "Collapse");
  let jump = null;
  if (data.first && byId.has(data.first)) {
    jump = html("button", { type: "button", class: "pg-graph-jump" }, bar,
                (data.first_label || "First difference") + ": " + data.first);
    jump.title = "centre the first node whose reference and ONNX Runtime part ways";
  }
  const keeps = data.nodes.filter((n) => n.kept).length;
  if (keeps) { // the plan's legend: the outline its nodes carry
    const legend = html("span", { class: "pg-graph-legend" }, bar);
    html("span", { class: "pg-graph-kept-swatch", "aria-hidden": "true" }, legend);
    html("span", {}, legend, `kept in FP32 by the plan (${keeps})`);
  }
  const said = html("span", { class: "pg-graph-said", "aria-live": "polite" }, bar);
  const picked = html("span", { class: "pg-graph-picked" }, bar);
  const clear = html("button", { type: "button", class: "pg-graph-clear", hidden: "" }, bar, "Clear selection");

  const view = html("div", { class: "pg-graph-view", tabindex: "0" }, root);
  const svg = el("svg", { role: "img", "aria-label": "the model's graph" }, view);
  const world = el("g", { class: "pg-graph-world" }, svg);
  const map = M.minimap(view, root.__listening.signal, (wx, wy) => pz.centreOn(wx, wy)); // where it was pressed
  const hint = html("div", { class: "pg-graph-hint", hidden: "" }, view,
                    "Ctrl + wheel zooms (or click into the graph first); the wheel alone scrolls the page");
  const info = html("div", { class: "pg-graph-info", hidden: "", role: "status" }, view);
  const card = html("div", { class: "pg-graph-card", hidden: "" }, view);

  let worker = root.__worker;
  let seq = 0, laid = null, slow = null, ready = false;
  const boxes = new Map(); // item id -> its drawn <g>
  const centres = new Map(); // item id -> [x, y] in the world
  // -- pan and zoom: one transform on the world; the minimap shows where the view is ------------------------------
  const pz = V.viewport({
    root, view, world, hint, signal: root.__listening.signal, busy: map.pressed,
    onMove: () => map.draw(laid, pz.t, pz.size(), dim, (id) => {
      const item = tree.items.get(id);
      return item.kind === "node" ? [item.node.status, item.node.kept] : [item.status, item.kept > 0];
    }),
  });
  const t = pz.t;

  // -- layout: the levels the expanded set shows, sent to the worker (it lays out those that changed); drawn ---------
  const head = dim.shape + 8; // an open group's name, over its level
  const relayout = (then) => {
    const asked = L.levels(tree, expanded, byLevel);
    const mine = ++seq, began = performance.now();
    root.dataset.graphState = "layout";
    const size = (id) => ({ id, w: dim.w, h: dim.h + (isLeaf(id) ? 0 : dim.stack) });
    worker.postMessage({
      seq: mine,
      levels: asked.map((l) => ({ id: l.id, boxes: l.boxes.map((b) => (b.open ? b : size(b.id))),
                                  edges: l.edges.map((e) => [e.from, e.to]) })),
      spacing: { nodesep: dim.nodesep, ranksep: dim.ranksep, margin: dim.margin },
      head,
    });
    const before = expanded;
    clearTimeout(slow);
    slow = setTimeout(() => {
      said.textContent = `Laying out ${asked.reduce((n, l) => n + l.boxes.length, 0)} boxes … `;
      const cancel = html("button", { type: "button", class: "pg-graph-cancel" }, said, "Cancel");
      cancel.addEventListener("click", () => { // the worker is stopped (a fresh one for the next); the view stays
        worker.terminate();
        worker = layoutWorker(root);
        said.textContent = "Layout cancelled: close a group to see fewer boxes.";
        root.dataset.graphState = ready ? "ready" : "cancelled";
        expanded = before;
      });
    }, SLOW_MS);
    worker.onmessage = (ev) => {
      const r = ev.data;
      if (r.seq !== seq) return;
      clearTimeout(slow);
      if (r.error) {
        said.textContent = "The graph could not be laid out: " + r.error;
        root.dataset.graphState = "error";
        return;
      }
      if (said.querySelector(".pg-graph-cancel")) said.textContent = "";
      laid = L.place(asked, r, head);
      root.dataset.laidLevels = String(r.laid.length); // how many levels dagre laid out for it (the rest kept)
      render();
      root.dataset.layoutMs = (performance.now() - began).toFixed(0);
      then?.();
      if (!ready) root.dataset.graphMs = (performance.now() - root.__began).toFixed(0);
      root.dataset.graphState = "ready";
      if (!ready && saysDrawn) root.__component.setTriggerValue("drawn", true); // the page's menu follows
      ready = true;
    };
  };
  const isLeaf = (id) => tree.items.get(id)?.kind === "node";

  let fitDetail = null, fitLabel = null, fitGroup = null;
  const render = () => {
    world.replaceChildren();
    boxes.clear();
    centres.clear();
    for (const [id, x, y] of laid.boxes) centres.set(id, [x, y]);
    const W = dim.w, H = dim.h;
    for (const [id, x, y, w, h] of laid.clusters) { // an open group: its outline, its name (a click closes it)
      const item = tree.items.get(id);
      const g = el("g", { class: "pg-graph-cluster", "data-status": item.status }, world);
      g.dataset.group = id;
      el("rect", { x: x - w / 2, y: y - h / 2, width: w, height: h, rx: 10 }, g);
      const name = el("text", { x: x - w / 2 + dim.inset, y: y - h / 2 + dim.shape + 2, class: "pg-graph-cluster-name" },
                      g);
      name.textContent = "− " + item.name + (item.kind === "fold" ? ` (×${item.repeat} alike)` : "");
      el("title", {}, name).textContent = "click: close this group";
      centres.set(id, [x, y]);
    }
    for (const grp of data.groups || []) { // an engine layer's fused nodes, where each is drawn as itself
      const members = grp.nodes.map((n) => centres.get("n:" + n));
      if (!members.length || members.some((m) => !m)) continue;
      const x0 = Math.min(...members.map((m) => m[0])) - W / 2 - dim.pad;
      const y0 = Math.min(...members.map((m) => m[1])) - H / 2 - dim.pad;
      const x1 = Math.max(...members.map((m) => m[0])) + W / 2 + dim.pad;
      const y1 = Math.max(...members.map((m) => m[1])) + H / 2 + dim.pad;
      const holder = grp.chain ? el("a", { href: grp.chain, target: "_self" }, world) : world;
      const rect = el("rect", { x: x0, y: y0, width: x1 - x0, height: y1 - y0, rx: 10,
                                class: "pg-graph-fused" + (grp.chain ? " pg-graph-chain" : "") }, holder);
      rect.dataset.layer = grp.name;
      el("title", {}, rect).textContent = `engine layer ${grp.name} (${grp.type}) computes ${grp.nodes.join(", ")}\n` +
        (grp.chain ? "click: open these nodes as a chain" : "not a chain: " + grp.why);
    }
    for (const e of laid.edges) { // each edge, and the shape of the tensor it carries beside its first bend
      const pts = e.points;
      if (pts.length < 4) continue;
      const line = [];
      for (let j = 0; j < pts.length; j += 2) line.push(`${pts[j]},${pts[j + 1]}`);
      el("polyline", { points: line.join(" "), class: "pg-graph-edge" }, world);
      const words = e.n > 1 ? `${e.n} tensors` : e.label;
      if (words) el("text", { x: pts[0] + 4, y: pts[1] + dim.shape, class: "pg-graph-shape" }, world).textContent = words;
    }
    for (const [id, x, y] of laid.boxes) {
      const item = tree.items.get(id);
      if (item.kind === "node") drawNode(item, x, y);
      else drawGroup(item, x, y);
    }
    for (const id of selection) boxes.get("n:" + id)?.classList.add("pg-graph-picked");
    root.dataset.drawn = String(laid.boxes.length);
    pz.apply();
  };

  const drawNode = (item, x, y) => {
    const n = item.node, W = dim.w, H = dim.h;
    const holder = n.href ? el("a", { href: n.href, target: "_self" }, world) : world;
    const g = el("g", { class: `pg-graph-node pg-graph-${n.status}` + (n.id === data.first ? " pg-graph-first" : "") +
                          (n.kept ? " pg-graph-kept" : ""),
                        transform: `translate(${x - W / 2},${y - H / 2})` }, holder);
    g.dataset.node = n.id;
    el("rect", { width: W, height: H, rx: 6 }, g);
    const label = el("text", { x: dim.inset, y: dim.label, class: "pg-graph-label" }, g);
    fitLabel = fitLabel || textFitter(label);
    label.textContent = fitLabel(item.name, W - 2 * dim.inset);
    const detail = el("text", { x: dim.inset, y: dim.detail, class: "pg-graph-detail" }, g);
    fitDetail = fitDetail || textFitter(detail);
    detail.textContent = fitDetail(n.short, W - 2 * dim.inset);
    boxes.set(item.id, g);
  };

  const drawGroup = (item, x, y) => { // a closed group: a stack of boxes, its name and what it holds
    const W = dim.w, H = dim.h, s = dim.stack;
    const g = el("g", { class: `pg-graph-group pg-graph-kind-${item.kind}` + (item.kept ? " pg-graph-kept" : "") +
                          (holdsFirst.has(item.id) ? " pg-graph-first" : ""), "data-status": item.status,
                        transform: `translate(${x - W / 2},${y - (H + s) / 2})` }, world);
    g.dataset.group = item.id;
    el("rect", { x: s, y: 0, width: W - s, height: H, rx: 6, class: "pg-graph-under" }, g);
    el("rect", { x: 0, y: s, width: W - s, height: H, rx: 6 }, g);
    const label = el("text", { x: dim.inset, y: s + dim.label, class: "pg-graph-label" }, g);
    fitLabel = fitLabel || textFitter(label);
    label.textContent = fitLabel("+ " + item.name, W - s - 2 * dim.inset);
    const detail = el("text", { x: dim.inset, y: s + dim.detail, class: "pg-graph-detail" }, g);
    fitGroup = fitGroup || textFitter(detail);
    detail.textContent = fitGroup(G.describe(item), W - s - 2 * dim.inset);
    boxes.set(item.id, g);
  };

  // -- hover: a box's card (its op, attributes, output shape, verdict, max |diff|) --------------------------------
  svg.addEventListener("pointerover", (ev) => {
    const g = ev.target.closest(".pg-graph-node, .pg-graph-group");
    if (!g) { card.hidden = true; return; }
    const item = tree.items.get(g.dataset.group || "n:" + g.dataset.node);
    card.replaceChildren();
    html("b", {}, card, item.kind === "node" ? item.node.id : item.name);
    const lines = item.kind === "node"
      ? [item.node.short, item.node.shape ? "output " + item.node.shape : "", item.node.href ? item.node.detail : "",
         "max |diff| " + (typeof item.node.diff === "number" ? item.node.diff.toPrecision(3) : "—"),
         item.node.href ? "click: open on its layer's page · shift-click: select for a chain" :
           "click: why it does not open"]
      : [G.describe(item), "max |diff| " + (typeof item.diff === "number" ? item.diff.toPrecision(3) : "—"),
         "click: open this group"];
    for (const line of lines) if (line) html("div", {}, card, line);
    const r = view.getBoundingClientRect(), b = g.getBoundingClientRect();
    card.hidden = false;
    card.style.left = Math.min(b.right - r.left + 8, r.width - card.offsetWidth - 8) + "px";
    card.style.top = Math.max(4, Math.min(b.top - r.top, r.height - card.offsetHeight - 4)) + "px";
    card.dataset.for = item.id;
  });
  svg.addEventListener("pointerleave", () => { card.hidden = true; });

  // -- a click: a drag's end follows no link; shift-click selects a node for a chain (Python says whether it is
  // one); a group opens, an open group's name closes it; a grey node says why it does not open
  const selection = [];
  const showSelection = () => {
    for (const [id, b] of boxes) if (isLeaf(id)) b.classList.toggle("pg-graph-picked", selection.includes(id.slice(2)));
    picked.textContent = selection.length ? `${selection.length} selected for a chain` : "";
    clear.hidden = !selection.length;
    root.__component.setStateValue("selection", [...selection]);
  };
  const keepAt = (id, screen) => () => { // after a layout, the item `id` where it was on screen
    const c = centres.get(id);
    if (c) pz.place(c[0], c[1], screen[0], screen[1]);
  };
  const onScreen = (id) => { const c = centres.get(id); return [t.x + c[0] * t.k, t.y + c[1] * t.k]; };
  const toggle = (id, open) => {
    const at = onScreen(id);
    expanded = new Set(expanded);
    if (open) expanded.add(id);
    else for (const e of [...expanded]) if (e === id || within(e, id)) expanded.delete(e);
    info.hidden = true;
    relayout(keepAt(id, at));
  };
  const within = (inner, outer) => {
    for (let at = tree.items.get(inner)?.parent; at; at = at.parent) if (at.id === outer) return true;
    return false;
  };
  svg.addEventListener("click", (ev) => {
    if (pz.takeDrag()) { ev.preventDefault(); ev.stopPropagation(); return; }
    const group = ev.target.closest(".pg-graph-group");
    if (group) { toggle(group.dataset.group, true); return; }
    const head = ev.target.closest(".pg-graph-cluster-name");
    if (head) { toggle(head.parentNode.dataset.group, false); return; }
    const box = ev.target.closest(".pg-graph-node");
    if (!box) { info.hidden = true; return; }
    const n = byId.get(box.dataset.node);
    if (ev.shiftKey) {
      ev.preventDefault();
      const at = selection.indexOf(n.id);
      if (at >= 0) selection.splice(at, 1); else selection.push(n.id);
      showSelection();
      return;
    }
    if (!n.href) { // a grey node: the reason it does not open, where it was clicked
      info.replaceChildren();
      html("b", {}, info, `${n.id} · ${n.op}`);
      html("div", { class: "pg-graph-reason" }, info, n.detail || "no layer computes this node");
      const close = html("button", { type: "button", "aria-label": "close" }, info, "×");
      close.addEventListener("click", (e) => { e.stopPropagation(); info.hidden = true; });
      info.hidden = false;
      info.dataset.node = n.id;
      card.hidden = true; // the reason, not the card over it
    }
  }, true);
  clear.addEventListener("click", () => { selection.length = 0; showSelection(); });

  // -- finding a node: its groups opened, it centred ----------------------------------------------------------------
  const centre = (nodeId) => {
    const show = () => {
      const id = "n:" + nodeId, c = centres.get(id);
      pz.centreOn(c[0], c[1], 1);
      for (const b of root.querySelectorAll(".pg-graph-found")) b.classList.remove("pg-graph-found");
      boxes.get(id).classList.add("pg-graph-found");
      root.dataset.centred = nodeId;
    };
    const closed = G.ancestors(tree, nodeId).filter((id) => !expanded.has(id));
    if (!closed.length) { show(); return; }
    expanded = new Set([...expanded, ...closed]);
    relayout(show);
  };
  const fit = () => pz.fit(laid);
  fitButton.addEventListener("click", fit);
  collapseButton.addEventListener("click", () => { expanded = G.firstExpanded(tree); relayout(fit); });
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

  const first = () => pz.first(laid, dim.margin);
  relayout(() => { first(); requestAnimationFrame(() => { if (laid) first(); }); });
}

