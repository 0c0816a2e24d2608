// The stage: every parameter's control, the figures, hover/pick/step/play, and the URL, in the browser.
// A change asks the server (POST data.route, the seat's token in X-Stage-Token) for the evaluation and draws the
// answer; nothing reruns the page's script. While a slider is dragged, requests are coalesced: one in flight,
// the latest waiting, every answer drawn as it comes, the released value last. Answers already drawn are kept
// (CACHE_BYTES) so a step back is drawn without a round trip.
const CACHE_BYTES = 64 << 20; // per tab, stated in the README
const SETTLE_MS = 1200; // a configuration the hand has left this long: the sections under the stage follow it (a page run)

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let stage = parentElement.querySelector(".pg-stage");
  if (stage && stage.__epoch === data.epoch) return; // a rerun of the page with the same stage: nothing to do
  if (!stage) {
    stage = document.createElement("div");
    stage.className = "pg-stage";
    parentElement.append(stage);
  }
  stage.__epoch = data.epoch;
  if (stage.__stage) stage.__stage.stop(); // the page gave its stage a new input or example: start afresh
  const s = new Stage(stage, data, setTriggerValue);
  stage.__stage = s; // for tests and benchmarks
  s.start();
  return () => s.stop();
}

class Stage {
  constructor(root, data, trigger) {
    this.root = root; this.data = data; this.trigger = trigger;
    // A parameter whose default follows a choice (activation's alpha with its type): key -> the choices' keys.
    this.owners = {};
    for (const [owner, keys] of Object.entries(data.describe.resets || {})) for (const k of keys) (this.owners[k] ||= []).push(owner);
    this.layer = data.describe.layer;
    this.query = { ...data.query }; // the configuration as URL texts (every key of this layer)
    this.compare = data.compare || null;
    this.cache = new Map(); this.cacheBytes = 0; // answers by configuration
    this.tensors = new Map(); // decoded tensors by id: an answer names the ones the browser holds, not resent
    this.inflight = null; this.waiting = null; this.seq = 0; this.drawnSeq = 0;
    this.answer = null; this.pick = null; this.playing = null; this.speed = 1;
    this.settleTimer = null;
  }

  start() {
    this.root.dataset.mountedAt = performance.now().toFixed(0); // since the page's navigation (bench_browser)
    this.root.innerHTML = "";
    this.root.classList.remove("pg-busy"); // the stage before this one may have gone mid-request (a server restart)
    this.root.classList.toggle("pg-presenter", Boolean(this.data.presenter));
    this.root.innerHTML =
      `<div class="pg-controls" role="group" aria-label="Parameters of ${esc(this.data.describe.title)}"></div>` +
      `<div class="pg-figures"><div class="pg-head"></div><div class="pg-problem" role="alert"></div>` +
      `<div class="pg-link"><button class="pg-copy" aria-label="Copy the link to this configuration">Copy link</button>` +
      (this.data.presenter ? `<button class="pg-qr-button" aria-label="Show the link as a QR code">QR code</button>` : "") +
      `<button class="pg-png" aria-label="Save the figures as one PNG picture">PNG</button>` +
      `<code class="pg-url"></code></div>` +
      `<div class="pg-precision"></div><div class="pg-row"></div><div class="pg-cell"></div></div>` +
      `<div class="pg-explain"></div>`;
    this.controlsEl = this.root.querySelector(".pg-controls");
    this.headEl = this.root.querySelector(".pg-head");
    this.problemEl = this.root.querySelector(".pg-problem");
    this.precisionEl = this.root.querySelector(".pg-precision");
    this.rowEl = this.root.querySelector(".pg-row");
    this.cellEl = this.root.querySelector(".pg-cell");
    this.explainEl = this.root.querySelector(".pg-explain");
    this.root.querySelector(".pg-png").onclick = () => this.savePng();
    const qr = this.root.querySelector(".pg-qr-button");
    if (qr) qr.onclick = () => this.showQr();
    this.root.querySelector(".pg-copy").onclick = async () => {
      const text = this.link(), button = this.root.querySelector(".pg-copy");
      try { await navigator.clipboard.writeText(text); button.textContent = "Copied"; }
      catch (e) { const r = document.createRange(); r.selectNodeContents(this.root.querySelector(".pg-url")); getSelection().removeAllRanges(); getSelection().addRange(r); button.textContent = "Selected: press Ctrl+C"; }
      setTimeout(() => { button.textContent = "Copy link"; }, 1500);
    };
    this.tip = document.createElement("div");
    this.tip.className = "pg-tip"; this.tip.setAttribute("role", "tooltip");
    this.root.append(this.tip);
    this.onResize = () => this.answer && this.drawFigures();
    window.addEventListener("resize", this.onResize);
    this.buildControls(this.data.describe.controls);
    if (this.data.answer && this.resolve(this.data.answer)) this.show(this.data.answer, ++this.seq, true);
    else if (this.data.answer) this.request(false); // a large configuration's values come by the route
    if (this.data.problem) this.showProblem(this.data.problem);
    this.followUrl();
    // Once the figures are on the screen, the page draws what it held back (the tabs under the stage): the first
    // paint does not wait for them.
    requestAnimationFrame(() => setTimeout(() => {
      this.root.dataset.paintedAt = performance.now().toFixed(0); // since the page's navigation (bench_browser)
      if (!this.data.painted) this.trigger("painted", this.data.epoch);
    }, 0));
  }

  // The URL is the contract: where the page's script ran on an older query than the address bar holds (the page
  // reconnected to another replica, whose run had the query the page loaded with), the address bar wins.
  followUrl() {
    const url = new URLSearchParams(window.location.search), d = this.data.describe.defaults, moved = {};
    for (const k of this.data.describe.keys) {
      const v = url.has(k) ? url.get(k) : this.owners[k] ? undefined : d[k]; // left out: the page's run said it
      if (v !== undefined && this.query[k] !== undefined && v !== this.query[k]) moved[k] = v;
    }
    if (Object.keys(moved).length) { Object.assign(this.query, moved); this.request(false); }
  }

  // The link a room can open: the configured public address (PLAYGROUND_PUBLIC_URL) or the address this page was
  // opened under (never "localhost" when it was opened under another name), with the path and the query.
  link() {
    return this.data.public ? this.data.public + window.location.pathname + window.location.search : window.location.href;
  }

