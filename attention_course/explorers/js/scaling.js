// Explorer 2: d_k and scaling. Random queries and keys with unit-variance
// entries (drawn by Python, stored as 1/32 steps in int8); the reader moves d_k
// from 1 to 512 and switches the 1/sqrt(d_k) scaling on and off, and sees how
// wide q.k spreads and how peaked the softmax of such scores becomes.
// State (attention_course.explorers.ScalingExplorer): d_k, scaled, d_max,
// n_queries, n_keys, sample (base64 of int8 rows: queries then keys, each d_max long).

import { dot, entropy, mean, softmax, std } from "./math.js";
import { fixed } from "./format.js";
import { bind, h, labelled, show } from "./ui.js";

/** The sample as float rows: { queries: (n_queries, d_max), keys: (n_keys, d_max) }. */
export function decodeSample({ sample, d_max, n_queries, n_keys }) {
  const bytes = Int8Array.from(atob(sample), (c) => (c.charCodeAt(0) << 24) >> 24); // 0..255 -> -128..127
  const rows = Array.from({ length: n_queries + n_keys }, (_, r) =>
    Array.from(bytes.subarray(r * d_max, (r + 1) * d_max), (b) => b / 32));
  return { queries: rows.slice(0, n_queries), keys: rows.slice(n_queries) };
}

/** Raw scores q_i . k_j over the first d_k entries: (n_q, d_k) x (d_k, n_k) -> (n_q, n_k). */
export function rawScores({ queries, keys }, d_k) {
  return queries.map((q) => keys.map((k) => dot(q, k, d_k)));
}

/**
 * Every d_k's raw scores at once, for a slider that must answer within a frame:
 * row d_k of the result holds the (n_q * n_k) scores summed over the first d_k
 * entries. Each is a running sum in the same order as `dot`, so the numbers
 * are identical to rawScores(sample, d_k).
 */
export function scoresByDk({ queries, keys }) {
  const dMax = queries[0].length;
  const pairs = queries.length * keys.length;
  const table = Array.from({ length: dMax + 1 }, () => new Float64Array(pairs)); // (d_max + 1, n_q * n_k)
  queries.forEach((q, i) => keys.forEach((k, j) => {
    const p = i * keys.length + j;
    let s = 0;
    for (let t = 0; t < dMax; t++) { s += q[t] * k[t]; table[t + 1][p] = s; }
  }));
  return (d_k) => queries.map((_, i) => Array.from(table[d_k].subarray(i * keys.length, (i + 1) * keys.length)));
}

/** Statistics of (n_q, n_k) raw scores with d_k entries each, scaled by 1/sqrt(d_k) or not. */
export function scoreStats(raw, d_k, scaled) {
  const factor = scaled ? 1 / Math.sqrt(d_k) : 1;
  const scores = raw.map((row) => row.map((s) => s * factor));
  const weights = scores.map(softmax); // (n_q, n_k), each row sums to 1
  return {
    scores,
    weights,
    spread: std(scores.flat()), // about sqrt(d_k) unscaled, about 1 scaled
    maxWeight: mean(weights.map((w) => Math.max(...w))), // 1/n_k uniform ... 1 one-hot
    entropy: mean(weights.map(entropy)), // ln(n_k) uniform ... 0 one-hot
  };
}

/** scoreStats of the sample's scores over the first d_k entries. */
export function scalingStats(sample, d_k, scaled) {
  return scoreStats(rawScores(sample, d_k), d_k, scaled);
}

/** Both rows of the explorer's table for a state: { unscaled, scaled } statistics at state.d_k. */
export function computeScaling(state) {
  const sample = decodeSample(state);
  return { unscaled: scalingStats(sample, state.d_k, false), scaled: scalingStats(sample, state.d_k, true) };
}

const AXIS = 70; // the strip of scores spans -70..70, about 3 sqrt(512)

