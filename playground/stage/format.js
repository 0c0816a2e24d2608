// Numbers and text as the stage writes them: a cell's short label, a value's exact line, a tensor's stats line,
// escaped HTML and the little markdown the explanations use. No DOM: tests/js/format.test.mjs runs it in Node.

// A cell's label: four significant digits, exponent form past 1e5 or under 1e-3, the non-finite by name.
export function short(v) {
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "+Inf" : "-Inf";
  const a = Math.abs(v);
  if (a === 0) return "0";
  if (a >= 1e5 || a < 1e-3) return v.toExponential(1).replace("e+", "e");
  return String(Number(v.toPrecision(4)));
}

// A hovered value: float32's seven significant digits.
export function exact(v) { return Number.isFinite(v) ? String(Number(v.toPrecision(7))) : short(v); }

export function esc(s) {
  return String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// **bold** and `code` in escaped text: the only markup the server's explanations and cell lines use.
export function markdownInline(s) { return esc(s).replace(/\*\*(.+?)\*\*/g, "<b>$1</b>").replace(/`(.+?)`/g, "<code>$1</code>"); }

export function markdown(s) { // paragraphs and "- " lists of inline markdown
  const out = [];
  let list = false;
  for (const l of String(s).split("\n")) {
    if (/^\s*- /.test(l)) { if (!list) { out.push("<ul>"); list = true; } out.push(`<li>${markdownInline(l.replace(/^\s*- /, ""))}</li>`); continue; }
    if (list) { out.push("</ul>"); list = false; }
    if (l.trim()) out.push(`<p>${markdownInline(l)}</p>`);
  }
  if (list) out.push("</ul>");
  return out.join("");
}

// The finite values' range ([0, 1] where there are none).
export function extent(v) {
  let lo = Infinity, hi = -Infinity;
  for (const x of v) if (Number.isFinite(x)) { if (x < lo) lo = x; if (x > hi) hi = x; }
  return lo === Infinity ? [0, 1] : [lo, hi];
}

// A tensor's range and non-finite counts: the whole tensor's, from the server (`t.stats`: the tab may hold only the
// planes drawn), the range [0, 1] where no value is finite.
export function summary(t) {
  const s = t.stats;
  return { extent: s.min === null ? [0, 1] : [s.min, s.max], nan: s.nan, inf: s.inf };
}

export function stats(t) { // "shape (1, 1, 4, 7) · min -3 · max 5" and the NaN and Inf counts where there are any
  const { extent: [lo, hi], nan, inf } = summary(t);
  return `shape (${t.shape.join(", ")}) · min ${short(lo)} · max ${short(hi)}` + (nan ? ` · ${nan} NaN` : "") + (inf ? ` · ${inf} Inf` : "");
}