  // Every figure, its title and its stats, on one picture at twice the screen's pixels with an opaque white
  // background (a transparent one loses its dark text in a dark-mode document), named by the configuration.
  savePng() {
    const scale = 2, pad = 12, title = 18, figs = Object.values(this.figs || {});
    if (!figs.length) return;
    const width = figs.reduce((w, f) => w + f.g.width + FIGURE_GAP, pad * 2 - FIGURE_GAP);
    const height = pad * 2 + title + Math.max(...figs.map((f) => f.g.height)) + 44;
    const out = document.createElement("canvas");
    out.width = width * scale; out.height = height * scale;
    const ctx = out.getContext("2d");
    ctx.scale(scale, scale);
    ctx.fillStyle = "#ffffff"; ctx.fillRect(0, 0, width, height);
    ctx.fillStyle = "#111827"; ctx.font = "bold 15px system-ui, sans-serif"; ctx.textBaseline = "top";
    ctx.fillText(`${this.answer.title} · ${this.answer.shapes}`, pad, pad);
    let x = pad;
    for (const f of figs) {
      const y = pad + title + 6;
      ctx.drawImage(f.canvas, x, y, f.g.width, f.g.height);
      ctx.drawImage(f.overlay, x, y, f.g.width, f.g.height);
      ctx.fillStyle = "#111827"; ctx.font = "bold 12px system-ui, sans-serif";
      ctx.fillText(f.title, x, y + f.g.height + 4);
      ctx.font = "11px system-ui, sans-serif";
      ctx.fillText(stats(f.t), x, y + f.g.height + 20, Math.max(f.g.width, 160));
      x += f.g.width + FIGURE_GAP;
    }
    out.toBlob((blob) => {
      const a = document.createElement("a");
      a.href = URL.createObjectURL(blob); a.download = `${this.fileName()}.png`; a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 1000);
    });
  }

  fileName() { // the layer and what differs from its defaults: convolution--stride_nd.h-2--padding_mode-SAME_UPPER
    const d = this.data.describe.defaults, parts = [this.layer];
    for (const k of this.data.describe.keys) {
      if (this.query[k] !== undefined && this.query[k] !== d[k]) parts.push(`${k.slice(this.layer.length + 1)}-${this.query[k]}`);
    }
    if (this.compare) parts.push(`compare-${this.compare}`);
    return parts.join("--").replace(/[^A-Za-z0-9_.-]+/g, "-").slice(0, 150);
  }

  async showQr() { // over the stage, not in its flow: nothing moves; a click or Escape closes it
    let panel = this.root.querySelector(".pg-qr");
    if (panel) { panel.remove(); return; }
    const r = await fetch(this.data.qr, { method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-Stage-Token": this.data.token },
      body: JSON.stringify({ url: this.link() }) });
    panel = document.createElement("div");
    panel.className = "pg-qr"; panel.setAttribute("role", "dialog"); panel.setAttribute("aria-label", "QR code of the link");
    panel.innerHTML = r.ok ? (await r.text()) + `<div class="pg-qr-url">${esc(this.link())}</div>` : esc((await r.json()).error);
    panel.tabIndex = -1;
    panel.onclick = () => panel.remove();
    panel.onkeydown = (e) => { if (e.key === "Escape") panel.remove(); };
    this.root.append(panel);
    panel.focus();
  }

  stop() {
    this.stopped = true;
    window.removeEventListener("resize", this.onResize);
    if (this.playing) clearInterval(this.playing);
    if (this.settleTimer) clearTimeout(this.settleTimer);
  }

  // -- controls ----------------------------------------------------------------------------------
  buildControls(list) {
    this.controlsEl.innerHTML = "";
    this.inputs = {};
    const d = this.data.describe, hide = new Set(this.data.hide || []);
    if (d.examples.length && !hide.has("preset")) this.controlsEl.append(this.picker(d.examples));
    if (!hide.has("compare")) this.controlsEl.append(this.comparer(d.precisions));
    for (const c of list) if (!hide.has(c.name)) this.controlsEl.append(this.control(c));
    if (hide.has("parameters")) this.controlsEl.hidden = true;
    for (const part of ["title", "formula", "explanation", "link"]) this.root.classList.toggle(`pg-hide-${part}`, hide.has(part));
    this.refreshControls(list);
  }

  picker(list) { // the spec's examples and the lessons: picking one sets the input too, which the page owns
    const box = document.createElement("div");
    box.className = "pg-control pg-picker";
    box.innerHTML = `<label class="pg-label" for="pg-${this.layer}-example"><span>Example or lesson</span></label>`;
    const sel = document.createElement("select");
    sel.id = `pg-${this.layer}-example`; sel.dataset.control = "example";
    sel.append(new Option("— none: your own configuration —", ""));
    for (const e of list) sel.append(new Option(`${e.kind}: ${e.title}`, e.name));
    sel.addEventListener("change", () => { if (sel.value) this.trigger("example", sel.value); });
    this.exampleEl = sel;
    box.append(sel);
    return box;
  }

  comparer(precisions) { // compare mode: the same configuration in a second precision, beside the first
    const box = document.createElement("div");
    box.className = "pg-control";
    box.innerHTML = `<label class="pg-label" for="pg-${this.layer}-compare"><span>Compare with (compare)</span></label>`;
    const sel = document.createElement("select");
    sel.id = `pg-${this.layer}-compare`; sel.dataset.param = `${this.layer}.compare`;
    sel.append(new Option("off", ""));
    for (const p of precisions) sel.append(new Option(p, p));
    sel.value = this.compare || "";
    sel.addEventListener("change", () => { this.compare = sel.value || null; this.set({}); });
    box.append(sel);
    return box;
  }

  control(c) {
    const box = document.createElement("div");
    box.className = "pg-control"; box.dataset.name = c.name;
    const head = document.createElement("div");
    head.className = "pg-label";
    head.innerHTML = `<span>${esc(c.label)}</span><span class="pg-value"></span>`;
    head.title = c.help;
    box.append(head);
    const add = (el, k) => { el.dataset.param = k; el.setAttribute("aria-label", `${c.label} ${k.split(".").slice(2).join(" ")}`.trim()); this.inputs[k] = el; return el; };
    if (c.kind === "enum") {
      const sel = document.createElement("select");
      for (const v of c.choices) sel.append(new Option(v, v));
      sel.addEventListener("change", () => this.set({ [c.key]: sel.value }));
      box.append(add(sel, c.key));
    } else if (c.kind === "bool") {
      const label = document.createElement("label"), cb = document.createElement("input");
      cb.type = "checkbox"; label.append(cb, document.createTextNode(" on"));
      cb.addEventListener("change", () => this.set({ [c.key]: cb.checked ? "true" : "false" }));
      add(cb, c.key); box.append(label);
    } else if (c.names) { // values with names (softmax's axis): a list of them, not a slider over a bitmask
      const sel = document.createElement("select");
      c.offered.forEach((v, i) => sel.append(new Option(c.names[i], String(v))));
      sel.addEventListener("change", () => this.set({ [c.key]: sel.value }));
      box.append(add(sel, c.key));
    } else if (c.kind === "int" || c.kind === "float") {
      box.append(this.slider(c, c.key, c.low, c.high, c.step, add));
    } else if (c.axes) {
      if (c.optional) {
        const label = document.createElement("label"), cb = document.createElement("input");
        cb.type = "checkbox"; label.append(cb, document.createTextNode(" set"));
        cb.addEventListener("change", () => this.set({ [c.key + ".set"]: cb.checked ? "true" : "false" }));
        add(cb, c.key + ".set"); box.append(label);
      }
      for (const ax of c.axes) {
        const row = document.createElement("div"); row.className = "pg-axis";
        row.innerHTML = `<span class="pg-ax">${ax}</span>`;
        row.append(this.slider(c, c.keys[ax], c.low, Math.min(c.high, c.low + 32), 1, add));
        box.append(row);
      }
    } else { // ints as text, arrays: a preset's name or numbers
      const text = document.createElement("input");
      text.type = "text"; text.spellcheck = false;
      if (c.presets && c.presets.length) {
        const list = document.createElement("datalist");
        list.id = `pg-${this.layer}-${c.name}-presets`;
        for (const v of c.presets) list.append(new Option(v, v));
        text.setAttribute("list", list.id); box.append(list);
      }
      text.addEventListener("change", () => this.set({ [c.key]: text.value }));
      box.append(add(text, c.key));
      this.valueSliders(c, box);
    }
    const note = document.createElement("div"); note.className = "pg-note";
    box.append(note);
    return box;
  }

  slider(c, k, low, high, step, add) {
    const wrap = document.createElement("div"); wrap.className = "pg-slider";
    const range = document.createElement("input");
    range.type = "range"; range.min = low; range.max = high; range.step = step;
    const box = document.createElement("input");
    box.type = "number"; box.min = c.min ?? c.low; box.max = c.max ?? c.high; box.step = "any";
    box.className = "pg-exact"; box.setAttribute("aria-label", `${c.label} exact value`);
    const snap = (v) => { // an int slider that offers some values only (valid group counts) lands on them
      if (!c.offered) return v;
      return String(c.offered.reduce((a, b) => (Math.abs(b - v) < Math.abs(a - v) ? b : a)));
    };
    // While the thumb is held (`dragging`) answers come quick and the full one waits for the release.
    range.addEventListener("pointerdown", () => { this.dragging = true; });
    range.addEventListener("input", () => {
      const v = String(snap(Number(range.value)));
      box.value = v;
      if (v !== this.query[k]) this.set({ [k]: v });
    });
    range.addEventListener("change", () => { // the release: its value drawn in full (its engine built) last
      this.dragging = false;
      const v = String(snap(Number(range.value))), cached = this.cache.get(this.cacheKey());
      if (v !== this.query[k]) this.set({ [k]: v });
      else if (!this.inflight && (!cached || cached.__quick)) this.request(false);
    });
    box.addEventListener("change", () => this.set({ [k]: box.value }));
    wrap.append(add(range, k), box);
    return wrap;
  }

  // An array of a few values (a 3 × 1 kernel, three slopes): a slider and an exact box per value, which write the
  // array's text. Built again only when the count changes, so a slider under the pointer stays while it is dragged.
  valueSliders(c, box) {
    let wrap = box.querySelector(".pg-values");
    const values = c.values || [];
    if (wrap && wrap.children.length !== values.length) { wrap.remove(); wrap = null; }
    if (!values.length) return;
    if (wrap) {
      if (!this.dragging) wrap.values.splice(0, values.length, ...values);
      values.forEach((v, i) => {
        const row = wrap.children[i], range = row.querySelector("input[type=range]"), exact = row.querySelector(".pg-exact");
        if (document.activeElement !== range && !this.dragging) { range.value = v; range.setAttribute("aria-valuenow", v); }
        if (document.activeElement !== exact) exact.value = v;
        range.disabled = exact.disabled = !c.used;
      });
      return;
    }
    wrap = document.createElement("div"); wrap.className = "pg-values";
    const now = wrap.values = [...values], write = () => this.set({ [c.key]: now.map(String).join(",") });
    values.forEach((v, i) => {
      const reach = Math.max(1, 2 * Math.abs(v)); // weights have no declared range: around the value
      const [lo, hi] = c.slide || [Math.max(c.min ?? -reach, -reach), Math.min(c.max ?? reach, reach)];
      const row = document.createElement("div"); row.className = "pg-axis";
      row.innerHTML = `<span class="pg-ax">${i}</span>`;
      const range = document.createElement("input"), exact = document.createElement("input");
      range.type = "range"; range.min = lo; range.max = hi; range.step = c.step; range.value = v;
      range.dataset.value = `${c.key}.${i}`; range.setAttribute("aria-label", `${c.label} value ${i}`);
      range.setAttribute("aria-valuenow", v);
      exact.type = "number"; exact.step = "any"; exact.className = "pg-exact"; exact.value = v;
      exact.setAttribute("aria-label", `${c.label} value ${i} exact`);
      range.addEventListener("pointerdown", () => { this.dragging = true; });
      range.addEventListener("input", () => { now[i] = Number(range.value); exact.value = range.value; write(); });
      range.addEventListener("change", () => { this.dragging = false; now[i] = Number(range.value); write(); });
      exact.addEventListener("change", () => { now[i] = Number(exact.value); write(); });
      row.append(range, exact);
      wrap.append(row);
    });
    box.append(wrap);
  }

  refreshControls(list) {
    for (const c of list) {
      const box = this.controlsEl.querySelector(`.pg-control[data-name="${c.name}"]`);
      if (!box) continue;
      box.classList.toggle("pg-unused", !c.used);
      box.querySelector(".pg-note").textContent = c.used ? "" : c.why_unused;
      const keys = c.axes ? [...(c.optional ? [c.key + ".set"] : []), ...c.axes.map((a) => c.keys[a])] : [c.key];
      const setOff = c.optional && this.query[c.key + ".set"] !== "true";
      for (const k of keys) {
        const el = this.inputs[k], v = this.query[k];
        if (!el || v === undefined) continue;
        if (el.type === "checkbox") el.checked = v === "true";
        else if (document.activeElement !== el) el.value = v;
        el.disabled = !c.used || (setOff && !k.endsWith(".set"));
        if (el.type === "range") {
          if (c.tops && c.axes) { const t = c.tops[c.axes.indexOf(k.split(".").pop())]; if (t !== undefined) el.max = Math.max(t, Number(v)); }
          el.setAttribute("aria-valuenow", v);
          const exact = el.parentElement.querySelector(".pg-exact");
          if (exact && document.activeElement !== exact) exact.value = v;
        }
      }
      if (c.kind === "int" || c.kind === "float") box.querySelector(".pg-value").textContent = this.query[c.key] ?? "";
      if (c.kind === "array") this.valueSliders(c, box);
      if (c.offered && !c.names && c.used) box.querySelector(".pg-note").textContent = `offers ${c.offered.join(", ")}`;
    }
  }

  // -- requests ----------------------------------------------------------------------------------
  // A change is drawn from the browser's cache where it was drawn before; else asked for "quick" where no engine
  // runs (the reference at once, its engine built after: the badge catches up) and then in full once the hand
  // is off the control (pointer up, a key press): the released value's engine is always built, and drawn last.
  set(changes) {
    const keys = Object.keys(changes);
    this.moved = keys.length === 1 && this.inputs[keys[0]] && this.inputs[keys[0]].type === "range" ? keys[0] : null;
    Object.assign(this.query, changes);
    for (const k of keys) { // a choice that decides later defaults (activation's type): those take the new ones
      for (const r of (this.data.describe.resets || {})[k] || []) if (!(r in changes)) delete this.query[r];
      this.markProblem(k, null);
    }
    this.writeUrl();
    const cached = this.cache.get(this.cacheKey());
    if (cached) { this.root.dataset.hits = String(Number(this.root.dataset.hits || 0) + 1); this.show(cached, ++this.seq, false); }
    if (cached && !cached.__quick) { this.settle(); return; }
    this.request(!this.data.runs && !cached);
  }

  cacheKey(query = this.query, compare = this.compare) {
    return JSON.stringify([compare, Object.keys(query).sort().map((k) => [k, query[k]])]);
  }

  request(quick) {
    const have = [...this.tensors.keys()].slice(-64);
    const message = { params: { ...this.query }, compare: this.compare, pick: this.pick, quick, have };
    const seq = ++this.seq;
    if (this.inflight) { this.waiting = { message, seq }; return; } // coalesced: the latest wins
    this.send(message, seq);
  }

  async send(message, seq) {
    if (this.stopped) return; // a retry's timer of a stage the page replaced: the root is the new stage's now
    this.inflight = seq || -1;
    if (!message.background) this.root.classList.add("pg-busy");
    let reply, status;
    const asked = performance.now();
    try {
      const r = await fetch(this.data.route, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-Stage-Token": this.data.token },
        body: JSON.stringify({ ...message, background: undefined }),
      });
      status = r.status;
      this.root.dataset.serverMs = ((r.headers.get("Server-Timing") || "").match(/dur=([\d.]+)/) || [])[1] || "";
      reply = await r.json().catch(() => ({ error: `HTTP ${r.status}` }));
    } catch (e) {
      status = 0; reply = { error: `the server did not answer (${e.message})` };
    }
    if (this.stopped) return; // the page started its stage afresh meanwhile
    this.inflight = null;
    this.root.dataset.fetchMs = (performance.now() - asked).toFixed(1); // where a change's time goes (bench_stage)
    if (reply.answer && !this.resolve(reply.answer)) { // a tensor it named was let go meanwhile: ask again whole
      this.tensors.clear(); this.inflight = null; this.send({ ...message, have: [] }, seq); return;
    }
    if (message.background) { // a neighbour asked for while the hand rests: kept, not drawn
      if (reply.answer) { reply.answer.__quick = true; this.remember(reply.answer, message); }
      const next = this.waiting;
      this.waiting = null;
      if (next) this.send(next.message, next.seq); else if (reply.answer) this.prefetchNeighbours();
      return;
    }
    if (status === 200) this.lostSince = null;
    if (reply.answer) {
      reply.answer.__quick = message.quick;
      this.remember(reply.answer, message);
      if (seq > this.drawnSeq) this.show(reply.answer, seq, false);
    } else if (reply.problem) {
      if (seq > this.drawnSeq) { this.drawnSeq = seq; this.showProblem(reply.problem); }
    } else if (LOST.has(status) && (this.lostSince ??= performance.now()) > performance.now() - LOST_MS) {
      // The page's server is gone (a room's replica lost, a restart): the page reconnects to another, which starts
      // this stage afresh on the URL's configuration. Until then the drawing stays and the latest is asked again.
      this.inflight = -1;
      setTimeout(() => { this.inflight = null; const w = this.waiting || { message, seq }; this.waiting = null;
                         this.send(w.message, w.seq); }, 500);
      return;
    } else if (status === 429) { // the server still had one of this page's in flight: the latest, a moment later
      const again = this.waiting || { message, seq };
      this.waiting = null;
      this.inflight = -1;
      setTimeout(() => { this.inflight = null; this.send(this.waiting ? this.waiting.message : again.message,
                                                         this.waiting ? this.waiting.seq : again.seq); this.waiting = null; }, 100);
      return;
    } else {
      this.showProblem({ message: reply.error || `HTTP ${status}`, keys: reply.keys || [] }); // the key refused
    }
    const next = this.waiting;
    this.waiting = null;
    if (next) { this.send(next.message, next.seq); return; }
    if (reply.answer && message.quick && !this.dragging) { this.request(false); return; }
    this.root.classList.remove("pg-busy");
    if (!message.quick) { this.settle(); this.prefetchNeighbours(); }
  }

  // The values one step either side of the slider moved last, asked for (quick: the reference, at once) while the
  // hand rests and kept in the cache: the next arrow key is drawn without a round trip. One at a time, behind any
  // change the user makes; off where the server's speculative builds are (PLAYGROUND_PREFETCH=0).
  prefetchNeighbours() {
    if (!this.data.prefetch || !this.moved || this.inflight || this.waiting || this.dragging) return;
    const el = this.inputs[this.moved], c = (this.answer.controls || []).find((x) => this.moved.startsWith(x.key));
    if (!el || el.disabled || (c && c.offered)) return;
    const v = Number(this.query[this.moved]), step = Number(el.step) || 1;
    for (const n of [v + step, v - step]) {
      if (n < Number(el.min) - 1e-9 || n > Number(el.max) + 1e-9) continue;
      const q = { ...this.query, [this.moved]: String(Number(n.toFixed(6))) };
      if (this.cache.has(this.cacheKey(q))) continue;
      this.send({ params: q, compare: this.compare, pick: this.pick, quick: true, background: true,
                  have: [...this.tensors.keys()].slice(-64) }, 0);
      return;
    }
  }

  resolve(answer) { // each figure's tensor decoded once, by id: false if one named as held is not held
    for (const f of answer.figures) {
      if (f.t) continue;
      if (f.tensor.data) { f.t = decode(f.tensor); this.tensors.set(f.tensor.id, f.t); delete f.tensor.data; }
      else if (this.tensors.has(f.tensor.id)) { f.t = this.tensors.get(f.tensor.id); }
      else return false;
      this.tensors.delete(f.tensor.id); this.tensors.set(f.tensor.id, f.t); // most recently used last
    }
    let bytes = 0;
    for (const t of this.tensors.values()) bytes += t.values.byteLength;
    for (const [id, t] of this.tensors) { if (bytes <= CACHE_BYTES / 2) break; this.tensors.delete(id); bytes -= t.values.byteLength; }
    return true;
  }

  remember(answer, message) {
    const bytes = answer.figures.reduce((n, f) => n + f.t.values.byteLength, 0) + 4096;
    const k = this.cacheKey(message.params, message.compare);
    const old = this.cache.get(k);
    if (old && !old.__quick) return;
    if (old) { this.cache.delete(k); this.cacheBytes -= old.__bytes; } // a full answer replaces a quick one
    this.cache.set(k, answer); this.cacheBytes += bytes; answer.__bytes = bytes;
    for (const [old, a] of this.cache) { // least recently added first
      if (this.cacheBytes <= CACHE_BYTES) break;
      this.cache.delete(old); this.cacheBytes -= a.__bytes;
    }
  }

  settle() {
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => this.trigger("settled", { search: window.location.search }), SETTLE_MS);
  }

  writeUrl() {
    const url = new URL(window.location.href), defaults = this.data.describe.defaults;
    for (const k of this.data.describe.keys) {
      const v = this.query[k];
      // A key is left out where its value is the default, unless its default follows a choice that is not the
      // default's (LEAKY_RELU's alpha 0 is not what a link without alpha opens: 0.01).
      const implied = v === defaults[k] && !(this.owners[k] || []).some((o) => this.query[o] !== defaults[o]);
      if (v === undefined || implied) url.searchParams.delete(k); else url.searchParams.set(k, v);
    }
    url.searchParams.delete("preset");
    if (this.compare) url.searchParams.set(`${this.layer}.compare`, this.compare); else url.searchParams.delete(`${this.layer}.compare`);
    window.history.replaceState(window.history.state, "", url.toString().replace(/%2C/g, ","));
    if (this.root.querySelector(".pg-url")) this.root.querySelector(".pg-url").textContent = this.link();
  }

  // -- drawing -----------------------------------------------------------------------------------
  show(answer, seq, first) {
    const began = performance.now();
    this.drawnSeq = Math.max(this.drawnSeq, seq);
    this.answer = answer;
    if (first || !this.query || Object.keys(this.query).length === 0) this.query = { ...answer.query };
    else for (const [k, v] of Object.entries(answer.query)) if (!(k in this.query)) this.query[k] = v;
    if (answer.cells) this.pick = this.pick && answer.cells.reads[this.pick.join(",")] ? this.pick : answer.cells.picked;
    this.problemEl.textContent = ""; this.problemEl.hidden = true;
    this.refreshControls(answer.controls);
    this.headEl.innerHTML = `<span class="pg-title">${esc(answer.title)}</span> <b>${esc(answer.shapes)}</b>` +
      (answer.formula ? ` <code>${esc(answer.formula)}</code>` : "") +
      ` <span class="pg-badge ${answer.source.tensorrt ? "pg-trt" : "pg-ref"}" data-engine="${esc(answer.engine.status)}">${esc(answer.source.label)}</span>`;
    const ex = answer.example;
    if (this.exampleEl) this.exampleEl.value = ex ? ex.name : "";
    if (ex) this.headEl.innerHTML += ` <span class="pg-badge ${ex.matches ? "pg-agrees" : "pg-differs"}" title="${esc(ex.note)}">` +
      `${esc(ex.kind)} ${ex.matches ? "✓" : "✗"} ${esc(ex.message)}</span>`;
    const src = this.data.source; // a model's node: its file and name, the rules where ONNX computes it otherwise
    if (src) this.headEl.innerHTML = `<span class="pg-badge pg-model" data-onnx-node="${esc(src.node)}" title="${esc([...src.differs, ...src.notes].join(" "))}">` +
      `${esc(src.model)} · ${esc(src.node)} (${esc(src.op)})</span> ` + this.headEl.innerHTML;
    const ort = answer.onnxruntime; // a settled answer's: quick ones (a drag) leave it out
    if (ort) this.headEl.innerHTML += ` <span class="pg-badge ${ort.agrees ? "pg-ort-agrees" : "pg-ort-differs"}" data-onnxruntime="${ort.agrees}" title="${esc(ort.title)}">${esc(ort.text)}</span>`;
    const refused = answer.engine.refusal || answer.engine.error;
    this.precisionEl.textContent = [answer.precision, refused ? `${refused}. The output is the NumPy reference.` : ""].filter(Boolean).join(" · ");
    this.drawFigures();
    this.drawCell();
    this.explainEl.innerHTML = [...answer.explain, ...answer.messages.map((m) => "ℹ " + m)].map(markdown).join("");
    this.root.querySelector(".pg-url").textContent = this.link();
    this.root.dataset.drawMs = (performance.now() - began).toFixed(1);
    this.root.dataset.drawn = String(this.drawnSeq);
    this.root.dataset.query = JSON.stringify(this.query);
  }

  showProblem(p) {
    this.problemEl.hidden = false;
    this.problemEl.textContent = p.message + (this.answer ? " — the figures show the last valid configuration." : "");
    for (const k of p.keys || []) this.markProblem(k, p.rule || p.message);
  }

  markProblem(k, rule) {
    const el = this.inputs && this.inputs[k];
    if (!el) return;
    el.classList.toggle("pg-invalid", Boolean(rule));
    el.setAttribute("aria-invalid", rule ? "true" : "false");
    if (rule) el.title = rule; else el.removeAttribute("title");
  }

  drawFigures() {
    const a = this.answer, figs = a.figures.map((f) => ({ ...f }));
    const scales = chooseScales(figs);
    const width = this.rowEl.clientWidth || 800;
    const height = Math.max(200, window.innerHeight - this.rowEl.getBoundingClientRect().top - 110);
    this.pages = this.pages || {};
    for (const f of figs) { f.pad = this.padding(f.which); f.first = this.pages[f.which] || 0; }
    const cellPx = fitCells(figs, width, height, this.data.presenter);
    this.rowEl.innerHTML = "";
    this.figs = {};
    for (const f of figs) {
      const el = document.createElement("figure");
      el.className = "pg-figure"; el.dataset.figure = f.which;
      const canvas = document.createElement("canvas"), overlay = document.createElement("canvas");
      overlay.className = "pg-overlay";
      const holder = document.createElement("div"); holder.className = "pg-canvas"; holder.append(canvas, overlay);
      const cap = document.createElement("figcaption");
      el.append(holder, cap);
      this.rowEl.append(el);
      const g = layout(f, cellPx[f.which], f.pad);
      el.style.width = Math.max(g.width, 120) + "px"; // the caption wraps under its figure
      const fig = { ...f, g, canvas, overlay, scale: scales[f.which], el };
      this.figs[f.which] = fig;
      paint(fig, this.data.presenter);
      cap.innerHTML = `<b>${esc(f.title)}</b><br><span class="pg-stats">${esc(stats(f.t))}</span>`;
      if (g.total > g.count) cap.append(this.pager(f.which, g));
      this.wire(fig);
    }
    this.outlinePick();
  }

  pager(which, g) { // planes first … last of total, and the buttons that walk through them
    const nav = document.createElement("div"); nav.className = "pg-pager";
    const step = (d) => { this.pages[which] = Math.max(0, Math.min(g.total - 1, g.first + d * MAX_PLANES)); this.drawFigures(); };
    const button = (text, d, label) => {
      const b = document.createElement("button"); b.textContent = text; b.setAttribute("aria-label", label);
      b.disabled = d < 0 ? g.first === 0 : g.first + g.count >= g.total; b.onclick = () => step(d); return b;
    };
    const what = document.createElement("span");
    what.textContent = `planes ${g.first + 1}–${g.first + g.count} of ${g.total}`;
    nav.append(button("‹", -1, `previous ${MAX_PLANES} planes of ${which}`), what, button("›", 1, `next ${MAX_PLANES} planes of ${which}`));
    return nav;
  }

  padding(which) { // the input's panel grows by the padding the windows read (drawn dashed)
    if (which !== "input" || !this.answer.cells) return null;
    const shape = this.answer.figures[0].tensor.shape, h = shape.length - 2;
    let lo = [0, 0], hi = [shape[h] - 1, shape[h + 1] - 1];
    for (const cells of Object.values(this.answer.cells.reads)) for (const c of cells) {
      lo = [Math.min(lo[0], c[c.length - 2]), Math.min(lo[1], c[c.length - 1])];
      hi = [Math.max(hi[0], c[c.length - 2]), Math.max(hi[1], c[c.length - 1])];
    }
    return { lo, hi };
  }

  // -- the picked cell, hover, step and play: the read map the server sent ----------------------------------
  drawCell() {
    const cells = this.answer.cells;
    if (!cells) { this.cellEl.innerHTML = ""; return; }
    const where = this.pick.join(","), line = cells.lines[where];
    this.cellEl.innerHTML =
      `<button class="pg-prev" aria-label="Previous output cell">◀ prev</button>` +
      `<button class="pg-next" aria-label="Next output cell">next ▶</button>` +
      `<button class="pg-play" aria-pressed="${Boolean(this.playing)}">${this.playing ? "pause" : "play"}</button>` +
      `<label class="pg-speed">speed <input type="range" min="0.25" max="4" step="0.25" value="${this.speed}" aria-label="Play speed, cells per second"></label>` +
      `<span class="pg-line">output(${esc(where)}) = ${markdownInline(line || "…")}</span>`;
    if (!line && Object.keys(cells.lines).length && this.lineAsked !== where) { // past the lines sent: ask once
      this.lineAsked = where; this.request(false);
    }
    this.cellEl.querySelector(".pg-prev").onclick = () => this.step(-1);
    this.cellEl.querySelector(".pg-next").onclick = () => this.step(1);
    this.cellEl.querySelector(".pg-play").onclick = () => this.togglePlay();
    this.cellEl.querySelector(".pg-speed input").oninput = (e) => { this.speed = Number(e.target.value); if (this.playing) { clearInterval(this.playing); this.playing = setInterval(() => this.step(1), 1000 / this.speed); } };
  }

  step(by) {
    const shape = this.answer.cells.shape, n = shape.reduce((a, b) => a * b, 1);
    let flat = this.pick.reduce((acc, v, i) => acc * shape[i] + v, 0);
    flat = (flat + by + n) % n;
    const idx = []; for (let i = shape.length - 1; i >= 0; i--) { idx.unshift(flat % shape[i]); flat = Math.floor(flat / shape[i]); }
    this.setPick(idx);
  }

  setPick(idx) {
    this.pick = idx;
    const url = new URL(window.location.href); // the picked cell travels in the link (LAYER.extra.AXIS)
    this.answer.cells.axes.forEach((a, i) => url.searchParams.set(`${this.layer}.extra.${a}`, String(idx[i])));
    window.history.replaceState(window.history.state, "", url.toString().replace(/%2C/g, ","));
    this.root.querySelector(".pg-url").textContent = this.link();
    if (!this.playing) this.settle(); // the page's Details tab follows the cell that rests picked
    if (!this.answer.cells.reads[idx.join(",")]) { this.request(false); return; } // outside the map sent: ask
    this.drawCell(); this.outlinePick();
    this.root.dataset.pick = idx.join(",");
  }

  togglePlay() {
    if (this.playing) { clearInterval(this.playing); this.playing = null; this.settle(); }
    else this.playing = setInterval(() => this.step(1), 1000 / this.speed);
    this.drawCell();
  }

  outlinePick() {
    for (const f of Object.values(this.figs || {})) clear(f.overlay);
    const cells = this.answer.cells;
    if (!cells || !this.figs.output) return;
    const reads = cells.reads[this.pick.join(",")] || [];
    mark(this.figs.output, [this.pick], "#ff6600", false);
    if (this.figs.input) mark(this.figs.input, reads, "#000000", true);
    this.markAlso(this.pick, "#000000");
  }

  markAlso(index, colour) { // a layer of several inputs: the cell each other input gives this output cell
    for (const [which, map] of Object.entries(this.answer.cells.also || {})) {
      if (this.figs[which] && map[index.join(",")]) mark(this.figs[which], map[index.join(",")], colour, true);
    }
  }

  wire(fig) {
    const move = (ev) => {
      const c = cellAt(fig, ev);
      if (!c) { this.tip.style.display = "none"; this.outlinePick(); return; }
      const v = fig.t.values[c.flat];
      this.tip.innerHTML = `${esc(fig.title)} (${c.index.join(", ")})<br>value = ${exact(v)}`;
      const r = this.root.getBoundingClientRect();
      this.tip.style.display = "block";
      this.tip.style.left = Math.min(ev.clientX - r.left + 14, r.width - 180) + "px";
      this.tip.style.top = ev.clientY - r.top + 14 + "px";
      this.hover(fig, c.index);
    };
    const holder = fig.canvas.parentElement;
    holder.addEventListener("pointerdown", (ev) => { this.lastPointer = ev.pointerType; });
    holder.addEventListener("mousemove", (ev) => { if (this.lastPointer !== "touch") move(ev); }); // not a tap's echo
    fig.canvas.parentElement.addEventListener("mouseleave", () => { this.tip.style.display = "none"; this.outlinePick(); });
    fig.canvas.parentElement.addEventListener("pointerup", (ev) => { // a tap shows the value, a second hides it
      if (ev.pointerType !== "touch") return;
      const c = cellAt(fig, ev), key = c ? `${fig.which}:${c.index.join(",")}` : "";
      if (!c || this.tip.dataset.tapped === key) { this.tip.style.display = "none"; this.tip.dataset.tapped = ""; return; }
      move(ev);
      this.tip.dataset.tapped = key;
    });
    fig.canvas.parentElement.addEventListener("click", (ev) => {
      const c = cellAt(fig, ev);
      if (c && fig.which === "output" && this.answer.cells) this.setPick(c.index);
    });
  }

  hover(fig, index) { // output → its input window; input → the outputs it feeds; kernel tap → its input cells
    const cells = this.answer.cells;
    if (!cells) return;
    this.outlinePick();
    if (fig.which === "output") {
      const reads = cells.reads[index.join(",")];
      if (reads && this.figs.input) mark(this.figs.input, reads, "#0057b8", true);
      this.markAlso(index, "#0057b8");
    } else if (fig.which === "input") {
      const key = index.join(","), fed = [];
      for (const [out, reads] of Object.entries(cells.reads)) if (reads.some((c) => c.join(",") === key)) fed.push(out.split(",").map(Number));
      if (this.figs.output) mark(this.figs.output, fed, "#0057b8", false);
    } else if (fig.which === "kernel") {
      // a convolution's reads are channel by channel, each its window's taps row by row: (c, tap) is one cell
      const reads = cells.reads[this.pick.join(",")] || [], sp = fig.t.shape.slice(2);
      const taps = sp.reduce((a, b) => a * b, 1), tap = index.slice(2).reduce((acc, v, i) => acc * sp[i] + v, 0);
      const hit = reads.length === fig.t.shape[1] * taps ? [reads[index[1] * taps + tap]] : [];
      if (this.figs.input) mark(this.figs.input, hit, "#c2185b", true);
    }
  }
}

