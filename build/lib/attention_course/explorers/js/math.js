// The arithmetic every explorer shares, one definition each, mirroring the
// Python package (attention_course.softmax, .masks, .scaling). Plain numbers
// and arrays in, new arrays out: nothing here touches the page or mutates an
// argument. tests/js and tests/test_explorers.py check it against the package.

/** q . k over the first `n` entries (default: all). */
export function dot(q, k, n = q.length) {
  let s = 0;
  for (let i = 0; i < n; i++) s += q[i] * k[i];
  return s;
}

/** Scores of one query against each key: (n_k, d_k) x (d_k,) -> (n_k,). */
export function scoresOf(query, keys, n = query.length) {
  return keys.map((k) => dot(query, k, n));
}

/**
 * Stable softmax of one row, as attention_course.softmax does it: subtract the
 * row maximum so exp never overflows; -Infinity (masked) gets exactly 0; a row
 * that is all -Infinity gives all zeros; NaN anywhere makes the row NaN.
 */
export function softmax(row) {
  if (row.some(Number.isNaN)) return row.map(() => NaN);
  let m = Math.max(...row); // the row maximum
  if (m === -Infinity) m = 0; // nothing to attend to: every exp(-inf - 0) is 0
  const e = row.map((x) => Math.exp(x - m)); // every exponent <= 0
  const total = e.reduce((a, b) => a + b, 0);
  return total === 0 ? e.map(() => 0) : e.map((x) => x / total);
}

/** Weights times values: (n_k,) x (n_k, d_v) -> (d_v,). */
export function mixValues(weights, values) {
  const out = new Array(values[0].length).fill(0);
  weights.forEach((w, j) => values[j].forEach((v, c) => { out[c] += w * v; }));
  return out;
}

/** Entropy in nats of weights that sum to 1; 0 log 0 counts as 0. */
export function entropy(weights) {
  let h = 0;
  for (const p of weights) if (p > 0) h -= p * Math.log(p);
  return h;
}

/** Mean of a list of numbers. */
export function mean(xs) {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Population standard deviation (numpy's default, ddof = 0). */
export function std(xs) {
  const m = mean(xs);
  return Math.sqrt(mean(xs.map((x) => (x - m) * (x - m))));
}

/** Causal mask row: query i may attend to keys 0..i of n_k. */
export function causalRow(i, nK) {
  return Array.from({ length: nK }, (_, j) => j <= i);
}

/** Padding mask row: the first `length` of n_k keys are real, the rest padding. */
export function paddingRow(length, nK) {
  return Array.from({ length: nK }, (_, j) => j < length);
}

/** Scores at masked positions (allowed[j] false) become -Infinity. */
export function applyMask(scores, allowed) {
  return scores.map((s, j) => (allowed[j] ? s : -Infinity));
}
