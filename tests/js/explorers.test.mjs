// node --test tests/js: the explorers' JavaScript (unbundled, as in the repo)
// against the package's test vectors in vectors.json (see tests/explorer_vectors.py).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { computeCost } from "../../attention_course/explorers/js/cost.js";
import { bytesText, fixed, weightText } from "../../attention_course/explorers/js/format.js";
import { computeFrontier, topK } from "../../attention_course/explorers/js/frontier.js";
import { computeKvCache } from "../../attention_course/explorers/js/kv_cache.js";
import { computeMasks } from "../../attention_course/explorers/js/masking.js";
import { softmax } from "../../attention_course/explorers/js/math.js";
import { alibiSlopes, computePositions, movePositions, ropeVector } from "../../attention_course/explorers/js/positions.js";
import { computeRoofline, timeText } from "../../attention_course/explorers/js/roofline.js";
import { computeScaling, decodeSample, rawScores, scoresByDk } from "../../attention_course/explorers/js/scaling.js";
import { computeScores } from "../../attention_course/explorers/js/scores.js";
import { computeTodaysModels, ropeFrequencies } from "../../attention_course/explorers/js/todays_models.js";
import { presetChanges } from "../../attention_course/explorers/js/ui.js";
import { decode, mismatches } from "./compare.mjs";

const vectors = decode(JSON.parse(readFileSync(new URL("./vectors.json", import.meta.url), "utf-8")));

function assertMatches(actual, expected, label) {
  const diffs = mismatches(actual, expected);
  assert.deepEqual(diffs, [], `${label}: ${diffs.slice(0, 5).join("; ")}`);
}

test("scores to weights: every step equals the package's trace", () => {
  assert.ok(vectors.scores.length >= 5);
  vectors.scores.forEach(({ state, expected }, i) => assertMatches(computeScores(state), expected, `scores case ${i}`));
});

test("scores to weights: the bank-bot example's numbers at its values", () => {
  const r = computeScores(vectors.scores[0].state);
  assert.deepEqual(r.weights.map((w) => weightText(w)), ["0.064", "0.782", "0.048", "0.106"]);
  assert.equal(fixed(r.expSum, 2), "25.67");
  assert.deepEqual(r.output.map((x) => fixed(x, 2)), ["0.19", "0.91"]);
});

test("masks: allowed positions and weights equal the package's; masked weights are exactly 0", () => {
  vectors.masks.forEach(({ state, expected }, i) => {
    const r = computeMasks(state);
    assertMatches(r, expected, `masks case ${i}`);
    r.weights.forEach((row, q) => row.forEach((w, k) => {
      if (!r.allowed[q][k]) assert.ok(Object.is(w, 0), `case ${i}: masked weight [${q}][${k}] is ${w}, not 0`);
    }));
  });
});

test("scaling: the decoded sample equals the package's", () => {
  const { state, decoded } = vectors.scaling_sample;
  const { queries, keys } = decodeSample(state);
  assert.equal(queries.length, state.n_queries);
  assert.equal(keys.length, state.n_keys);
  assert.deepEqual(queries[0].slice(0, 8), decoded.queries_first);
  assert.deepEqual(keys[keys.length - 1].slice(-8), decoded.keys_last);
});

test("scaling: spread, largest weight and entropy equal the package's for every d_k", () => {
  const { state } = vectors.scaling_sample;
  vectors.scaling.forEach(({ d_k, expected }) => {
    const r = computeScaling({ ...state, d_k });
    const row0 = (s) => ({ ...s, scores0: s.scores[0], weights0: s.weights[0] });
    assertMatches({ unscaled: row0(r.unscaled), scaled: row0(r.scaled) }, expected, `scaling d_k=${d_k}`);
  });
});

test("cost: FLOPs and bytes equal attention_course.chapters.cost's, exactly", () => {
  vectors.cost.forEach(({ state, expected }, i) => {
    const r = computeCost(state);
    assert.deepEqual({ ...r, flops: r.flops.total }, expected, `cost case ${i}`);
    assert.ok(Number.isSafeInteger(r.flops.total), `cost case ${i}: ${r.flops.total} is not exact`);
  });
});