// -- tensors, scales, layout and painting ----------------------------------------------------------------------
function decode(t) {
  let bytes;
  if (Uint8Array.fromBase64) bytes = Uint8Array.fromBase64(t.data);
  else { const bin = atob(t.data); bytes = new Uint8Array(bin.length); for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i); }
  return { shape: t.shape, values: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4) };
}

function extent(v) {
  let lo = Infinity, hi = -Infinity;
  for (const x of v) if (Number.isFinite(x)) { if (x < lo) lo = x; if (x > hi) hi = x; }
  return lo === Infinity ? [0, 1] : [lo, hi];
}

// Input and outputs share one scale where their ranges are alike (spans within 2.5× of each other), so equal values
// look equal; a softmax's 0…1 on an input's −4…4, or a deconvolution's 0…45 from an input of 1…9, get their own.
// Compare mode's two outputs always share one. Error maps have theirs.
function chooseScales(figs) {
  const out = {}, ranges = {};
  for (const f of figs) ranges[f.which] = summary(f.t).extent;
  const span = (r) => Math.max(r[1] - r[0], 1e-12);
  const data = figs.filter((f) => !f.magnitude && f.which !== "kernel").map((f) => f.which);
  const joined = data.map((w) => ranges[w]).reduce((a, r) => [Math.min(a[0], r[0]), Math.max(a[1], r[1])], [Infinity, -Infinity]);
  const alike = data.every((w) => span(joined) / span(ranges[w]) <= 2.5);
  for (const f of figs) {
    let r = ranges[f.which];
    if (alike && data.includes(f.which)) r = joined;
    if ((f.which === "output" || f.which === "compared") && ranges.compared) {
      r = [Math.min(ranges.output[0], ranges.compared[0]), Math.max(ranges.output[1], ranges.compared[1])];
    }
    out[f.which] = scaleFor(r, Boolean(f.magnitude));
  }
  return out;
}

