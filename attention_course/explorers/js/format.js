// How the explorers print numbers. One place, so that the page, the tests
// (tests/test_explorers.py mirrors `fixed`) and the prose agree digit for digit.

/**
 * `x` with a fixed number of decimals, like Number.prototype.toFixed (ties
 * round away from zero), with readable infinities: exp of a large score
 * overflows to Infinity before the stable softmax rescues the weights.
 */
export function fixed(x, decimals) {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "∞";
  if (x === -Infinity) return "−∞";
  return x.toFixed(decimals);
}

/** A weight: exactly 0 (a masked key) prints as "0", anything else with `decimals`. */
export function weightText(w, decimals = 3) {
  return w === 0 ? "0" : fixed(w, decimals);
}

/** A number for an input box: at most 12 significant digits, no float noise (0.1 + 0.2 -> "0.3"). */
export function inputText(x) {
  return String(Number(x.toPrecision(12)));
}

/** A vector as "[a, b]" with `decimals` each. */
export function vectorText(xs, decimals) {
  return `[${xs.map((x) => fixed(x, decimals)).join(", ")}]`;
}

/** A count with SI prefixes: 1.5e9 -> "1.50 G". */
export function si(x, unit = "") {
  const prefixes = ["", "k", "M", "G", "T", "P", "E"];
  let i = 0;
  let v = x;
  while (Math.abs(v) >= 1000 && i < prefixes.length - 1) { v /= 1000; i++; }
  return `${i === 0 ? String(v) : v.toFixed(2)} ${prefixes[i]}${unit}`.trim();
}

/** Bytes with binary prefixes: 1536 -> "1.50 KiB" (the cost and KV-cache explorers). */
export function bytesText(x) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0;
  let v = x;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return i === 0 ? `${v} B` : `${v.toFixed(2)} ${units[i]}`;
}
