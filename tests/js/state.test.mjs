// state.js: the URL table, its one serializer, reading a link back, and the address bar written a moment later.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Later, cacheKey, changed, fileName, linkChanges, linkPicks, serialize, urlTable } from "../../playground/stage/state.js";

// activation-like: type decides alpha's default; a per-axis parameter beside it
const table = urlTable({
  layer: "act",
  keys: ["act.type", "act.alpha", "act.stride.h", "act.stride.w"],
  defaults: { "act.type": "RELU", "act.alpha": "0", "act.stride.h": "1", "act.stride.w": "1" },
  resets: { "act.type": ["act.alpha"] },
  url: { compare: "act.compare", cell: "act.cell.", old_cell: "act.extra.", view: ["view.presenter", "view.cell", "hide"], dropped: ["preset"] },
});
const defaults = { "act.type": "RELU", "act.alpha": "0", "act.stride.h": "1", "act.stride.w": "1" };

test("the table names every key of the page and which choices own which defaults", () => {
  assert.deepEqual(table.owners, { "act.alpha": ["act.type"] });
  assert.equal(table.compare, "act.compare");
  assert.equal(table.pickPrefix, "act.cell.");
});

test("a value equal to its default leaves the URL; others are written", () => {
  assert.equal(serialize(table, { query: { ...defaults, "act.stride.w": "2" } }, "?act.stride.h=3"), "?act.stride.w=2");
  assert.equal(serialize(table, { query: defaults }, ""), "");
});

test("a default that follows a choice moved away from its own is written", () => {
  const q = { ...defaults, "act.type": "LEAKY_RELU", "act.alpha": "0" };
  assert.equal(serialize(table, { query: q }, ""), "?act.type=LEAKY_RELU&act.alpha=0");
});

test("other keys stay, an example's name goes, commas stay readable", () => {
  const out = serialize(table, { query: { ...defaults, "act.alpha": "1,2" } }, "?view.presenter=true&preset=x&act.input.C=2");
  assert.equal(out, "?view.presenter=true&act.input.C=2&act.alpha=1,2");
});

test("compare mode and the picked cell are written by the same serializer", () => {
  const state = { query: defaults, compare: "FP16", pick: { axes: ["n", "k", "h", "w"], index: [0, 0, 1, 2] } };
  assert.equal(serialize(table, state, "?act.compare=INT8"), "?act.compare=FP16&act.cell.n=0&act.cell.k=0&act.cell.h=1&act.cell.w=2");
  assert.equal(serialize(table, { query: defaults, compare: null }, "?act.compare=FP16&act.cell.h=1"), "?act.cell.h=1");
  // an older link's spelling (LAYER.extra.AXIS) gives way to LAYER.cell.AXIS as the stage writes the pick
  assert.equal(serialize(table, state, "?act.extra.h=1&act.extra.w=0"), "?act.compare=FP16&act.cell.n=0&act.cell.k=0&act.cell.h=1&act.cell.w=2");
});

test("the serializer's output read back gives the configuration (no key differs)", () => {
  const q = { ...defaults, "act.type": "CLIP", "act.alpha": "-2", "act.stride.h": "3" };
  assert.deepEqual(linkChanges(table, serialize(table, { query: q }, ""), q), {});
});

test("a link's values win over the page's; a key left out means its default unless a choice owns it", () => {
  const q = { ...defaults, "act.stride.h": "2", "act.alpha": "0.5" };
  assert.deepEqual(linkChanges(table, "?act.stride.w=4", q), { "act.stride.h": "1", "act.stride.w": "4" });
  assert.ok(linkPicks(table, "?act.cell.w=1"));
  assert.ok(linkPicks(table, "?act.extra.w=1")); // an older link's picked cell
  assert.ok(!linkPicks(table, "?other.cell.w=1"));
});

test("a change of a choice lets the keys it owns take their new defaults", () => {
  const q = changed(table, { ...defaults, "act.alpha": "0.3" }, { "act.type": "CLIP" });
  assert.equal(q["act.type"], "CLIP");
  assert.ok(!("act.alpha" in q));
  assert.equal(changed(table, defaults, { "act.type": "CLIP", "act.alpha": "5" })["act.alpha"], "5");
});

test("the cache key ignores the keys' order and tells compare modes apart", () => {
  assert.equal(cacheKey({ a: "1", b: "2" }, null), cacheKey({ b: "2", a: "1" }, undefined));
  assert.notEqual(cacheKey({ a: "1" }, null), cacheKey({ a: "1" }, "FP16"));
});

test("a picture is named by what differs from the defaults", () => {
  const q = { ...defaults, "act.stride.h": "2", "act.type": "LEAKY RELU/x" };
  assert.equal(fileName(table, q, "FP16"), "act--type-LEAKY-RELU-x--stride.h-2--compare-FP16");
  assert.equal(fileName(table, defaults, null), "act");
  // a chain's keys are its layers' (KEY.PARAM): named whole, under the chain's name
  const chain = { ...table, layer: "chain", keys: ["convolution2.stride_nd.h"], defaults: { "convolution2.stride_nd.h": "1" } };
  assert.equal(fileName(chain, { "convolution2.stride_nd.h": "2" }, null), "chain--convolution2.stride_nd.h-2");
});

test("Later writes a frame after a change, then at most once per `ms`, never postponed by the next change", () => {
  const timers = new Map(); let next = 0, writes = 0, clock = 1000;
  const timer = (fn, ms) => { timers.set(++next, { fn, ms }); return next; };
  const clear = (id) => { timers.delete(id); };
  const fire = () => { const due = [...timers.values()]; timers.clear(); due.forEach((t) => { clock += t.ms; t.fn(); }); };
  const later = new Later(() => { writes += 1; }, 100, timer, clear, () => clock);
  later.soon(); later.soon(); later.soon();
  // one timer, the first change's, a frame away: a held key's later presses do not push the write back
  assert.deepEqual([...timers.keys()], [1]); assert.equal(timers.get(1).ms, 16); assert.equal(writes, 0);
  fire();
  assert.equal(writes, 1);
  clock += 30; later.soon(); // 30 ms after a write: the next waits till 100 ms after it
  assert.equal([...timers.values()][0].ms, 70);
  fire(); assert.equal(writes, 2);
  clock += 500; later.soon(); // after a rest: a frame away again
  assert.equal([...timers.values()][0].ms, 16);
  later.now(); // owed: written at once
  assert.equal(writes, 3); assert.equal(timers.size, 0);
  later.now(); // nothing owed: nothing written
  assert.equal(writes, 3);
  later.soon(); later.cancel(); fire();
  assert.equal(writes, 3);
});

test("an unset optional parameter's axes stay out of the link; set, they are written", () => {
  const describe = {
    layer: "convolution",
    keys: ["convolution.pre_padding.set", "convolution.pre_padding.h"],
    defaults: { "convolution.pre_padding.set": "false", "convolution.pre_padding.h": "0" },
    url: { compare: "convolution.compare", cell: "convolution.cell.", old_cell: "convolution.extra.", view: [], dropped: [],
      switched: { "convolution.pre_padding.h": "convolution.pre_padding.set" } },
  };
  const table = urlTable(describe);
  const shown = { "convolution.pre_padding.set": "false", "convolution.pre_padding.h": "1" }; // padding_nd's, in force
  assert.equal(serialize(table, { query: shown }), "");
  assert.equal(serialize(table, { query: { ...shown, "convolution.pre_padding.set": "true" } }),
    "?convolution.pre_padding.set=true&convolution.pre_padding.h=1");
});