function scaleFor([lo, hi], magnitude) {
  let s;
  if (!magnitude && lo < 0 && hi > 0) { const m = Math.max(-lo, hi); s = { lo: -m, hi: m, stops: DIVERGING, diverging: true }; }
  else s = { lo, hi: hi === lo ? lo + 1 : hi, stops: magnitude ? MAGNITUDE : SEQUENTIAL, diverging: false };
  s.lut = []; // 257 colours along the scale (its middle, a diverging scale's 0, exactly on a stop): one lookup a cell
  for (let i = 0; i <= LUT_STEPS; i++) s.lut.push(interpolate(s.stops, i / LUT_STEPS));
  return s;
}
const DIVERGING = [[0, [5, 48, 97]], [0.25, [67, 147, 195]], [0.5, [247, 247, 247]], [0.75, [214, 96, 77]], [1, [103, 0, 31]]];
const SEQUENTIAL = [[0, [68, 1, 84]], [0.25, [59, 82, 139]], [0.5, [33, 145, 140]], [0.75, [94, 201, 98]], [1, [253, 231, 37]]];
const MAGNITUDE = [[0, [255, 255, 255]], [0.5, [253, 141, 60]], [1, [127, 39, 4]]];

const LUT_STEPS = 256;
const NAN_RGB = [160, 160, 160], POSINF_RGB = [255, 0, 255], NEGINF_RGB = [0, 255, 255];
function colour(scale, v) {
  if (Number.isNaN(v)) return NAN_RGB;
  if (v === Infinity) return POSINF_RGB;
  if (v === -Infinity) return NEGINF_RGB;
  const t = (v - scale.lo) / (scale.hi - scale.lo);
  return scale.lut[t <= 0 ? 0 : t >= 1 ? LUT_STEPS : Math.round(t * LUT_STEPS)];
}
function interpolate(s, t) {
  for (let i = 1; i < s.length; i++) if (t <= s[i][0]) {
    const u = (t - s[i - 1][0]) / (s[i][0] - s[i - 1][0]);
    return [0, 1, 2].map((k) => Math.round(s[i - 1][1][k] + (s[i][1][k] - s[i - 1][1][k]) * u));
  }
  return s[s.length - 1][1];
}

