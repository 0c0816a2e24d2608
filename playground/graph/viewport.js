// The graph's pan and zoom (graph.js uses it): one transform {k, x, y} on the world's group. The wheel scrolls the
// page unless Ctrl is held over the graph or the graph was clicked into (as the anchors do: Netron, Model
// Explorer), a hint saying so; a drag pans, and its end is no click (`takeDrag`).
const MIN_K = 0.02, MAX_K = 4;
const FIT_K = 2; // Fit enlarges a small graph up to twice its size: its names legible on a projector
const READABLE_K = 0.6; // the first view's least zoom: below it the names are unreadable, the top is shown instead

// root: the graph's element (data-zoom, the class "pg-graph-engaged"); view: the element the graph is seen in;
// world: the <g> moved; hint: the element that says how to zoom; signal: aborts the window's listeners; onMove():
// after each move (the minimap follows); busy(): a press elsewhere owns the pointer (the minimap's)
export function viewport({ root, view, world, hint, signal, onMove, busy }) {
  const t = { k: 1, x: 0, y: 0 };
  const size = () => [view.clientWidth || 800, view.clientHeight || 600];
  const apply = () => {
    world.setAttribute("transform", `translate(${t.x},${t.y}) scale(${t.k})`);
    root.dataset.zoom = t.k.toFixed(3);
    onMove();
  };
  const zoomAt = (k, px, py) => {
    k = Math.min(MAX_K, Math.max(MIN_K, k));
    t.x = px - (px - t.x) * (k / t.k);
    t.y = py - (py - t.y) * (k / t.k);
    t.k = k;
    apply();
  };
  const fit = (laid) => { // the whole graph, centred
    const [w, h] = size();
    t.k = Math.min(MAX_K, Math.max(MIN_K, Math.min(w / laid.width, h / laid.height, FIT_K)));
    t.x = (w - laid.width * t.k) / 2;
    t.y = (h - laid.height * t.k) / 2;
    apply();
  };
  const first = (laid, margin) => { // the whole graph where its names stay readable, else its top at full width
    fit(laid);
    if (t.k >= READABLE_K) return;
    const [w] = size();
    t.k = Math.max(READABLE_K, Math.min(1, w / laid.width));
    t.x = Math.min(margin, (w - laid.width * t.k) / 2);
    t.y = 0;
    apply();
  };
  const place = (wx, wy, sx, sy) => { // the world's point (wx, wy) at the view's (sx, sy)
    t.x = sx - wx * t.k;
    t.y = sy - wy * t.k;
    apply();
  };
  const centreOn = (wx, wy, least = 0) => {
    const [w, h] = size();
    t.k = Math.max(t.k, least);
    place(wx, wy, w / 2, h / 2);
  };

  let engaged = false, hintTimer = null;
  view.addEventListener("wheel", (ev) => {
    if (!ev.ctrlKey && !engaged) {
      hint.hidden = false;
      clearTimeout(hintTimer);
      hintTimer = setTimeout(() => { hint.hidden = true; }, 1500);
      return;
    }
    ev.preventDefault();
    const r = view.getBoundingClientRect();
    zoomAt(t.k * Math.exp(-ev.deltaY * 0.0015), ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
  const win = view.ownerDocument.defaultView;
  win.addEventListener("pointerdown", (ev) => {
    engaged = view.contains(ev.target);
    root.classList.toggle("pg-graph-engaged", engaged);
  }, { signal, capture: true });

  let drag = null, dragged = false;
  view.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0) return;
    drag = { x: ev.clientX, y: ev.clientY, tx: t.x, ty: t.y };
    dragged = false;
  });
  win.addEventListener("pointermove", (ev) => {
    if (!drag || busy()) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (!dragged && Math.hypot(dx, dy) < 4) return; // a click, not a drag
    dragged = true;
    view.classList.add("pg-graph-panning");
    t.x = drag.tx + dx;
    t.y = drag.ty + dy;
    apply();
  }, { signal });
  win.addEventListener("pointerup", () => { drag = null; view.classList.remove("pg-graph-panning"); }, { signal });

  // whether the click now ending was a drag's end (then it follows no link), once
  const takeDrag = () => { const was = dragged; dragged = false; return was; };
  return { t, size, apply, fit, first, place, centreOn, takeDrag };
}
