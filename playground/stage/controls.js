// The stage's controls, drawn from the protocol's control schema (protocol.controls): a select per choice, a
// checkbox per switch, a range and an exact box per number and per axis, a text box per array (and a slider per value
// of a short one), each carrying data-param="LAYER.PARAM[.AXIS|.INDEX]". What a control offers, its bounds and
// whether it is used follow the latest answer's schema (`refresh`); so do the red marks of a refusal (`mark`).
import { esc } from "./format.js";

// Where an int slider offers some values only (valid group counts): the value it lands on. A key press (`stepwise`)
// goes to the next offered value the way it moved (End: the last), so that one step always moves; the pointer lands
// on the nearest, a tie going the way it moved. A value offered alone is where it stays.
export function snap(v, offered, from, stepwise) {
  if (!offered || !offered.length) return v;
  const up = v > from, down = v < from;
  if (stepwise && (up || down)) {
    const ahead = offered.filter((o) => (up ? o > from : o < from)).sort((a, b) => (up ? a - b : b - a));
    if (ahead.length) return ahead.find((o) => (up ? o >= v : o <= v)) ?? ahead[ahead.length - 1];
  }
  let best = offered[0];
  for (const o of offered) {
    const d = Math.abs(o - v) - Math.abs(best - v);
    if (d < 0 || (d === 0 && ((up && o > best) || (down && o < best)))) best = o;
  }
  return best;
}

// A text written where it changed only (written again, the same text is a new node: the stage's layout is worked out
// again in the next frame). The stage's own lines are written so too.
export function text(el, s) { if (el.textContent !== s) el.textContent = s; }

// The note under a control: why it is unused, or what it offers ("offers 1, 2"; "only 1 fits this configuration").
export function note(c) {
  if (!c.used) return c.why_unused || "";
  if (!c.offered || c.names) return "";
  return c.offered.length === 1 ? `only ${c.offered[0]} fits this configuration` : `offers ${c.offered.join(", ")}`;
}

// The query keys a control writes: its own, or its axes' (and an optional one's switch first).
export function controlKeys(c) {
  return c.axes ? [...(c.set_key ? [c.set_key] : []), ...c.axes.map((a) => c.keys[a])] : [c.key];
}

// The range of a per-value slider: the declared slide, else around the value (weights have no declared range).
export function valueRange(c, v) {
  const reach = Math.max(1, 2 * Math.abs(v));
  return c.slide || [Math.max(c.min ?? -reach, -reach), Math.min(c.max ?? reach, reach)];
}

// Every order of n axes (n ≤ 6: 720), the identity first, in lexicographic order: a permutation's control offers
// them whole, so that no step on the way from one order to another is a half-made one ("0,2,2,3").
export function permutations(n) {
  if (n > 6) return null;
  const out = [], walk = (head, rest) => {
    if (!rest.length) { out.push(head); return; }
    rest.forEach((v, i) => walk([...head, v], [...rest.slice(0, i), ...rest.slice(i + 1)]));
  };
  walk([], [...Array(n).keys()]);
  return out;
}

// A permutation as its option reads: "0, 1, 3, 2" and, where the axes have names, the order they end in
// ("n c w h").
export function permutationText(perm, axes) {
  return perm.join(", ") + (axes && axes.length === perm.length ? `  (${perm.map((a) => axes[a]).join(" ")})` : "");
}

export class Controls {
  // on: { set(changes), release(key, value), example(name), compare(value) }; query(): the stage's configuration;
  // dropped: { key: message } of the link's values the page does not use (their controls marked until moved).
  constructor(el, { layer, describe, hide, compare, query, on, dropped }) {
    Object.assign(this, { el, layer, describe, hide: new Set(hide || []), query, on });
    this.inputs = {}; this.latest = {}; this.dragging = false; this.marked = new Set();
    const d = describe;
    if (d.examples.length && !this.hide.has("preset")) el.append(this.picker(d.examples));
    if (!this.hide.has("compare")) el.append(this.comparer(d.compare_choices || d.precisions, compare, d.url.compare));
    let group = null; // a chain's controls come by layer: each layer's under its key (`group`) and title
    for (const c of d.controls) {
      if (this.hide.has(c.name)) continue;
      if (c.group && c.group !== group) el.append(this.heading((group = c.group), c.group_title));
      el.append(this.control(c));
    }
    if (this.hide.has("parameters")) el.hidden = true;
    this.refresh(d.controls);
    this.markDropped(dropped);
  }