// A tensor is drawn as its (n, c[, d]) planes side by side, each h × w cells.
function planes(shape) {
  const h = shape[shape.length - 2] ?? 1, w = shape[shape.length - 1] ?? 1;
  return { count: shape.slice(0, -2).reduce((a, b) => a * b, 1), h, w };
}

// A figure of many planes (a model's 256 channels) shows MAX_PLANES of them at a time, from `first`: its pager
// walks through the rest. Returns the planes drawn: { first, count, total, h, w }.
const MAX_PLANES = 4;
function shown(f) {
  const p = planes(f.t.shape), first = Math.max(0, Math.min(f.first || 0, p.count - 1));
  return { ...p, first, count: Math.min(MAX_PLANES, p.count - first), total: p.count };
}

function fitCells(figs, width, height, presenter) {
  // One cell size for the figures that compare cell for cell; a figure far narrower than the widest (a 3 × 3
  // kernel beside 512 × 512 planes) gets SMALL_PX of its own instead of vanishing. Returns which -> px.
  const cap = presenter ? 120 : 80;
  const dims = figs.map((f) => {
    const p = shown(f), rows = f.pad ? f.pad.hi[0] - f.pad.lo[0] + 1 : p.h, cols = f.pad ? f.pad.hi[1] - f.pad.lo[1] + 1 : p.w;
    return { which: f.which, across: p.count * cols, gaps: p.count - 1, rows };
  });
  const widest = Math.max(...dims.map((d) => d.across));
  const small = dims.filter((d) => d.across * 8 < widest), big = dims.filter((d) => d.across * 8 >= widest);
  const room = width - FIGURE_GAP * (figs.length - 1) - 2 * figs.length - small.length * SMALL_PX;
  const across = big.reduce((n, d) => n + d.across, 0), gaps = big.reduce((n, d) => n + d.gaps, 0);
  let wide = room / Math.max(across + gaps, 1); // a gap is a cell wide, and at least 6 px (layout)
  if (wide < 6) wide = (room - 6 * gaps) / Math.max(across, 1);
  const tallest = Math.max(...big.map((d) => d.rows + 1));
  const fit = (px) => Math.min(cap, px >= 1 ? Math.floor(px) : Math.max(px, 1 / 32)); // below a pixel: sampled
  const common = fit(Math.min(wide, (height - CAPTION_PX) / tallest)), out = {};
  for (const d of big) out[d.which] = common;
  for (const d of small) out[d.which] = fit(Math.max(common, Math.min(SMALL_PX / (d.across + d.gaps), (height - CAPTION_PX) / (d.rows + 1))));
  return out;
}
// A request the page's server could not answer as itself: no server (0), its seat unknown there (401: another replica
// or a restart), the proxy with no replica (502-504). Asked again for up to LOST_MS before it is shown as a problem.
const LOST = new Set([0, 401, 502, 503, 504]), LOST_MS = 10000;
const FIGURE_GAP = 18, CAPTION_PX = 76, SMALL_PX = 120; // stage.css's .pg-row gap; a figure's caption (title and stats lines)

