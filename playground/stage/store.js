// What the tab keeps: the tensors it has decoded, by id (an answer names the ones the browser holds instead of
// sending them again), and the answers it has drawn, by configuration (a step back is drawn without a round trip).
// No DOM: tests/js/store.test.mjs.
export const CACHE_BYTES = 64 << 20; // per tab, stated in the README: half of it for the tensors held by id
export const MAX_HELD = 64; // tensor ids a request may name (protocol.MAX_HELD)

export function decode(t) { // { shape, data: little-endian float32 in base64 } -> { shape, values }
  let bytes;
  if (Uint8Array.fromBase64) bytes = Uint8Array.fromBase64(t.data);
  else { const bin = atob(t.data); bytes = new Uint8Array(bin.length); for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i); }
  return { shape: t.shape, values: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4) };
}

export class Tensors {
  constructor(limit = CACHE_BYTES / 2) { this.limit = limit; this.byId = new Map(); }

  held() { return [...this.byId.keys()].slice(-MAX_HELD); } // the most recently used

  clear() { this.byId.clear(); }

  // Each figure's tensor (f.t) decoded once, by id: false where one named as held is not held (let go meanwhile).
  resolve(answer) {
    for (const f of answer.figures) {
      if (f.t) continue;
      if (f.tensor.data) { f.t = decode(f.tensor); delete f.tensor.data; }
      else if (this.byId.has(f.tensor.id)) f.t = this.byId.get(f.tensor.id);
      else return false;
      this.byId.delete(f.tensor.id); this.byId.set(f.tensor.id, f.t); // most recently used last
    }
    let bytes = 0;
    for (const t of this.byId.values()) bytes += t.values.byteLength;
    for (const [id, t] of this.byId) { if (bytes <= this.limit) break; this.byId.delete(id); bytes -= t.values.byteLength; }
    return true;
  }
}

export class Answers { // by cacheKey; a quick answer (a drag's: no engine built) is replaced by the full one
  constructor(limit = CACHE_BYTES) { this.limit = limit; this.byKey = new Map(); this.bytes = 0; }

  get(key) { return this.byKey.get(key); }

  has(key) { return this.byKey.has(key); }

  remember(key, answer) {
    const old = this.byKey.get(key);
    if (old && !old.__quick) return;
    if (old) { this.byKey.delete(key); this.bytes -= old.__bytes; }
    answer.__bytes = answer.figures.reduce((n, f) => n + f.t.values.byteLength, 0) + 4096;
    this.byKey.set(key, answer); this.bytes += answer.__bytes;
    for (const [k, a] of this.byKey) { // least recently added first
      if (this.bytes <= this.limit) break;
      this.byKey.delete(k); this.bytes -= a.__bytes;
    }
  }
}
