// The stage: every parameter's control, the figures, hover/pick/step/play, and the URL, in the browser. A change asks
// the server (POST data.route, the seat's token in X-Stage-Token) for the evaluation and draws the answer; nothing
// reruns the page's script. Its parts, one job each: state.js (the URL), net.js (the requests), store.js (what the
// tab keeps), controls.js, figures.js and heatmap.js (the drawing), format.js (numbers and text). ui/stage.py mounts
// it; the files are served by the stage's asset route (assets.py).
import { Controls, text } from "./controls.js";
import { Figures } from "./figures.js";
import { ChainDrawing } from "./flow.js";
import { esc, markdown, markdownInline } from "./format.js";
import { MAX_PLANES } from "./heatmap.js";
import { Requests, evaluator, postJson, readReply } from "./net.js";
import { loopbackWarning, roomLink } from "./room.js";
import { Answers, Tensors, add, has } from "./store.js";
import { Later, cacheKey, changed, fileName, linkChanges, linkPicks, urlTable, writeHistory } from "./state.js";
// The address bar follows a change a frame later, outside the key's handler (replaceState takes ms: tens loaded), and
// once per URL_MS while a sweep lasts (Chromium and Firefox refuse a page more than 200 writes in ten seconds)
const URL_MS = 100;
const FINISH_RETRY_MS = 150; // a follow-up asked while the page's previous one still runs: asked again after this
const SETTLE_MS = 1200; // a configuration the hand has left this long: the sections under the stage follow it (a page run)
// What follows a drawing (its follow-up, the page's held-back run) waits for the frame showing it, not to hold it up
const afterPaint = (fn) => requestAnimationFrame(() => setTimeout(fn, 0));

// An element's markup, written only where it changed (written again, the same markup is made anew: its style and
// layout worked out again in the key press's frame). Whether it was written.
function html(el, markup) {
  if (el.__html === markup) return false;
  el.innerHTML = markup; el.__html = markup;
  return true;
}