function layout(f, cell, pad) {
  const p = shown(f);
  const lo = pad ? pad.lo : [0, 0], hi = pad ? pad.hi : [p.h - 1, p.w - 1];
  const rows = hi[0] - lo[0] + 1, cols = hi[1] - lo[1] + 1, gap = Math.max(cell, 6);
  return { ...p, cell, lo, rows, cols, gap, width: Math.ceil(p.count * cols * cell + (p.count - 1) * gap + 2),
           height: Math.ceil(rows * cell + 2) };
}

function paint(fig, presenter) {
  const { g, canvas, overlay, t, scale } = fig, dpr = window.devicePixelRatio || 1;
  for (const c of [canvas, overlay]) {
    c.width = Math.round(g.width * dpr); c.height = Math.round(g.height * dpr);
    c.style.width = g.width + "px"; c.style.height = g.height + "px";
    c.getContext("2d").setTransform(dpr, 0, 0, dpr, 0, 0);
  }
  const ctx = canvas.getContext("2d"), text = g.cell >= (presenter ? 26 : 22);
  const colours = [], bitmaps = planeBitmaps(t, g, scale);
  ctx.imageSmoothingEnabled = false;
  for (let p = 0; p < g.count; p++) {
    const x0 = 1 + p * (g.cols * g.cell + g.gap), ox = x0 - g.lo[1] * g.cell, oy = 1 - g.lo[0] * g.cell;
    if (g.lo[0] < 0 || g.lo[1] < 0 || g.rows > g.h || g.cols > g.w) { // the padded border, dashed
      ctx.save(); ctx.setLineDash([4, 3]); ctx.strokeStyle = "#6b7280"; ctx.lineWidth = 1;
      ctx.strokeRect(x0 + 0.5, 1.5, g.cols * g.cell - 1, g.rows * g.cell - 1); ctx.restore();
    }
    ctx.drawImage(bitmaps[p], ox, oy, g.w * g.cell, g.h * g.cell);
    const q = g.first + p; // the tensor's plane drawn here
    if (text) for (let i = 0, n = g.h * g.w; i < n; i++) colours[i] = colour(scale, t.values[q * n + i]);
    if (g.cell >= 6) { // cell borders: a white (zero) cell of a diverging scale stays visible
      ctx.beginPath(); ctx.strokeStyle = "rgba(0,0,0,0.22)"; ctx.lineWidth = 1;
      for (let i = 0; i <= g.h; i++) { ctx.moveTo(ox, oy + i * g.cell + 0.5); ctx.lineTo(ox + g.w * g.cell, oy + i * g.cell + 0.5); }
      for (let j = 0; j <= g.w; j++) { ctx.moveTo(ox + j * g.cell + 0.5, oy); ctx.lineTo(ox + j * g.cell + 0.5, oy + g.h * g.cell); }
      ctx.stroke();
    }
    if (text) { // the numbers, as large as a cell allows and never wider than it
      ctx.textAlign = "center"; ctx.textBaseline = "middle";
      const base = Math.floor(g.cell * 0.3);
      for (let i = 0; i < g.h; i++) for (let j = 0; j < g.w; j++) {
        const c = colours[i * g.w + j], light = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2] > 140;
        const label = short(t.values[(q * g.h + i) * g.w + j]);
        ctx.font = `${Math.max(8, Math.min(base, Math.floor(g.cell * 1.75 / Math.max(3, label.length))))}px system-ui, sans-serif`;
        ctx.fillStyle = light ? "#111" : "#fff";
        ctx.fillText(label, ox + (j + 0.5) * g.cell, oy + (i + 0.5) * g.cell, g.cell - 4);
      }
    }
  }
}

