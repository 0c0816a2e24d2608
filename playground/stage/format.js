// Numbers and text as the stage writes them: a tensor's values (a cell's label, a hovered value, a tensor's stats
// line), escaped HTML and the little markdown the explanations use. The stage spells every value of a tensor it
// draws; the server's texts (explanations, the precision line, messages) come spelled (numbers.py). Where both
// spell a value, `digits` and `precise` are held to numbers.py's by one table, tests/fixtures/spellings.json.
// No DOM: tests/js/format.test.mjs runs it in Node.

// `n` significant digits, trailing zeros dropped, exponent form from 1e6 and under 1e-4, the non-finite by name:
// 12345.68 reads "12345.7" at six and FP16's 12344 "12344", the digits a lesson is about (numbers.digits).
export function digits(v, n) {
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "+Inf" : "-Inf";
  const a = Math.abs(v);
  if (a === 0) return "0";
  if (a >= 1e6 || a < 1e-4) return v.toExponential(Math.max(0, n - 1)).replace(/\.?0+e/, "e").replace("e+", "e");
  return String(Number(v.toPrecision(n)));
}

// A hovered value: whole numbers in full, else float32's seven significant digits (numbers.precise).
export function precise(v) { return Number.isInteger(v) && Math.abs(v) < 1e15 ? String(v) : digits(v, 7); }

// A tensor's min and max on its stats line: six significant digits, as a cell where it fits.
export const STATS_DIGITS = 6;

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

// The axes of a tensor ({ shape, grid }) that are drawn, in order (protocol.grid's: the planes', the rows', the
// columns'; the 1s a model's node was lifted by left out): the shape and indices its figure names.
export function drawnAxes(t) { return [...t.grid.planes, t.grid.rows, t.grid.cols].filter((k) => k != null); }

export function stats(t) { // "shape (1, 1, 4, 7) · min -3 · max 5" and the NaN and Inf counts where there are any
  const { extent: [lo, hi], nan, inf } = summary(t);
  return `shape (${drawnAxes(t).map((k) => t.shape[k]).join(", ")}) · min ${digits(lo, STATS_DIGITS)} · max ${digits(hi, STATS_DIGITS)}` + (nan ? ` · ${nan} NaN` : "") + (inf ? ` · ${inf} Inf` : "");
}
