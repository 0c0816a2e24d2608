// What the tab keeps: the planes of tensors it has been sent, by tensor id (an answer names the planes the browser
// holds instead of sending them again), and the answers it has drawn, by configuration (a step back is drawn
// without a round trip). An answer carries of each tensor the planes the stage draws (its page) and the whole
// tensor's stats; the other planes are asked for as a page is turned. No DOM: tests/js/store.test.mjs.
export const CACHE_BYTES = 64 << 20; // per tab, stated in the README: half of it for the tensors held by id
export const MAX_HELD = 64; // plane keys a request may name (protocol.MAX_HELD)
export const FRAME_TYPE = "application/x-stage-frame"; // protocol.FRAME_TYPE

// A frame (protocol.frame): a little-endian uint32 n, n bytes of JSON, then the planes' float32 values.
// Returns { head, src: { buffer, base } }: `sent` offsets count float32 values from `base` bytes into `buffer`.
export function readFrame(buffer) {
  const n = new DataView(buffer).getUint32(0, true);
  return { head: JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, n))), src: { buffer, base: 4 + n } };
}

export function fromBase64(text) { // an inline answer's `blob` (the page's first answer travels as JSON)
  let bytes;
  if (Uint8Array.fromBase64) bytes = Uint8Array.fromBase64(text);
  else { const bin = atob(text); bytes = new Uint8Array(bin.length); for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i); }
  return { buffer: bytes.buffer, base: bytes.byteOffset };
}

// The values of one of a tensor's planes ({ shape, grid }: the rows and columns protocol.grid draws it with).
export function planeSize(t) { const { rows, cols } = t.grid; return (rows == null ? 1 : t.shape[rows]) * (cols == null ? 1 : t.shape[cols]); }

// A tensor as the tab holds it: { id, shape, stats (the whole tensor's, from the server), planes: Map(plane ->
// Float32Array) }. `add` puts an entry's sent planes into it (views on the frame's bytes: no copy).
export function add(t, entry, src) {
  const n = planeSize(entry);
  for (const [p, at] of entry.sent || []) t.planes.set(p, new Float32Array(src.buffer, src.base + at * 4, n));
  return t;
}

export function has(t, first, count) { // every plane first … first + count − 1 held
  for (let p = first; p < first + count; p++) if (!t.planes.has(p)) return false;
  return true;
}

export function value(t, flat) { // a cell's value by its flat index; undefined on a plane not held
  const n = planeSize(t), plane = t.planes.get(Math.floor(flat / n));
  return plane ? plane[flat % n] : undefined;
}

export function bytes(t) { let b = 0; for (const v of t.planes.values()) b += v.byteLength; return b; }

export class Tensors {
  constructor(limit = CACHE_BYTES / 2) { this.limit = limit; this.byId = new Map(); }

  // The plane keys held ("ID.PLANE"), the most recently used tensors' last (a request names the last MAX_HELD).
  held() {
    const keys = [];
    for (const [id, t] of this.byId) for (const p of t.planes.keys()) keys.push(`${id}.${p}`);
    return keys.slice(-MAX_HELD);
  }

  clear() { this.byId.clear(); }

  // A tensor entry's planes added to the tensor of its id (a new one where none is held), most recently used last.
  take(entry, src) {
    const t = this.byId.get(entry.id) || { id: entry.id, shape: entry.shape, grid: entry.grid, stats: entry.stats, planes: new Map() };
    add(t, entry, src);
    this.byId.delete(entry.id); this.byId.set(entry.id, t);
    return t;
  }

  // Each figure's tensor (f.t) from the answer's frame (`answer.__src`) or its inline `blob`, and the planes held:
  // false where a plane of a figure's page is neither sent nor held (let go meanwhile: ask again, naming none).
  resolve(answer) {
    const src = answer.__src || (answer.blob ? fromBase64(answer.blob) : null);
    delete answer.__src; delete answer.blob;
    for (const f of answer.figures) {
      if (f.t) continue;
      const t = this.take(f.tensor, src);
      if (!has(t, ...f.tensor.page)) return false;
      f.t = t;
    }
    this.trim();
    return true;
  }

  trim() { // the least recently used tensors go while the planes held are over the limit
    let total = 0;
    for (const t of this.byId.values()) total += bytes(t);
    for (const [id, t] of this.byId) { if (total <= this.limit) break; this.byId.delete(id); total -= bytes(t); }
  }
}

export class Answers { // by cacheKey; a quick answer (a drag's: no engine built), or one whose follow-up (`finish`)
  // never landed, is replaced by the newer one
  constructor(limit = CACHE_BYTES) { this.limit = limit; this.byKey = new Map(); this.bytes = 0; }

  get(key) { return this.byKey.get(key); }

  has(key) { return this.byKey.has(key); }

  remember(key, answer) {
    const old = this.byKey.get(key);
    if (old && !old.__quick && !old.finish) return;
    if (old) { this.byKey.delete(key); this.bytes -= old.__bytes; }
    answer.__bytes = answer.figures.reduce((n, f) => n + bytes(f.t), 0) + 4096;
    this.byKey.set(key, answer); this.bytes += answer.__bytes;
    for (const [k, a] of this.byKey) { // least recently added first
      if (this.bytes <= this.limit) break;
      this.byKey.delete(k); this.bytes -= a.__bytes;
    }
  }
}