function planeBitmaps(t, g, scale) { // one pixel a cell, kept per tensor, scale and page: a revisit only scales them
  const key = `${scale.lo}|${scale.hi}|${scale.stops === DIVERGING}|${scale.stops === MAGNITUDE}|${g.first}|${g.count}`;
  if (t.__bitmaps && t.__bitmaps.key === key) return t.__bitmaps.planes;
  const planes = [], n = g.h * g.w;
  for (let p = g.first; p < g.first + g.count; p++) {
    const c = document.createElement("canvas");
    c.width = g.w; c.height = g.h;
    const cx = c.getContext("2d"), img = cx.createImageData(g.w, g.h);
    for (let i = 0; i < n; i++) {
      const rgb = colour(scale, t.values[p * n + i]);
      img.data[4 * i] = rgb[0]; img.data[4 * i + 1] = rgb[1]; img.data[4 * i + 2] = rgb[2]; img.data[4 * i + 3] = 255;
    }
    cx.putImageData(img, 0, 0);
    planes.push(c);
  }
  t.__bitmaps = { key, planes };
  return planes;
}

function cellXY(g, plane, h, w) {
  return [1 + (plane - g.first) * (g.cols * g.cell + g.gap) + (w - g.lo[1]) * g.cell, 1 + (h - g.lo[0]) * g.cell];
}