test("KV cache: bytes and head groups equal attention_course.decoder.kv_cache_bytes's, exactly", () => {
  assert.ok(vectors.kv_cache.length >= 10);
  vectors.kv_cache.forEach(({ state, expected }, i) => {
    const r = computeKvCache(state);
    assert.deepEqual(r, expected, `kv_cache case ${i}`);
    assert.ok(Number.isSafeInteger(r.total) && Number.isSafeInteger(r.mhaTotal), `kv_cache case ${i}: not exact`);
  });
});

test("KV cache: query heads that cannot share the key/value heads equally are an error, not numbers", () => {
  const r = computeKvCache({ ...vectors.kv_cache[0].state, n_heads: 6, n_kv_heads: 4 });
  assert.ok(r.error.includes("multiple"));
  assert.equal(r.total, undefined);
});

test("bytesText() prints like the Python mirror used by the tests", () => {
  vectors.bytes.forEach(({ x, text }) => assert.equal(bytesText(x), text, `bytesText(${x})`));
});

test("fixed() prints like the Python mirror used by the tests", () => {
  vectors.format.forEach(({ x, decimals, text }) => assert.equal(fixed(x, decimals), text, `fixed(${x}, ${decimals})`));
});

test("softmax: -inf gives exactly 0, an all -inf row gives zeros, NaN spreads", () => {
  assert.deepEqual(softmax([0, -Infinity]), [1, 0]);
  assert.deepEqual(softmax([-Infinity, -Infinity]), [0, 0]);
  assert.ok(softmax([0, NaN]).every(Number.isNaN));
  assert.deepEqual(softmax([1000, 1000]), [0.5, 0.5]);
});

test("scaling: the slider's precomputed scores are identical to direct dot products", () => {
  const sample = decodeSample(vectors.scaling_sample.state);
  const scoresAt = scoresByDk(sample);
  for (const d_k of [1, 2, 77, 511, 512]) assert.deepEqual(scoresAt(d_k), rawScores(sample, d_k));
});

test("positions: rotations, scores and ALiBi biases equal the package's", () => {
  assert.ok(vectors.positions.length >= 6);
  vectors.positions.forEach(({ state, expected }, i) => assertMatches(computePositions(state), expected, `positions case ${i}`));
});

test("positions: the rotated score depends on m - n only, and rotating back gives the vector back", () => {
  const { state } = vectors.positions[0];
  const at = (m, n) => computePositions({ ...state, m, n }).rope_score;
  for (const shift of [1, 7, 50, 96]) assert.ok(Math.abs(at(3 + shift, 1 + shift) - at(3, 1)) < 1e-12, `shift ${shift}`);
  const back = ropeVector(ropeVector(state.query, 37, 10000), -37, 10000);
  back.forEach((x, i) => assert.ok(Math.abs(x - state.query[i]) < 1e-14));
});

test("positions: moving both together keeps m - n and stays inside 0..max", () => {
  const s = { m: 3, n: 1, together: true, max_position: 100 };
  assert.deepEqual(movePositions(s, "m", 13), [13, 11]);
  assert.deepEqual(movePositions(s, "n", 0), [2, 0]);
  assert.deepEqual(movePositions(s, "m", 0), [2, 0]); // n cannot go below 0: both stop there
  assert.deepEqual(movePositions(s, "m", 150), [100, 98]);
  assert.deepEqual(movePositions({ ...s, together: false }, "n", 40), [3, 40]);
  assert.deepEqual(alibiSlopes(8), [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]);
});

test("roofline: FLOPs, bytes, intensity and least time equal attention_course.chapters.roofline's", () => {
  assert.ok(vectors.roofline.length >= 15);
  vectors.roofline.forEach(({ state, expected }, i) => assertMatches(computeRoofline(state), expected, `roofline case ${i}`));
});

