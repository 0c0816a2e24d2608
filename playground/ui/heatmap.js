// The stage's heatmaps on a canvas (spec: plots.tensor_heatmap). A change redraws the same canvas in place.
// Hovering a cell shows its index and value; on an output whose spec carries the cells' input windows
// (meta.windows) it outlines that window on the input heatmap (data.link); a click picks the cell (trigger "pick").
// data.caption is written under the canvas as text (.pg-caption).
const REGISTRY = (window.__playgroundHeatmaps = window.__playgroundHeatmaps || {});

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let root = parentElement.querySelector(".pg-heatmap");
  if (!root) {
    root = document.createElement("div");
    root.className = "pg-heatmap";
    root.innerHTML = '<canvas class="pg-cells"></canvas><canvas class="pg-overlay"></canvas>' +
      '<div class="pg-tip"></div><button class="pg-png" title="Download as PNG">PNG</button>';
    root.cellCentre = (i, h, w) => {  // page coordinates of cell (slice i, h, w)'s centre
      const spec = root.__data.spec, g = grid(spec.panels[i], spec), [x, y] = at(g, h, w), r = root.getBoundingClientRect();
      return [r.left + x + g.cw / 2, r.top + y + g.ch / 2];
    };
    root.caption = document.createElement("div");
    root.caption.className = "pg-caption";
    parentElement.append(root, root.caption);
    wire(root, setTriggerValue);
  }
  root.caption.textContent = data.caption || "";
  root.caption.style.width = data.spec.width + "px";
  root.__data = data;
  root.spec = data.spec;  // what is drawn: a new object on every redraw (tests and benchmarks compare it)
  draw(root, data.spec);
  root.dataset.version = String(Number(root.dataset.version || 0) + 1);  // a redraw, for tests and benchmarks
  const entry = { outline: (cells, color, hw) => outline(root, cells, color, hw) };
  REGISTRY[data.key] = entry;
  return () => { if (REGISTRY[data.key] === entry) delete REGISTRY[data.key]; };
}

// -- geometry -------------------------------------------------------------------------------
function grid(p, spec) {  // cell size and origin of a panel over its index range (padding cells widen it)
  const [h0, h1, w0, w1] = p.range, f = spec.stride, square = spec.square;
  const nh = Math.floor((h1 - h0) / f) + 1, nw = Math.floor((w1 - w0) / f) + 1;
  let cw = p.w / nw, ch = p.h / nh;
  if (square) cw = ch = Math.min(cw, ch);
  return { cw, ch, x0: p.x + (p.w - cw * nw) / 2, y0: p.y, h0, w0, f };
}
const at = (g, h, w) => [g.x0 + ((w - g.w0) / g.f) * g.cw, g.y0 + ((h - g.h0) / g.f) * g.ch];

function values(p) {
  if (!p.__values) {
    const bin = atob(p.values), bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    p.__values = p.dtype === "f8" ? new Float64Array(bytes.buffer) : new Float32Array(bytes.buffer);
  }
  return p.__values;
}

// -- colours --------------------------------------------------------------------------------
function rgb(c) {
  if (c.startsWith("#")) {
    const n = c.length === 4 ? c.slice(1).split("").map((x) => x + x).join("") : c.slice(1);
    return [0, 2, 4].map((i) => parseInt(n.slice(i, i + 2), 16));
  }
  return c.replace(/[^\d.,]/g, "").split(",").slice(0, 3).map(Number);
}
function colour(stops, t) {  // linear between the scale's stops, as Plotly does
  for (let i = 1; i < stops.length; i++) {
    if (t <= stops[i][0] || i === stops.length - 1) {
      const [p0, c0] = stops[i - 1], [p1, c1] = stops[i], u = p1 > p0 ? Math.min(Math.max((t - p0) / (p1 - p0), 0), 1) : 0;
      return [0, 1, 2].map((k) => Math.round(c0[k] + (c1[k] - c0[k]) * u));
    }
  }
  return stops[0][1];
}
function cellColour(v, p, stops, style) {
  if (Number.isNaN(v)) return rgb(style.nan);
  if (v === Infinity) return rgb(style.posinf);
  if (v === -Infinity) return rgb(style.neginf);
  return colour(stops, p.zmax > p.zmin ? (v - p.zmin) / (p.zmax - p.zmin) : 0.5);
}