function render({ model, el }) {
  const sample = decodeSample({
    sample: model.get("sample"), d_max: model.get("d_max"),
    n_queries: model.get("n_queries"), n_keys: model.get("n_keys"),
  });
  const nKeys = sample.keys.length;
  const scoresAt = scoresByDk(sample); // computed once, so moving the slider only looks scores up
  const slider = h("input", {
    type: "range", min: 1, max: model.get("d_max"), step: 1, "data-role": "d_k",
    oninput: () => state.set({ d_k: Number(slider.value) }),
  });
  const dkOut = h("output", { "data-role": "d_k-value" });
  const toggle = h("input", {
    type: "checkbox", "data-role": "scaled",
    onchange: () => state.set({ scaled: toggle.checked }),
  });

  const statRows = [false, true].map((scaled) => ({
    scaled,
    tr: null,
    spread: h("td", { "data-role": "spread", "data-scaled": String(scaled) }),
    theory: h("td", { "data-role": "theory", "data-scaled": String(scaled) }),
    maxWeight: h("td", { "data-role": "max-weight", "data-scaled": String(scaled) }),
    entropy: h("td", { "data-role": "entropy", "data-scaled": String(scaled) }),
  }));
  statRows.forEach((r) => {
    r.tr = h("tr", {}, h("th", { scope: "row" }, r.scaled ? "q·k / √d_k" : "q·k"), r.spread, r.theory, r.maxWeight, r.entropy);
  });

  // The strip of scores is drawn on a canvas: 256 dots redrawn per update cost far
  // less than re-laying out 256 SVG circles, so the slider keeps up with the hand.
  const W = 600; const H = 70;
  const canvas = h("canvas", { class: "ac-strip", role: "img", width: W * 2, height: H * 2 });
  const x = (s) => W / 2 + ((W / 2 - 10) * Math.max(-AXIS, Math.min(AXIS, s))) / AXIS;
  const dotY = sample.queries.flatMap((_, i) => sample.keys.map((_, j) => 12 + ((i * nKeys + j) * 7919) % 33)); // spread vertically

  function drawStrip(scores) {
    const ctx = canvas.getContext("2d");
    const style = getComputedStyle(root);
    ctx.setTransform(2, 0, 0, 2, 0, 0); // drawn at twice the size: sharp on high-density screens
    ctx.clearRect(0, 0, W, H);
    ctx.font = "11px sans-serif";
    ctx.textAlign = "center";
    for (const t of [-60, -40, -20, 0, 20, 40, 60]) {
      ctx.fillStyle = style.getPropertyValue("--ac-line").trim() || "#ccc";
      ctx.fillRect(Math.round(x(t)), 8, 1, 42);
      ctx.fillStyle = style.getPropertyValue("--ac-muted").trim() || "#555";
      ctx.fillText(String(t), x(t), 64);
    }
    ctx.fillStyle = style.getPropertyValue("--ac-accent").trim() || "#1f6fb2";
    ctx.globalAlpha = 0.45;
    scores.forEach((score, k) => {
      ctx.beginPath();
      ctx.arc(x(score), dotY[k], 2.5, 0, 2 * Math.PI);
      ctx.fill();
    });
    ctx.globalAlpha = 1;
  }

  const half = Math.ceil(nKeys / 2);
  const weightCells = sample.keys.map((_, j) => ({
    text: h("td", { "data-role": "weight", "data-index": j }),
    bar: h("span", { class: "ac-vbar", "aria-hidden": "true" }, h("span", { class: "ac-vbar-fill" })),
  }));

  const root = h("div", { class: "ac-explorer ac-scaling", "data-explorer": "scaling" },
    h("p", { class: "ac-title" }, "d_k and scaling: how far do random scores spread, and how peaked is their softmax?"),
    h("div", { class: "ac-controls" },
      labelled("d_k", slider, dkOut),
      labelled("divide the scores by √d_k", toggle)),
    h("table", { class: "ac-table" },
      h("caption", {}, `${sample.queries.length} random queries against ${nKeys} random keys, every entry with mean 0 and variance 1`),
      h("thead", {}, h("tr", {}, ["scores", "spread (std)", "expected", "largest weight", "entropy (nats)"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, statRows.map((r) => r.tr))),
    h("figure", { class: "ac-figure" }, canvas,
      h("figcaption", { class: "ac-note", "data-role": "strip-caption" })),
    // The keys in two tables of half as many columns each, so that the strip fits a phone's width.
    [weightCells.slice(0, half), weightCells.slice(half)].map((cells, part) =>
      h("table", { class: "ac-table ac-compact" },
        part === 0 ? h("caption", {}, `Query 1's weights over its ${nKeys} keys (uniform would be ${fixed(1 / nKeys, 3)} each, with entropy ln ${nKeys} = ${fixed(Math.log(nKeys), 2)} nats)`) : null,
        h("tbody", {},
          h("tr", {}, h("th", { scope: "row" }, "key"), cells.map((_, j) => h("td", {}, String(part * half + j + 1)))),
          h("tr", {}, h("th", { scope: "row" }, "weight"), cells.map((c) => c.text)),
          h("tr", { "aria-hidden": "true" }, h("td"), cells.map((c) => h("td", {}, c.bar)))))));
  el.replaceChildren(root);

  function update() {
    const d_k = model.get("d_k");
    const scaled = model.get("scaled");
    if (Number(slider.value) !== d_k) slider.value = String(d_k);
    toggle.checked = scaled;
    show(dkOut, String(d_k), d_k);
    const raw = scoresAt(d_k);
    statRows.forEach((r) => {
      const s = scoreStats(raw, d_k, r.scaled);
      r.tr.classList.toggle("ac-selected", r.scaled === scaled);
      show(r.spread, fixed(s.spread, 2), s.spread);
      show(r.theory, r.scaled ? "1" : `√${d_k} = ${fixed(Math.sqrt(d_k), 2)}`);
      show(r.maxWeight, fixed(s.maxWeight, 3), s.maxWeight);
      show(r.entropy, fixed(s.entropy, 3), s.entropy);
      if (r.scaled !== scaled) return;
      drawStrip(s.scores.flat());
      s.weights[0].forEach((w, j) => {
        show(weightCells[j].text, fixed(w, 2), w);
        weightCells[j].bar.firstChild.style.height = `${(100 * w).toFixed(2)}%`;
      });
      canvas.setAttribute("aria-label", `${s.scores.flat().length} scores spread with standard deviation ${fixed(s.spread, 2)}`);
      show(root.querySelector('[data-role="strip-caption"]'),
        `Each dot is one score ${scaled ? "q·k / √d_k" : "q·k"}, on an axis from −${AXIS} to ${AXIS}.`);
    });
  }

  const state = bind(model, ["d_k", "scaled"], update);
  update();
  return state.dispose;
}

export default { render };
