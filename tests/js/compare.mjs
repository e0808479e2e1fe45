// Compare what the JavaScript computed with the package's test vectors.
// Numbers agree to a relative 1e-9 (the two sides sum in different orders);
// exact zeros (masked weights), infinities, booleans and strings must be identical.

const NON_FINITE = { Infinity: Infinity, "-Infinity": -Infinity, NaN: NaN };

/** Decode the strings JSON uses for infinities and NaN. */
export function decode(value) {
  if (typeof value === "string" && value in NON_FINITE) return NON_FINITE[value];
  if (Array.isArray(value)) return value.map(decode);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, decode(v)]));
  return value;
}

/** Encode infinities and NaN as strings so results survive JSON. */
export function encode(value) {
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  if (Array.isArray(value)) return value.map(encode);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encode(v)]));
  return value;
}

/** Differences between `actual` and `expected` (only the keys `expected` has), as readable strings. */
export function mismatches(actual, expected, path = "", rtol = 1e-9, atol = 1e-12) {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return [`${path}: expected ${expected.length} items, got ${JSON.stringify(actual)}`];
    return expected.flatMap((e, i) => mismatches(actual[i], e, `${path}[${i}]`, rtol, atol));
  }
  if (expected && typeof expected === "object") {
    return Object.keys(expected).flatMap((k) => mismatches(actual?.[k], expected[k], `${path}.${k}`, rtol, atol));
  }
  if (typeof expected === "number") {
    if (typeof actual !== "number") return [`${path}: expected ${expected}, got ${actual}`];
    if (Number.isNaN(expected) ? Number.isNaN(actual) : actual === expected) return [];
    const exact = expected === 0 || !Number.isFinite(expected);
    if (!exact && Math.abs(actual - expected) <= atol + rtol * Math.abs(expected)) return [];
    return [`${path}: expected ${expected}, got ${actual}`];
  }
  return actual === expected ? [] : [`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
}