// -- numbers --------------------------------------------------------------------------------
function short(v) {  // colour bar labels: 0.25, 1.5, 20k, 3M, 1e-4
  const a = Math.abs(v), trim = (x) => String(Number(x.toPrecision(3)));
  if (a === 0) return "0";
  if (a >= 1e9 || a < 1e-3) return v.toExponential(1).replace("e+", "e").replace(".0e", "e");
  return a >= 1e6 ? trim(v / 1e6) + "M" : a >= 1e4 ? trim(v / 1e3) + "k" : trim(v);
}
function exact(v) { return Number.isFinite(v) ? String(Number(v.toPrecision(7))) : (Number.isNaN(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf"); }
function step(span, room, min) {  // a 1-2-5 step so labels sit at least `min` px apart
  const raw = span * min / Math.max(room, 1), e = Math.pow(10, Math.floor(Math.log10(raw || 1)));
  return [1, 2, 5, 10].map((m) => m * e).find((s) => s >= raw) || 10 * e;
}

// -- drawing --------------------------------------------------------------------------------
function sized(canvas, w, h, scale) {
  canvas.width = Math.round(w * scale); canvas.height = Math.round(h * scale);
  canvas.style.width = w + "px"; canvas.style.height = h + "px";
  const ctx = canvas.getContext("2d");
  ctx.setTransform(scale, 0, 0, scale, 0, 0);
  return ctx;
}

function draw(root, spec, scale) {
  const own = scale === undefined;
  const canvas = own ? root.querySelector(".pg-cells") : document.createElement("canvas");
  scale = own ? (window.devicePixelRatio || 1) : scale;
  const s = spec.style, ctx = sized(canvas, spec.width, spec.height, scale);
  if (own) {
    root.style.width = spec.width + "px"; root.style.height = spec.height + "px";
    sized(root.querySelector(".pg-overlay"), spec.width, spec.height, scale);
    root.classList.toggle("pg-clickable", Boolean(spec.clickable));
  }
  ctx.clearRect(0, 0, spec.width, spec.height);
  ctx.fillStyle = s.color; ctx.textBaseline = "alphabetic"; ctx.textAlign = "left";
  ctx.font = `${s.title}px ${s.font}`;
  ctx.fillText(spec.title, spec.panels[0].x, s.title + 4);
  const top = Math.min(...spec.panels.map((p) => p.y)), bottom = Math.max(...spec.panels.map((p) => p.y + p.h));
  const right = Math.max(...spec.panels.map((p) => p.x + p.w));
  for (const p of spec.panels) {
    const g = grid(p, spec), v = values(p), stops = p.scale.map(([t, c]) => [t, rgb(c)]);
    const img = new ImageData(p.cols, p.rows), px = img.data;
    const colours = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const c = (colours[i] = cellColour(v[i], p, stops, s));
      px[4 * i] = c[0]; px[4 * i + 1] = c[1]; px[4 * i + 2] = c[2]; px[4 * i + 3] = 255;
    }
    const off = document.createElement("canvas");
    off.width = p.cols; off.height = p.rows;
    off.getContext("2d").putImageData(img, 0, 0);
    const [x, y] = at(g, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(off, x, y, p.cols * g.cw, p.rows * g.ch);
    if (p.text) {  // the numbers, dark on light cells and light on dark ones
      ctx.font = `${s.cell}px ${s.font}`; ctx.textAlign = "center"; ctx.textBaseline = "middle";
      for (let i = 0; i < p.text.length; i++) {
        const c = colours[i], light = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2] > 150;
        ctx.fillStyle = light ? "#1f2328" : "#ffffff";
        ctx.fillText(p.text[i], x + ((i % p.cols) + 0.5) * g.cw, y + (Math.floor(i / p.cols) + 0.5) * g.ch);
      }
    }
    ticks(ctx, p, g, s);
    if (p.label) {
      ctx.font = `${s.subtitle}px ${s.font}`; ctx.fillStyle = s.color; ctx.textAlign = "center"; ctx.textBaseline = "bottom";
      ctx.fillText(p.label, p.x + p.w / 2, p.y - 4);
    }
    for (const [h, w, inside] of p.outlines) box(ctx, g, h, w, s.window, s.outline, !inside);
    if (p.selected) box(ctx, g, p.selected[0], p.selected[1], s.selected, s.outline * 1.5, false);
    if (p.bar) colourBar(ctx, p, stops, s, spec.own_bars ? [p.x + p.w + 6, p.y, p.h] : [right + 10, top, bottom - top]);
  }
  let lx = spec.panels[0].x;
  ctx.textAlign = "left"; ctx.textBaseline = "middle"; ctx.font = `${s.size}px ${s.font}`;
  for (const [text, c] of spec.legend) {  // the non-finite colours, with their counts
    const ly = spec.height - s.size;
    ctx.fillStyle = c; ctx.fillRect(lx, ly - s.size / 2, s.size, s.size);
    ctx.fillStyle = s.color; ctx.fillText(text, lx + s.size * 1.4, ly);
    lx += s.size * 2 + ctx.measureText(text).width + 16;
  }
  return canvas;
}

function ticks(ctx, p, g, s) {
  ctx.fillStyle = s.color; ctx.font = `${s.size - 1}px ${s.font}`;
  const [h0, h1, w0, w1] = p.range;
  const every = (lo, hi, room, min) => {  // every index where they fit, else a 1-2-5 step
    const k = Math.max(1, step(hi - lo + 1, room, min)), out = [];
    for (let i = Math.ceil(lo / k) * k; i <= hi; i += k) out.push(i);
    return out;
  };
  ctx.textAlign = "right"; ctx.textBaseline = "middle";
  for (const h of every(h0, h1, p.rows * g.ch, s.size * 1.2)) ctx.fillText(String(h), g.x0 - 4, at(g, h, w0)[1] + g.ch / 2);
  ctx.textAlign = "center"; ctx.textBaseline = "top";
  const yb = g.y0 + (Math.floor((h1 - h0) / g.f) + 1) * g.ch + 3;
  const wide = ctx.measureText(String(w1)).width + 6;
  for (const w of every(w0, w1, p.cols * g.cw, wide)) ctx.fillText(String(w), at(g, h0, w)[0] + g.cw / 2, yb);
}

function box(ctx, g, h, w, colour, width, dashed) {
  const [x, y] = at(g, h, w);
  ctx.save();
  ctx.strokeStyle = colour; ctx.lineWidth = width; ctx.setLineDash(dashed ? [5, 4] : []);
  ctx.strokeRect(x + width / 2, y + width / 2, g.cw - width, g.ch - width);
  ctx.restore();
}

function colourBar(ctx, p, stops, s, [x, y, h]) {
  const grad = ctx.createLinearGradient(0, y + h, 0, y);
  for (const [t, c] of stops) grad.addColorStop(t, `rgb(${c.join(",")})`);
  ctx.fillStyle = grad; ctx.fillRect(x, y, s.bar, h);
  ctx.fillStyle = s.color; ctx.font = `${s.size - 1}px ${s.font}`; ctx.textAlign = "left"; ctx.textBaseline = "middle";
  const span = p.zmax - p.zmin, k = step(span, h, s.size * 2.2);
  for (let v = Math.ceil(p.zmin / k) * k; v <= p.zmax + k * 1e-9; v += k) {
    ctx.fillText(short(Math.abs(v) < k * 1e-9 ? 0 : v), x + s.bar + 4, y + h - ((v - p.zmin) / (span || 1)) * h);
  }
}

// -- interaction ----------------------------------------------------------------------------
function cellAt(root, ev) {  // the panel and the real (h, w) under the pointer, or null
  const spec = root.__data.spec, r = root.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
  for (const p of spec.panels) {
    const g = grid(p, spec), [x, y] = at(g, 0, 0);
    const j = Math.floor((mx - x) / g.cw), i = Math.floor((my - y) / g.ch);
    if (i >= 0 && j >= 0 && i < p.rows && j < p.cols) return { p, i, j, h: i * spec.stride, w: j * spec.stride };
  }
  return null;
}

function wire(root, setTriggerValue) {
  const tip = root.querySelector(".pg-tip");
  const linked = () => REGISTRY[root.__data.link];
  root.addEventListener("mousemove", (ev) => {
    const c = cellAt(root, ev), spec = root.__data.spec;
    if (!c) { tip.style.display = "none"; if (linked()) linked().outline([]); return; }
    const v = values(c.p)[c.i * c.p.cols + c.j];
    tip.innerHTML = `${c.p.label ? c.p.label + ", " : ""}h=${c.h}, w=${c.w}<br>value = ${exact(v)}` +
      (spec.stride > 1 ? `<br>(every ${spec.stride}th cell drawn)` : "");
    const r = root.getBoundingClientRect();
    tip.style.display = "block";
    tip.style.left = Math.min(ev.clientX - r.left + 14, spec.width - 150) + "px";
    tip.style.top = ev.clientY - r.top + 14 + "px";
    const meta = spec.meta, cells = meta && meta.windows && meta.windows[[...c.p.index, c.h, c.w].join(",")];
    if (cells && linked()) linked().outline(cells, meta.color, meta.hw);
  });
  root.addEventListener("mouseleave", () => { tip.style.display = "none"; if (linked()) linked().outline([]); });
  root.addEventListener("click", (ev) => {
    const c = cellAt(root, ev);
    if (c && root.__data.spec.clickable) setTriggerValue("pick", [...c.p.index, c.h, c.w]);
  });
  root.querySelector(".pg-png").addEventListener("click", (ev) => {
    ev.stopPropagation();
    draw(root, root.__data.spec, 2).toBlob((blob) => {  // twice the screen's pixels: crisp in documents
      const a = document.createElement("a");
      a.href = URL.createObjectURL(blob); a.download = root.__data.filename + ".png"; a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 1000);
    });
  });
}

function outline(root, cells, colour, hw) {  // the hovered output cell's input window, on this heatmap
  const spec = root.__data.spec, s = spec.style, ctx = root.querySelector(".pg-overlay").getContext("2d");
  ctx.save(); ctx.setTransform(1, 0, 0, 1, 0, 0); ctx.clearRect(0, 0, ctx.canvas.width, ctx.canvas.height); ctx.restore();
  root.outlined = cells.map(([, h, w]) => [h, w]);
  for (const [i, h, w] of cells) {
    const p = spec.panels[i];
    if (!p) continue;
    const inside = h >= 0 && w >= 0 && h < hw[0] && w < hw[1];
    box(ctx, grid(p, spec), h, w, colour || s.window, 3, !inside);
  }
}