test("roofline: a decoding step reads every weight and the cache, and batching shares only the weights", () => {
  const { state } = vectors.roofline[0];
  const one = computeRoofline(state).decode;
  const many = computeRoofline({ ...state, batch: 32 }).decode;
  assert.equal(many.weightBytes - one.weightBytes, 31 * state.model.d_model * 2); // one more embedding row a request
  assert.equal(many.cacheBytes, 32 * one.cacheBytes); // every request its own cache
  assert.ok(one.bound === "memory" && computeRoofline(state).prefill.bound === "compute");
  assert.deepEqual([timeText(2.5), timeText(0.00823), timeText(3.5e-5)], ["2.50 s", "8.23 ms", "35.0 µs"]);
});

test("today's models: cache bytes equal attention_course.decoder.cache_bytes's exactly, RoPE's ratios the package's", () => {
  const { presets, cases } = vectors.todays_models;
  assert.ok(cases.length >= 25);
  cases.forEach(({ state, expected }, i) => {
    const r = computeTodaysModels({ ...state, presets });
    if (expected.cache.error) assert.equal(r.cache.error, expected.cache.error, `todays_models case ${i}`);
    else {
      assert.deepEqual(r.cache, expected.cache, `todays_models case ${i}: cache`);
      r.cache.rows.forEach((row) => assert.ok(Number.isSafeInteger(row.total), `case ${i}: ${row.total} is not exact`));
    }
    assertMatches(r.rope, expected.rope, `todays_models case ${i}: rope`);
  });
});

test("today's models: the latent row does not depend on the heads, and a rule never speeds a pair up", () => {
  const { presets, cases } = vectors.todays_models;
  const state = { ...cases[0].state, presets };
  const mla = (s) => computeTodaysModels(s).cache.rows[3].per_token;
  assert.equal(mla({ ...state, n_heads: 8, n_kv_heads: 8 }), mla(state));
  for (const rope_type of ["linear", "dynamic", "llama3", "yarn"]) {
    const r = computeTodaysModels({ ...state, rope_type, context: 10 * state.original_context }).rope;
    assert.ok(r.ratio.every((x) => x <= 1 + 1e-15), rope_type);
    assert.equal(r.kept + r.slowed + r.between, state.rope_dim / 2);
  }
  assert.deepEqual(ropeFrequencies(4, 100), [1, 0.1]);
});

test("choosing a preset sets its fields, each a trait of the explorer's state; another name sets custom alone", () => {
  const { presets, cases } = vectors.todays_models;
  const traits = new Set(Object.keys(cases[0].state));
  for (const preset of presets) {
    const changes = presetChanges(presets, preset.name, ["layout"]);
    assert.equal(changes.preset, preset.name);
    assert.deepEqual(Object.keys(changes).sort(), Object.keys(preset).filter((k) => k !== "layout").map(
      (k) => (k === "name" ? "preset" : k)).sort());
    for (const name of Object.keys(changes)) assert.ok(traits.has(name), `${preset.name}: ${name} is not a trait`);
  }
  assert.deepEqual(presetChanges(presets, "custom", ["layout"]), { preset: "custom" });
});

test("frontier: the keys kept, the weight dropped and the bytes equal the package's (bytes exactly)", () => {
  const { sequences, presets, cases } = vectors.frontier;
  assert.ok(cases.length >= 20);
  cases.forEach(({ state, expected }, i) => {
    const r = computeFrontier({ ...state, sequences, presets });
    assertMatches(r, expected, `frontier case ${i}`);
    assert.deepEqual([r.kept, r.rows, r.total, r.stateBytes], [expected.kept, expected.rows, expected.total,
      expected.stateBytes], `frontier case ${i}: not exact`);
    assert.ok(Number.isSafeInteger(r.total), `frontier case ${i}: ${r.total} is not exact`);
  });
});

test("frontier: top-k keeps the earlier of equal scores, and all of them for k past the length", () => {
  assert.deepEqual(topK([0, 4, 0.4, 1], 2), [1, 3]);
  assert.deepEqual(topK([1, 2, 2, 0], 2), [1, 2]);
  assert.deepEqual(topK([1, 2, 2, 0], 1), [1]);
  assert.deepEqual(topK([0, 0, 0], 2), [0, 1]);
  assert.deepEqual(topK([3, 1], 5), [0, 1]);
});