  heading(key, title) {
    const h = document.createElement("div");
    h.className = "pg-group"; h.dataset.group = key;
    h.innerHTML = `<code>${esc(key)}</code> ${esc(title || "")}`;
    return h;
  }

  picker(list) { // the spec's examples and the lessons: picking one sets the input too, which the page owns
    const box = document.createElement("div");
    box.className = "pg-control pg-picker";
    box.innerHTML = `<label class="pg-label" for="pg-${this.layer}-example"><span>Example or lesson</span></label>`;
    const sel = document.createElement("select");
    sel.id = `pg-${this.layer}-example`; sel.dataset.control = "example";
    sel.append(new Option("— none: your own configuration —", ""));
    for (const e of list) sel.append(new Option(`${e.kind}: ${e.title}`, e.name));
    sel.addEventListener("change", () => { if (sel.value) this.on.example(sel.value); });
    this.exampleEl = sel;
    box.append(sel);
    return box;
  }

  comparer(precisions, compare, key) { // compare mode: the same configuration in a second precision, beside the first
    const box = document.createElement("div");
    box.className = "pg-control";
    box.innerHTML = `<label class="pg-label" for="pg-${this.layer}-compare"><span>Compare with (compare)</span></label>`;
    const sel = document.createElement("select");
    sel.id = `pg-${this.layer}-compare`; sel.dataset.param = key;
    this.compareEl = sel;
    this.compareChoices(precisions, compare);
    sel.addEventListener("change", () => this.on.compare(sel.value || null));
    box.append(sel);
    return box;
  }

  // The precisions compare mode offers now (protocol.compare_choices: every one but the configuration's own), "off"
  // first; the one compared stays picked while it is offered.
  compareChoices(choices, compare) {
    const sel = this.compareEl;
    if (!sel || !choices) return;
    const now = ["", ...choices];
    if ([...sel.options].map((o) => o.value).join() !== now.join()) {
      sel.innerHTML = "";
      sel.append(new Option("off", ""));
      for (const p of choices) sel.append(new Option(p, p));
    }
    sel.value = compare && choices.includes(compare) ? compare : "";
  }

