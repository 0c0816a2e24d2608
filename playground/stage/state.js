// The stage's state as the page's URL holds it: one table of the URL's keys (built from the page's describe) and one
// serializer, `serialize`, which `writeHistory` alone puts in the address bar. The configuration is held as the URL
// spells it, one text per key (`LAYER.PARAM`, `LAYER.PARAM.AXIS`, `LAYER.PARAM.set`); compare mode is
// `LAYER.compare`, the picked cell `LAYER.cell.AXIS` (an older link's `LAYER.extra.AXIS` still opens). Every key
// is the server's (protocol.describe): none is spelled here. No DOM but `writeHistory`: tests/js/state.test.mjs.

// The URL's keys of one page: its parameters' keys and their defaults, which choices' keys decide other keys'
// defaults (`resets`: activation's type decides alpha's), and the keys of compare mode and the picked cell (all
// spelled by the server: protocol.describe).
export function urlTable(describe) {
  const layer = describe.layer, resets = describe.resets || {}, owners = {};
  for (const [owner, keys] of Object.entries(resets)) for (const k of keys) (owners[k] ||= []).push(owner);
  return {
    layer, keys: describe.keys, defaults: describe.defaults, resets, owners,
    compare: describe.url.compare,
    pickPrefix: describe.url.cell,
    oldPickPrefix: describe.url.old_cell, // the picked cell's keys before they were named `cell`: read, never written
    view: describe.url.view, // the presenter's view (presenter mode, one cell size, hide): a room's link leaves it out
    dropped: describe.url.dropped, // an example's name: the page turned it into the parameters it sets
    switched: describe.url.switched || {}, // an optional parameter's axis keys, each to its `.set` key
  };
}

// The search string of `state` ({ query, compare, pick: { axes, index } or null }) over the current `search`: a
// parameter's key is left out where its value is the default, unless its default follows a choice that is not the
// default's (LEAKY_RELU's alpha 0 is not what a link without alpha opens: 0.01), and an unset optional parameter's
// axes are left out (`switched`); other pages' and the page's own
// keys (the sidebar's input) stay; the picked cell's keys are written where `pick` is given, else left as they are.
export function serialize(table, state, search = "") {
  const params = new URLSearchParams(search), query = state.query, defaults = table.defaults;
  for (const k of table.keys) {
    const v = query[k];
    const implied = v === defaults[k] && !(table.owners[k] || []).some((o) => query[o] !== defaults[o]);
    const unset = k in table.switched && query[table.switched[k]] !== "true"; // shows what is in force, not a value
    if (v === undefined || implied || unset) params.delete(k); else params.set(k, v);
  }
  for (const k of table.dropped) params.delete(k);
  if (state.compare) params.set(table.compare, state.compare); else params.delete(table.compare);
  if (state.pick) for (const k of [...params.keys()]) if (k.startsWith(table.oldPickPrefix)) params.delete(k);
  if (state.pick) state.pick.axes.forEach((a, i) => params.set(table.pickPrefix + a, String(state.pick.index[i])));
  const text = params.toString().replace(/%2C/g, ","); // "1,2" reads better in a link than "1%2C2"
  return text ? `?${text}` : "";
}

// The one writer of the address bar (replaceState: a slider's sweep is not a hundred entries of history). Whether it
// wrote: a browser that rate-limits history writes refuses one now and then (the next change's write follows).
export function writeHistory(table, state) {
  const url = new URL(window.location.href);
  url.search = serialize(table, state, url.search);
  if (url.href === window.location.href) return true;
  try { window.history.replaceState(window.history.state, "", url.toString()); return true; } catch (e) { return false; }
}

// `write` run a frame (FRAME_MS) after `soon()`, or `ms` after the last write where that is later: a sweep of changes,
// a held key, writes every `ms` while it lasts, never postponed by the next change. `now()` runs one owed at once,
// `cancel()` drops it. The timer and the clock are given (tests/js/state.test.mjs).
const FRAME_MS = 16; // out of the change's own frame: its figures are painted first
export class Later {
  constructor(write, ms, timer = (fn, t) => setTimeout(fn, t), clear = (id) => clearTimeout(id), clock = () => performance.now()) { // window's own, unbound
    Object.assign(this, { write, ms, timer, clear, clock, owed: null, last: -Infinity });
  }
  soon() { if (this.owed === null) this.owed = this.timer(() => this.now(), Math.max(FRAME_MS, this.last + this.ms - this.clock())); }
  now() { if (this.owed === null) return; this.clear(this.owed); this.owed = null; this.last = this.clock(); this.write(); }
  cancel() { this.clear(this.owed); this.owed = null; }
}

// The keys whose texts in `search` differ from `query`'s (a key left out of a link means its default, unless a choice
// decides its default: the page's run said it then). Where the page's script ran on an older query than the address
// bar holds (the page reconnected to another replica), the address bar wins.
export function linkChanges(table, search, query) {
  const url = new URLSearchParams(search), moved = {};
  for (const k of table.keys) {
    const v = url.has(k) ? url.get(k) : table.owners[k] ? undefined : table.defaults[k];
    if (v !== undefined && query[k] !== undefined && v !== query[k]) moved[k] = v;
  }
  return moved;
}

// Whether `search` names a picked cell (a shared link's): it stays in the URL as the configuration moves.
export function linkPicks(table, search) {
  return [...new URLSearchParams(search).keys()].some((k) => k.startsWith(table.pickPrefix) || k.startsWith(table.oldPickPrefix));
}

// `query` with `changes` made: a choice that decides later defaults (activation's type) lets those take the new
// ones (their keys leave the query; the server's answer brings them).
export function changed(table, query, changes) {
  const out = { ...query, ...changes };
  for (const k of Object.keys(changes)) for (const r of table.resets[k] || []) if (!(r in changes)) delete out[r];
  return out;
}

// The key of an answer in the browser's cache: the configuration and compare mode, in a stable order.
export function cacheKey(query, compare) {
  return JSON.stringify([compare || null, Object.keys(query).sort().map((k) => [k, query[k]])]);
}

// A picture's name: the layer and what differs from its defaults (convolution--stride_nd.h-2--padding_mode-SAME_UPPER).
export function fileName(table, query, compare) {
  const parts = [table.layer];
  for (const k of table.keys) {
    // a layer's keys less its name (stride_nd.h); a chain's whole, each under its layer's key (convolution2.stride_nd.h)
    const own = k.split(".")[0] === table.layer ? k.slice(table.layer.length + 1) : k;
    if (query[k] !== undefined && query[k] !== table.defaults[k]) parts.push(`${own}-${query[k]}`);
  }
  if (compare) parts.push(`compare-${compare}`);
  return parts.join("--").replace(/[^A-Za-z0-9_.-]+/g, "-").slice(0, 150);
}