export default function mount(component) {
  const { data, parentElement, setTriggerValue } = component;
  let stage = parentElement.querySelector(".pg-stage");
  // a rerun of the page with the same stage: nothing to draw; the address bar is the stage's again (ownUrl)
  if (stage && stage.__epoch === data.epoch) { stage.__stage?.ownUrl(); return undefined; }
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

export class Stage {
  constructor(root, data, trigger) {
    this.root = root; this.data = data; this.trigger = trigger;
    this.layer = data.describe.layer;
    this.table = urlTable(data.describe);
    this.query = { ...data.query }; // the configuration as URL texts (every key of this layer)
    this.compare = data.compare || null;
    this.cache = new Answers(); // answers by configuration
    this.tensors = new Tensors(); // decoded tensors by id: an answer names the ones the browser holds, not resent
    this.seq = 0; this.drawnSeq = 0; this.problemSeq = -1;
    this.answer = null; this.pick = null; this.playing = null; this.speed = 1;
    this.pickInUrl = linkPicks(this.table, window.location.search); // a link's picked cell stays in the URL
    this.settleTimer = null;
    this.url = new Later(() => this.writeUrl(), URL_MS);
    const evaluate = evaluator(data.route, data.token);
    this.requests = new Requests({
      post: async (message) => { // the tensors held are named as it leaves (a retry after a let-go names none)
        const asked = performance.now(), r = await evaluate({ ...message, have: this.tensors.held() });
        this.root.dataset.serverMs = r.serverMs;
        this.root.dataset.fetchMs = (performance.now() - asked).toFixed(1); // where a change's time goes (bench_browser)
        return r;
      },
      onSend: (job) => { if (!job.background) this.root.dataset.busy = ""; },
      onReply: (job, status, reply) => this.answered(job, status, reply),
      onIdle: (job, status, reply) => this.rested(job, reply),
    });
  }

  start() {
    this.root.dataset.mountedAt = performance.now().toFixed(0); // since the page's navigation (bench_browser)
    delete this.root.dataset.busy; // the stage before this one may have gone mid-request (a server restart)
    this.root.classList.toggle("pg-presenter", Boolean(this.data.presenter));
    this.root.classList.toggle("pg-chain", Boolean(this.data.chain)); // a chain's tensors flow over several lines
    this.root.innerHTML =
      `<div class="pg-controls" role="group" aria-label="Parameters of ${esc(this.data.describe.title)}"></div>` +
      `<div class="pg-figures"><div class="pg-head"></div><div class="pg-problem" role="alert"></div>` +
      `<div class="pg-link"><button class="pg-copy" aria-label="Copy the link to this configuration">Copy link</button>` +
      (this.data.presenter ? `<button class="pg-qr-button" aria-label="Show the link as a QR code">QR code</button>` : "") +
      `<button class="pg-png" aria-label="Save the figures as one PNG picture">PNG</button>` +
      `<code class="pg-url"></code><span class="pg-loopback" hidden></span></div>` +
      `<div class="pg-precision"></div><div class="pg-row"></div><div class="pg-cell"></div></div>` +
      `<div class="pg-explain"></div>`;
    const $ = (sel) => this.root.querySelector(sel);
    Object.assign(this, { headEl: $(".pg-head"), problemEl: $(".pg-problem"), precisionEl: $(".pg-precision"),
                          cellEl: $(".pg-cell"), explainEl: $(".pg-explain"), urlEl: $(".pg-url"),
                          loopbackEl: $(".pg-loopback") });
    $(".pg-png").onclick = () => this.figures.savePng(fileName(this.table, this.query, this.compare));
    if ($(".pg-qr-button")) $(".pg-qr-button").onclick = () => this.showQr();
    $(".pg-copy").onclick = () => this.copyLink($(".pg-copy"));
    this.tip = Object.assign(document.createElement("div"), { className: "pg-tip", role: "tooltip" }); this.root.append(this.tip);
    this.figures = new Figures(this, $(".pg-row"), this.tip);
    if (this.data.chain) this.chainDrawing = new ChainDrawing(this, $(".pg-row")); // its flow and hover trace
    this.onResize = () => { if (this.answer) { this.figures.resized = true; this.figures.draw(); } }; window.addEventListener("resize", this.onResize);
    // The stage's own width changes without the window's too (Streamlit's sidebar opens beside the page on a wide
    // screen and narrows it): the figures are fitted to the width left to them.
    let width = 0; this.resizer = new ResizeObserver(([entry]) => { const w = Math.round(entry.contentRect.width); if (w !== width && width) this.onResize(); width = w; });
    this.resizer.observe(this.root);
    const hide = this.data.hide || []; for (const part of ["title", "formula", "explanation", "link", "parameters"]) this.root.classList.toggle(`pg-hide-${part}`, hide.includes(part));
    this.controls = new Controls($(".pg-controls"), {
      layer: this.layer, describe: this.data.describe, hide, compare: this.compare, query: () => this.query, dropped: this.data.dropped,
      on: { set: (changes) => this.set(changes), release: (k, v) => this.release(k, v),
            example: (name) => this.trigger("example", name), compare: (v) => { this.compare = v; this.set({}); } },
    });
    if (this.data.answer && this.tensors.resolve(this.data.answer)) { // drawn, and kept: a step back to it asks nothing
      this.show(this.data.answer, ++this.seq, true);
      this.cache.remember(this.cacheKey(), this.data.answer);
    } else { // a large configuration's values come by the route (no answer: a stage mounted afresh asks for one)
      this.pick = this.data.pick || null;
      if (this.data.answer) this.figures.frames(this.data.answer);
      this.request(false);
    }
    if (this.data.problem) this.showProblem(this.data.problem, this.seq);
    this.followUrl();
    // Once the figures are on the screen, the page draws what it held back (the tabs under the stage): the first
    // paint does not wait for them.
    afterPaint(() => {
      this.root.dataset.paintedAt = performance.now().toFixed(0); // since the page's navigation (bench_browser)
      for (const el of this.root.closest('[class*="st-key-pg-slot-"]')?.children || []) if (el.querySelector(".pg-skeleton")) el.style.display = "none";
      if (!this.data.painted) this.trigger("painted", this.data.epoch);
      this.finish(); // ONNX Runtime's badge of the first answer, after its paint
    });
  }

  stop() {
    this.url.cancel(); this.requests.stop();
    window.removeEventListener("resize", this.onResize); this.resizer.disconnect(); this.chainDrawing?.stop();
    if (this.playing) clearInterval(this.playing); if (this.settleTimer) clearTimeout(this.settleTimer);
  }

  // The URL is the contract: where the page's script ran on an older query than the address bar holds (the page
  // reconnected to another replica, whose run had the query the page loaded with), the address bar wins.
  followUrl() {
    if (this.data.url === false) return; // a second stage of the page (a compared chain's): the address is the first's
    const moved = linkChanges(this.table, window.location.search, this.query);
    if (Object.keys(moved).length) { Object.assign(this.query, moved); this.request(false); }
  }

  // The link a room can open: the configured public address (PLAYGROUND_PUBLIC_URL) or the address this page was
  // opened under (never "localhost" when it was opened under another name), with the path and the query, less the
  // presenter's view (room.js): a phone opens the configuration with its controls.
  link() {
    return roomLink(this.data.public ? this.data.public + window.location.pathname + window.location.search : window.location.href, this.table.view);
  }

  showLink() { // the link, and a warning where it names this computer only
    const link = this.link(), warn = loopbackWarning(link); // written where it changed: any text written costs a layout
    text(this.urlEl, link);
    if (this.loopbackEl.title !== warn) Object.assign(this.loopbackEl, { textContent: warn ? "⚠ only this computer can open this link" : "", title: warn, hidden: !warn });
  }

  async copyLink(button) {
    this.ownUrl(); try { await navigator.clipboard.writeText(this.link()); button.textContent = "Copied"; }
    catch (e) { // no clipboard (an address that is not a secure context): the link selected for Ctrl+C
      const r = document.createRange(); r.selectNodeContents(this.urlEl);
      getSelection().removeAllRanges(); getSelection().addRange(r); button.textContent = "Selected: press Ctrl+C";
    }
    setTimeout(() => { button.textContent = "Copy link"; }, 1500);
  }

  async showQr() { // over the stage, not in its flow: nothing moves; a click or Escape closes it
    this.ownUrl(); let panel = this.root.querySelector(".pg-qr");
    if (panel) { panel.remove(); return; }
    const r = await postJson(this.data.qr, this.data.token, { url: this.link() });
    panel = document.createElement("div");
    panel.className = "pg-qr"; panel.setAttribute("role", "dialog"); panel.setAttribute("aria-label", "QR code of the link");
    const warn = loopbackWarning(this.link());
    panel.innerHTML = r.ok ? (await r.text()) + `<div class="pg-qr-url">${esc(this.link())}</div>` +
      (warn ? `<div class="pg-loopback">${esc(warn)}</div>` : "") : esc((await r.json()).error);
    panel.tabIndex = -1;
    panel.onclick = () => panel.remove();
    panel.onkeydown = (e) => { if (e.key === "Escape") panel.remove(); };
    this.root.append(panel);
    panel.focus();
  }

  // -- a change and its answer ---------------------------------------------------------------------------------
  // A change is drawn from the browser's cache where it was drawn before; else asked for once (a key press, a
  // click: one evaluation per configuration; the server builds the neighbours of the value moved ahead), and its
  // engine's verdict follows (`finish`). While a thumb is dragged where no engine runs the answers are "quick" (no
  // read map's lines, nothing to follow): the released value is asked in full, and drawn last.
  set(changes) {
    this.controls.moved(Object.keys(changes));
    this.query = changed(this.table, this.query, changes);
    const cached = this.cache.get(this.cacheKey());
    if (cached) { this.root.dataset.hits = String(Number(this.root.dataset.hits || 0) + 1); this.show(cached, ++this.seq, false, true); }
    if (cached && !cached.__quick) { this.settle(); afterPaint(() => this.finish()); return; }
    this.request(!this.data.runs && !cached && this.controls.dragging);
    if (!cached) this.url.soon(); // after the request has left (a cached answer's show asks for it, after the figures)
  }

  release(k, v) { // a slider let go: its value in full, where only a quick answer of it was drawn
    if (v !== this.query[k]) { this.set({ [k]: v }); return; }
    const cached = this.cache.get(this.cacheKey());
    if (this.requests.idle && (!cached || cached.__quick)) this.request(false);
  }
  cacheKey(query = this.query, compare = this.compare) { return cacheKey(query, compare); }

  request(quick) {
    const pages = Object.fromEntries(Object.entries(this.figures.pages).map(([which, first]) => [which, [first, MAX_PLANES]]));
    this.requests.ask({ params: { ...this.query }, compare: this.compare, pick: this.pick, quick, pages }, ++this.seq);
  }

  // Planes of a page the tab does not hold ([tensor, first, count]: a page turned), asked for by tensor id from what
  // the server keeps of its last answers, then drawn; where it no longer keeps them, the configuration is asked for
  // again with the pages shown. One such request at a time.
  async askPlanes(asks) {
    if (this.planesAsked) return;
    this.planesAsked = true;
    let ok = false;
    try {
      const r = await postJson(this.data.planes, this.data.token, { planes: asks.map(([t, first, count]) => [t.id, first, count]) });
      const reply = r.ok ? await readReply(r) : {};
      for (const entry of reply.tensors || []) for (const [t] of asks) if (t.id === entry.id) add(t, entry, reply.__src);
      ok = Boolean(reply.tensors) && !reply.gone.length && asks.every(([t, first, count]) => has(t, first, count));
    } catch (e) { /* no server: asked for with the configuration below */ }
    this.planesAsked = false;
    if (ok) this.figures.draw(); else this.request(false);
  }

  answered(job, status, reply) { // true: ask again (a tensor it named was let go meanwhile: whole, this time)
    if (reply.answer && !this.tensors.resolve(reply.answer)) { this.tensors.clear(); return true; }
    if (reply.answer) {
      reply.answer.__quick = job.message.quick;
      this.cache.remember(this.cacheKey(job.message.params, job.message.compare), reply.answer);
      if (job.seq > this.drawnSeq) this.show(reply.answer, job.seq, false);
    } else if (reply.problem) {
      if (job.seq > this.drawnSeq) { this.drawnSeq = job.seq; this.showProblem(reply.problem, job.seq); }
    } else {
      this.showProblem({ message: reply.error || `HTTP ${status}`, keys: reply.keys || [] }, job.seq); // the key refused
    }
    return false;
  }

  rested(job, reply) { // the last reply is in and nothing waits
    if (reply.answer && job.message.quick && !this.controls.dragging) { this.request(false); return; }
    delete this.root.dataset.busy;
    if (!job.message.quick) { this.settle(); afterPaint(() => this.finish()); }
  }

  // What follows the answer drawn, asked for once it is on the screen: its engine's verdict (where no engine runs
  // the reference is drawn first, its engine built now), ONNX Runtime's badge, every output cell's window and their
  // arithmetic (the answer carried the picked cell's). A small request beside the change's queue (a slot of its own on
  // the server: the next change is not held up behind the build) completing the evaluation the server remembers; where
  // it remembers another (this answer came from the tab's cache), the configuration is asked again, once.
  async finish() {
    const a = this.answer;
    if (!a || !a.finish || a.__quick || a.__finishing) return;
    a.__finishing = true;
    try {
      const r = await postJson(this.data.route, this.data.token, { params: { ...this.query }, compare: this.compare, pick: this.pick, finish: true });
      const reply = r.ok ? await r.json() : {};
      if (reply.finish) {
        Object.assign(a, reply.finish); a.finish = false; this.askedAgain = null;
        if (a === this.answer) { this.drawText(a); if (reply.finish.cells) this.drawCell(); this.chainDrawing?.draw(); }
      } else if (r.ok && a === this.answer && this.askedAgain !== this.cacheKey()) { this.askedAgain = this.cacheKey(); this.request(false); }
      else if (r.status === 429 && a === this.answer) { a.__finishing = false; setTimeout(() => this.finish(), FINISH_RETRY_MS); return; } // the one before still building
    } catch (e) { /* no server: the badge waits for the next answer */ }
    a.__finishing = false;
  }

  settle() {
    if (this.data.settle === false) return; // nothing of the page follows the configuration (a chain's): no run
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => { this.ownUrl(); this.trigger("settled", { search: window.location.search }); }, SETTLE_MS);
  }

  // The address bar from the stage's state now (a link copied, a settle, a page's run: a run that set the URL's keys had
  // Streamlit push the server's, a settle behind the hand); one writer, one decision: the stage's.
  ownUrl() { this.url.cancel(); this.writeUrl(); }

  writeUrl() {
    if (this.data.url === false) return;
    const cells = this.answer && this.answer.cells;
    writeHistory(this.table, { query: this.query, compare: this.compare,
                               pick: this.pickInUrl && cells && this.pick ? { axes: cells.axes, index: this.pick } : null });
    if (this.urlEl) this.showLink();
  }

  // -- drawing -------------------------------------------------------------------------------------------------
  show(answer, seq, first, url = false) { // url: the change drawn is the query's: the address bar follows it
    const began = performance.now();
    this.drawnSeq = Math.max(this.drawnSeq, seq);
    this.answer = answer;
    if (first || Object.keys(this.query).length === 0) this.query = { ...answer.query };
    else for (const [k, v] of Object.entries(answer.query)) if (!(k in this.query)) this.query[k] = v;
    if (answer.cells) this.pick = this.pick && answer.cells.reads[this.pick.join(",")] ? this.pick : answer.cells.picked;
    if (seq > this.problemSeq && !this.problemEl.hidden) { // a valid answer after the refusal: its text and its marks go
      this.problemEl.textContent = ""; this.problemEl.hidden = true; this.controls.mark([], null);
    }
    // The picked cell's line, then the figures: their room is read from the layout of the frame drawn last, before
    // the text below changes it (read after, the layout would be worked out twice in one key press); the head's two
    // lines hold their height whatever they say. The first answer's text goes first: until it is drawn the head is
    // empty, and the figures' room is the room under it.
    const text = () => { this.controls.refresh(answer.controls, answer.example || null, answer.compare_choices, this.compare); this.drawText(answer); };
    const fresh = !this.headEl.__html;
    if (fresh) text();
    this.drawCell();
    this.figures.draw();
    if (!fresh) text();
    if (url) this.url.soon(); else this.showLink();
    this.root.dataset.drawMs = (performance.now() - began).toFixed(1);
    this.root.dataset.drawn = String(this.drawnSeq);
    this.root.dataset.query = JSON.stringify(this.query);
  }

  drawText(answer) { // what the engine's verdict changes: the head, the refusal line, the messages
    this.drawHead(answer);
    const refused = answer.engine.refusal || answer.engine.error;
    const precision = [answer.precision, refused ? `${refused}. The output is the NumPy reference.` : ""].filter(Boolean).join(" · ");
    if (this.precisionEl.textContent !== precision) {
      this.precisionEl.textContent = precision;
      this.precisionEl.title = precision; // one line on the stage: the whole of it on hover
    }
    html(this.explainEl, [...answer.explain, ...answer.messages.map((m) => "ℹ " + m)].map(markdown).join(""));
  }

  // The head is two lines whatever they hold: the titles and the badges (each cut short with its whole text on
  // hover rather than wrapped), ONNX Runtime's slot held from the first paint: nothing under it moves as a badge
  // arrives or changes its words.
  drawHead(answer) { // the title, shapes, formula and badges (ONNX Runtime's: once the server has judged)
    const ex = answer.example, src = this.data.source, ort = answer.onnxruntime;
    const lesson = ex && this.data.presenter ? `${ex.kind}: ${ex.title} ·` : ""; // the room reads what is shown
    const titles = (lesson ? `<span class="pg-lesson">${esc(lesson)}</span> ` : "") + `<span class="pg-title">${esc(answer.title)}</span> <b>${esc(answer.shapes)}</b>` +
      (answer.formula ? ` <code>${esc(answer.formula)}</code>` : "");
    const badges = [];
    if (src) badges.push(`<span class="pg-badge pg-model" data-onnx-node="${esc(src.node)}" title="${esc([src.model + " · " + src.node, ...src.differs, ...src.notes].join(" "))}">` +
      `${esc(src.model)} · ${esc(src.node)} (${esc(src.op)})</span>`); // a model's node: its file and name
    // the engine's builder and status, short enough to read whole beside the others; the plain sentence on hover
    badges.push(`<span class="pg-badge ${answer.source.tensorrt ? "pg-trt" : "pg-ref"}" data-engine="${esc(answer.engine.status)}" title="${esc(`${answer.source.label} (${answer.source.detail})`)}">${esc(answer.source.detail)}</span>`);
    // the example's verdict in the server's plain words; the tolerance and the numbers on hover
    if (ex) badges.push(`<span class="pg-badge ${ex.matches ? "pg-agrees" : "pg-differs"}" title="${esc([ex.message, ex.note].filter(Boolean).join(" — "))}">` +
      `${esc(ex.badge)}</span>`);
    if (ort) badges.push(`<span class="pg-badge pg-ort ${ort.agrees ? "pg-ort-agrees" : "pg-ort-differs"}" data-onnxruntime="${ort.agrees}" title="${esc(ort.title)}">${esc(ort.text)}</span>`);
    else if (answer.finish && this.data.opinion) badges.push(`<span class="pg-badge pg-ort pg-ort-pending" title="ONNX Runtime runs this configuration's ONNX export after the figures are drawn">ONNX Runtime …</span>`);
    html(this.headEl, `<div class="pg-titles${lesson ? " pg-lessoned" : ""}" title="${esc([lesson, answer.title, answer.shapes, answer.formula].filter(Boolean).join(" "))}">${titles}</div><div class="pg-badges">${badges.join("")}</div>`);
  }

  // A refused configuration (or a request the server could not answer): named, its parameter's controls marked red,
  // the last good figures kept. `seq`: the request it answers (an answer asked before it does not clear it).
  showProblem(p, seq) {
    this.problemSeq = seq; this.problemEl.hidden = false;
    const last = this.data.chain ? "the last good chain" : "the last valid configuration";
    this.problemEl.textContent = p.message + (this.answer ? ` — the figures show ${last}.` : "");
    this.controls.mark(p.keys || [], p.rule || p.message);
  }

  // -- the picked cell: its arithmetic, step and play on the read map the server sent ----------------------------
  drawCell() {
    const cells = this.answer.cells;
    if (!cells) { html(this.cellEl, ""); return; }
    const where = this.pick.join(","), line = cells.lines[where];
    const drawn = html(this.cellEl,
      `<button class="pg-prev" aria-label="Previous output cell">◀ prev</button>` +
      `<button class="pg-next" aria-label="Next output cell">next ▶</button>` +
      `<button class="pg-play" aria-pressed="${Boolean(this.playing)}">${this.playing ? "pause" : "play"}</button>` +
      `<label class="pg-speed">speed <input type="range" min="0.25" max="4" step="0.25" value="${this.speed}" aria-label="Play speed, cells per second"></label>` +
      `<span class="pg-line">output(${esc(this.figures.named("output", this.pick).join(","))}) = ${markdownInline(line || "…")}</span>`);
    if (!line && Object.keys(cells.lines).length && this.lineAsked !== where) { this.lineAsked = where; this.request(false); } // past the lines sent: ask once
    if (!drawn) return; // the same line: its buttons stand, wired
    const on = (sel, f) => { this.cellEl.querySelector(sel).onclick = f; };
    on(".pg-prev", () => this.step(-1)); on(".pg-next", () => this.step(1)); on(".pg-play", () => this.togglePlay());
    this.cellEl.querySelector(".pg-speed input").oninput = (e) => {
      this.speed = Number(e.target.value);
      if (this.playing) { clearInterval(this.playing); this.playing = setInterval(() => this.step(1), 1000 / this.speed); }
    };
  }

  step(by) { // the next (previous) output cell in row-major order, past the last back to the first
    const shape = this.answer.cells.shape, n = shape.reduce((a, b) => a * b, 1);
    let flat = (this.pick.reduce((acc, v, i) => acc * shape[i] + v, 0) + by + n) % n;
    const idx = [];
    for (let i = shape.length - 1; i >= 0; i--) { idx.unshift(flat % shape[i]); flat = Math.floor(flat / shape[i]); }
    this.setPick(idx);
  }

  setPick(idx) {
    this.pick = idx;
    this.pickInUrl = true; // the picked cell travels in the link (LAYER.cell.AXIS)
    this.writeUrl();
    if (!this.playing) this.settle(); // the page's Details tab follows the cell that rests picked
    if (!this.answer.cells.reads[idx.join(",")]) { this.request(false); return; } // outside the map sent: ask
    this.drawCell(); this.figures.outlinePick();
    this.root.dataset.pick = idx.join(",");
  }

  togglePlay() {
    if (this.playing) { clearInterval(this.playing); this.playing = null; this.settle(); }
    else this.playing = setInterval(() => this.step(1), 1000 / this.speed);
    this.drawCell();
  }
}