  control(c) {
    const box = document.createElement("div");
    box.className = "pg-control"; box.dataset.name = c.name;
    const head = document.createElement("div");
    head.className = "pg-label";
    head.innerHTML = `<span>${esc(c.label)}</span><span class="pg-value"></span>`;
    head.title = c.help;
    box.append(head);
    const set = (changes) => this.on.set(changes);
    const w = c.widget; // the parameter kind's one decision (params.Kind.widget), which the chain page reads too
    if (w === "choice") {
      const sel = document.createElement("select");
      for (const v of c.choices) sel.append(new Option(v, v));
      sel.addEventListener("change", () => set({ [c.key]: sel.value }));
      box.append(this.add(sel, c, c.key));
    } else if (w === "toggle") {
      const label = document.createElement("label"), cb = document.createElement("input");
      cb.type = "checkbox"; label.append(cb, document.createTextNode(" on"));
      cb.addEventListener("change", () => set({ [c.key]: cb.checked ? "true" : "false" }));
      this.add(cb, c, c.key); box.append(label);
    } else if (w === "named" && c.names) { // values with names (softmax's axis): a list of them, not a slider over a bitmask
      const sel = document.createElement("select");
      c.offered.forEach((v, i) => sel.append(new Option(c.names[i], String(v))));
      sel.addEventListener("change", () => set({ [c.key]: sel.value }));
      box.append(this.add(sel, c, c.key));
    } else if (w === "permutation") { // one pick of a whole order: writes every axis (or the list) at once
      const sel = document.createElement("select");
      sel.className = "pg-permutation";
      sel.addEventListener("change", () => {
        const v = sel.value.split(",");
        set(c.axes ? Object.fromEntries(c.axes.map((a, i) => [c.keys[a], v[i]])) : { [c.key]: sel.value });
      });
      this.add(sel, c, c.axes ? c.keys[c.axes[0]] : c.key);
      if (c.axes) for (const a of c.axes) this.inputs[c.keys[a]] = sel; // a refusal of any axis marks the one control
      box.append(sel);
    } else if (w === "slider" || w === "named") {
      box.append(this.slider(c, c.key, c.low, c.high, c.step));
    } else if (w === "axes") {
      if (c.set_key) {
        const label = document.createElement("label"), cb = document.createElement("input");
        cb.type = "checkbox"; label.append(cb, document.createTextNode(" set"));
        cb.addEventListener("change", () => set({ [c.set_key]: cb.checked ? "true" : "false" }));
        this.add(cb, c, c.set_key); box.append(label);
      }
      for (const ax of c.axes) {
        const row = document.createElement("div"); row.className = "pg-axis";
        row.innerHTML = `<span class="pg-ax">${ax}</span>`;
        row.append(this.slider(c, c.keys[ax], c.low, Math.min(c.high, c.low + 32), 1));
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
      text.addEventListener("change", () => set({ [c.key]: text.value }));
      box.append(this.add(text, c, c.key));
      this.valueSliders(c, box);
    }
    const n = document.createElement("div"); n.className = "pg-note";
    box.append(n);
    return box;
  }

  add(el, c, k) { // a control of a query key: its name for tests and for assistive technology
    el.dataset.param = k;
    el.setAttribute("aria-label", `${c.label} ${k.split(".").slice(2).join(" ")}`.trim());
    this.inputs[k] = el;
    return el;
  }

  slider(c, k, low, high, step) {
    const wrap = document.createElement("div"); wrap.className = "pg-slider";
    const range = document.createElement("input");
    range.type = "range"; range.min = low; range.max = high; range.step = step;
    const box = document.createElement("input");
    box.type = "number"; box.min = c.min ?? c.low; box.max = c.max ?? c.high; box.step = "any";
    box.className = "pg-exact"; box.setAttribute("aria-label", `${c.label} exact value`);
    const snapped = () => { // against what the latest answer offers, not what the page opened with
      const v = String(snap(Number(range.value), (this.latest[c.name] || c).offered, Number(this.query()[k]), !this.dragging));
      if (range.value !== v) range.value = v;
      return v;
    };
    // While the thumb is held (`dragging`) answers come quick and the full one waits for the release.
    range.addEventListener("pointerdown", () => { this.dragging = true; });
    range.addEventListener("input", () => {
      const v = snapped();
      box.value = v;
      if (v !== this.query()[k]) this.on.set({ [k]: v });
    });
    range.addEventListener("change", () => { // the release: its value drawn in full (its engine built) last
      this.dragging = false;
      this.on.release(k, snapped());
    });
    box.addEventListener("change", () => this.on.set({ [k]: box.value }));
    wrap.append(this.add(range, c, k), box);
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
    const now = wrap.values = [...values], write = () => this.on.set({ [c.key]: now.map(String).join(",") });
    values.forEach((v, i) => {
      const [lo, hi] = valueRange(c, v);
      const row = document.createElement("div"); row.className = "pg-axis";
      row.innerHTML = `<span class="pg-ax">${i}</span>`;
      const range = document.createElement("input"), exact = document.createElement("input");
      range.type = "range"; range.min = lo; range.max = hi; range.step = c.step; range.value = v;
      range.dataset.param = `${c.key}.${i}`; range.setAttribute("aria-label", `${c.label} value ${i}`);
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

  // The latest answer's schema: values, bounds, what is offered and used; the example it is, where it is one; the
  // precisions compare mode offers.
  refresh(list, example, compareChoices, compare) {
    const query = this.query();
    this.compareChoices(compareChoices, compare);
    if (this.exampleEl && example !== undefined) this.exampleEl.value = example ? example.name : "";
    for (const c of list) {
      this.latest[c.name] = c;
      const box = this.el.querySelector(`.pg-control[data-name="${c.name}"]`);
      if (!box) continue;
      box.classList.toggle("pg-unused", !c.used);
      text(box.querySelector(".pg-note"), note(c));
      if (c.widget === "permutation") { this.permutation(c, box, query); continue; }
      const setOff = c.set_key && query[c.set_key] !== "true";
      for (const k of controlKeys(c)) {
        const el = this.inputs[k], v = query[k];
        if (!el || v === undefined) continue;
        if (el.type === "checkbox") el.checked = v === "true";
        else if (document.activeElement !== el) el.value = v;
        el.disabled = !c.used || (setOff && k !== c.set_key);
        if (el.type === "range") {
          if (c.tops && c.axes) { const t = c.tops[c.axes.indexOf(k.split(".").pop())]; if (t !== undefined) el.max = Math.max(t, Number(v)); }
          if (el.getAttribute("aria-valuenow") !== v) el.setAttribute("aria-valuenow", v);
          const exact = el.parentElement.querySelector(".pg-exact");
          if (exact && document.activeElement !== exact) exact.value = v;
        }
      }
      if (c.widget === "slider" || c.widget === "named") text(box.querySelector(".pg-value"), query[c.key] ?? "");
      if (c.widget === "text") this.valueSliders(c, box);
    }
  }

  // A permutation's list follows the number of axes it orders (a second transpose after a reshape to rank 3:
  // the six orders of 3); the value the configuration holds is the one picked.
  permutation(c, box, query) {
    const sel = box.querySelector("select.pg-permutation");
    const now = c.axes ? c.axes.map((a) => query[c.keys[a]]).join(",") : String(query[c.key] ?? "").replace(/\s+/g, "");
    const n = now ? now.split(",").length : 0;
    if (sel.dataset.count !== String(n)) {
      sel.innerHTML = "";
      for (const p of permutations(n) || []) sel.append(new Option(permutationText(p, c.axes), p.join(",")));
      sel.dataset.count = String(n);
    }
    if (![...sel.options].some((o) => o.value === now)) sel.append(new Option(now, now)); // a link's refused order, shown
    sel.value = now;
    sel.disabled = !c.used;
  }

  // The red marks of a refusal: exactly the keys the latest answer names (none for a valid one), so a fix of one
  // axis clears the marks of every axis the refusal named.
  mark(keys, rule) {
    for (const k of this.marked) if (!keys.includes(k)) this.markOne(k, null);
    for (const k of keys) this.markOne(k, rule);
    this.marked = new Set(keys.filter((k) => this.inputs[k]));
  }

  // The link's keys the page does not use (the page's message for each, ui/links.py): their controls outlined, the
  // message on hover, until the control is moved (`moved`).
  markDropped(dropped) {
    for (const [k, message] of Object.entries(dropped || {})) {
      const el = this.inputs[k];
      if (!el) continue;
      el.classList.add("pg-dropped"); el.dataset.dropped = message;
      if (!el.title) el.title = message;
    }
  }

  moved(keys) {
    for (const k of keys) {
      const el = this.inputs[k];
      if (!el || !el.dataset.dropped) continue;
      if (el.title === el.dataset.dropped) el.removeAttribute("title");
      el.classList.remove("pg-dropped"); delete el.dataset.dropped;
    }
  }

  markOne(k, rule) {
    const el = this.inputs[k];
    if (!el) return;
    el.classList.toggle("pg-invalid", Boolean(rule));
    el.setAttribute("aria-invalid", rule ? "true" : "false");
    if (rule) el.title = rule; else el.removeAttribute("title");
  }
}