function planeOf(shape, index) { // the flat plane number of a full index (n, c[, d], h, w)
  let p = 0;
  for (let i = 0; i < shape.length - 2; i++) p = p * shape[i] + index[i];
  return p;
}

function cellAt(fig, ev) {
  const r = fig.canvas.getBoundingClientRect(), g = fig.g, x = ev.clientX - r.left - 1, y = ev.clientY - r.top - 1;
  const drawn = Math.floor(x / (g.cols * g.cell + g.gap)), j = Math.floor((x - drawn * (g.cols * g.cell + g.gap)) / g.cell) + g.lo[1];
  const i = Math.floor(y / g.cell) + g.lo[0], plane = g.first + drawn;
  if (drawn < 0 || drawn >= g.count || i < 0 || j < 0 || i >= g.h || j >= g.w) return null;
  const shape = fig.t.shape, index = [];
  let rest = plane;
  for (let k = shape.length - 3; k >= 0; k--) { index.unshift(rest % shape[k]); rest = Math.floor(rest / shape[k]); }
  index.push(i, j);
  return { index, flat: (plane * g.h + i) * g.w + j };
}

function clear(c) { const ctx = c.getContext("2d"); ctx.save(); ctx.setTransform(1, 0, 0, 1, 0, 0); ctx.clearRect(0, 0, c.width, c.height); ctx.restore(); }

function mark(fig, cells, colour, dashOutside) { // a white halo under the colour: visible on any cell
  const ctx = fig.overlay.getContext("2d"), g = fig.g, shape = fig.t.shape;
  for (const c of cells) {
    const h = c[c.length - 2], w = c[c.length - 1], plane = planeOf(shape, c.length === shape.length ? c : [...c.slice(0, -2)]);
    if (plane < g.first || plane >= g.first + g.count) continue; // on another page of planes
    const inside = h >= 0 && w >= 0 && h < g.h && w < g.w;
    const [x, y] = cellXY(g, plane, h, w);
    ctx.save();
    ctx.setLineDash(dashOutside && !inside ? [4, 3] : []);
    ctx.lineWidth = 4; ctx.strokeStyle = "#ffffff"; ctx.strokeRect(x + 2, y + 2, g.cell - 4, g.cell - 4);
    ctx.lineWidth = 2; ctx.strokeStyle = colour; ctx.strokeRect(x + 2, y + 2, g.cell - 4, g.cell - 4);
    ctx.restore();
  }
}

// -- text -----------------------------------------------------------------------------------------------------
function summary(t) { // a tensor's range and non-finite counts, once (a revisit draws without a pass over it)
  if (!t.__summary) {
    let nan = 0, inf = 0;
    for (const v of t.values) { if (Number.isNaN(v)) nan++; else if (!Number.isFinite(v)) inf++; }
    t.__summary = { extent: extent(t.values), nan, inf };
  }
  return t.__summary;
}
function stats(t) {
  const { extent: [lo, hi], nan, inf } = summary(t);
  return `shape (${t.shape.join(", ")}) · min ${short(lo)} · max ${short(hi)}` + (nan ? ` · ${nan} NaN` : "") + (inf ? ` · ${inf} Inf` : "");
}
function short(v) {
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "+Inf" : "-Inf";
  const a = Math.abs(v);
  if (a === 0) return "0";
  if (a >= 1e5 || a < 1e-3) return v.toExponential(1).replace("e+", "e");
  return String(Number(v.toPrecision(4)));
}
function exact(v) { return Number.isFinite(v) ? String(Number(v.toPrecision(7))) : short(v); }
function esc(s) { return String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]); }
function markdownInline(s) { return esc(s).replace(/\*\*(.+?)\*\*/g, "<b>$1</b>").replace(/`(.+?)`/g, "<code>$1</code>"); }
function markdown(s) {
  const lines = String(s).split("\n"), out = [];
  let list = false;
  for (const l of lines) {
    if (/^\s*- /.test(l)) { if (!list) { out.push("<ul>"); list = true; } out.push(`<li>${markdownInline(l.replace(/^\s*- /, ""))}</li>`); continue; }
    if (list) { out.push("</ul>"); list = false; }
    if (l.trim()) out.push(`<p>${markdownInline(l)}</p>`);
  }
  if (list) out.push("</ul>");
  return out.join("");
}
