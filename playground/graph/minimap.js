// The graph's minimap (graph.js places it): the whole layout drawn small on a canvas, each box in its status's
// colour (a box the keep-FP32 plan keeps outlined), the view's rectangle over it; pressed or dragged, it hands
// the world point under the pointer to `moveTo` (graph.js centres the view there). It hides itself while the whole
// graph is in view.
export const SIZE = { w: 168, h: 120 };
const COLOURS = { agrees: "#7cc47f", differs: "#e57373", open: "#90b4e8", none: "#bdbdbd" };
const KEPT = "#00838f"; // graph.css's .pg-graph-kept

// (the view element it sits in, the AbortSignal of the graph's window listeners, moveTo(wx, wy)) ->
// {draw(laid, t, [w, h], box, statusOf), pressed()}: statusOf(id) -> [status, kept] of a laid-out box
export function minimap(view, signal, moveTo) {
  const mini = view.ownerDocument.createElement("canvas");
  mini.className = "pg-graph-minimap";
  mini.width = SIZE.w;
  mini.height = SIZE.h;
  mini.title = "the whole graph: click or drag to move the view";
  view.append(mini);
  let map = null, mapping = false;

  const to = (ev) => { // the world point under the pointer
    const r = mini.getBoundingClientRect();
    moveTo((ev.clientX - r.left - map.ox) / map.s, (ev.clientY - r.top - map.oy) / map.s);
  };
  mini.addEventListener("pointerdown", (ev) => { ev.stopPropagation(); mapping = true; to(ev); });
  const win = view.ownerDocument.defaultView;
  win.addEventListener("pointermove", (ev) => { if (mapping) to(ev); }, { signal });
  win.addEventListener("pointerup", () => { mapping = false; }, { signal });

  const draw = (laid, t, [w, h], box, statusOf) => {
    const whole = laid.width * t.k <= w + 1 && laid.height * t.k <= h + 1;
    mini.hidden = whole; // all of the graph is in view: no map needed
    if (whole) return;
    const s = Math.min(SIZE.w / laid.width, SIZE.h / laid.height);
    map = { s, ox: (SIZE.w - laid.width * s) / 2, oy: (SIZE.h - laid.height * s) / 2 };
    const ctx = mini.getContext("2d");
    ctx.clearRect(0, 0, SIZE.w, SIZE.h);
    ctx.lineWidth = 1;
    ctx.strokeStyle = "#999";
    for (const [, x, y, cw, ch] of laid.clusters) {
      ctx.strokeRect(map.ox + (x - cw / 2) * s, map.oy + (y - ch / 2) * s, cw * s, ch * s);
    }
    for (const [id, x, y] of laid.boxes) {
      const [status, kept] = statusOf(id);
      const bx = map.ox + (x - box.w / 2) * s, by = map.oy + (y - box.h / 2) * s;
      const bw = Math.max(1, box.w * s), bh = Math.max(1, box.h * s);
      ctx.fillStyle = COLOURS[status] || COLOURS.none;
      ctx.fillRect(bx, by, bw, bh);
      if (kept) {
        ctx.strokeStyle = KEPT;
        ctx.strokeRect(bx - 1, by - 1, bw + 2, bh + 2);
      }
    }
    ctx.strokeStyle = "#1565c0";
    ctx.lineWidth = 2;
    ctx.strokeRect(map.ox + (-t.x / t.k) * s, map.oy + (-t.y / t.k) * s, (w / t.k) * s, (h / t.k) * s);
  };
  return { draw, pressed: () => mapping };
}
