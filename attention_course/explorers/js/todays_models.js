// Explorer 8: today's models. A published configuration (or your own) in.
// Out: the bytes its cache keeps per token and for the whole context, kept
// four ways (a key and a value per query head: MHA; per key/value head: GQA;
// one for all heads: MQA; a latent and one RoPE key per token: MLA), and how
// its RoPE rule (default, linear, dynamic, llama3, yarn) rescales each pair's
// frequency against the pair's wavelength.
// The counts are attention_course.decoder.cache_bytes's and the frequencies
// attention_course.core.rope_scaling's: the state carries each dtype's item size
// and the published configurations, so nothing here is typed twice.
// State (attention_course.explorers.TodaysModelsExplorer): preset, n_layers, n_heads,
// n_kv_heads, head_dim, v_head_dim, kv_lora_rank, qk_rope_head_dim, window,
// sliding_layers, dtype, context, rope_type, rope_base, rope_dim, factor,
// original_context, low_freq_factor, high_freq_factor, beta_fast, beta_slow,
// truncate, mscale, mscale_all_dim, presets, itemsizes, limits.

import { bytesText, fixed, inputText } from "./format.js";
import {
  bind, dtypeSelect, entryNote, h, labelled, markInvalid, onNumber, presetSelect, show, showNumber, svgElement, wholeRule,
} from "./ui.js";

const CACHE_NUMBERS = [
  ["n_layers", "layers L"],
  ["n_heads", "query heads h_q"],
  ["n_kv_heads", "key/value heads (GQA)"],
  ["head_dim", "key size d_k"],
  ["v_head_dim", "value size d_v"],
  ["kv_lora_rank", "latent r (MLA)"],
  ["qk_rope_head_dim", "RoPE key d_rope (MLA)"],
  ["window", "sliding window (0 = none)"],
  ["sliding_layers", "layers with the window"],
  ["context", "context (tokens)"],
];
const ROPE_NUMBERS = [
  ["rope_base", "base (rope_theta)"],
  ["rope_dim", "rotated size d"],
  ["factor", "factor"],
  ["original_context", "trained context (tokens)"],
  ["low_freq_factor", "llama3: low-frequency factor"],
  ["high_freq_factor", "llama3: high-frequency factor"],
  ["beta_fast", "YaRN: beta_fast"],
  ["beta_slow", "YaRN: beta_slow"],
];
const RULES = {
  default: "default: base^(−2i/d)",
  linear: "linear: every pair slowed",
  dynamic: "dynamic: a larger base past the trained context",
  llama3: "llama3: slowed by wavelength",
  yarn: "yarn: slowed by turns, a ramp between",
};
const REFUSED = "Nothing is counted here while an entry above cannot be used: the note beside it says what it needs.";
const LAYOUT_TEXT = { MHA: "MHA", GQA: "GQA", MQA: "MQA", MLA: "MLA" };

/** Why the attention shapes cannot be (cache_error in Python), or null. */
export function cacheError({ n_heads, n_kv_heads, head_dim, qk_rope_head_dim, n_layers, sliding_layers }) {
  if (n_heads % n_kv_heads !== 0) {
    return `${n_heads} query heads cannot share ${n_kv_heads} key/value heads equally: h_q must be a multiple of h_kv.`;
  }
  if (qk_rope_head_dim > head_dim) {
    return `The RoPE key (${qk_rope_head_dim}) is part of each head's key (${head_dim}): it cannot be larger.`;
  }
  if (sliding_layers > n_layers) return `${sliding_layers} sliding layers, but only ${n_layers} layers.`;
  return null;
}

/** Why the RoPE rule cannot be computed (rope_error in Python), or null. */
export function ropeError({ rope_type, low_freq_factor, high_freq_factor, beta_fast, beta_slow }) {
  if (rope_type === "llama3" && !(high_freq_factor > low_freq_factor)) {
    return "llama3 needs a high-frequency factor larger than the low-frequency factor.";
  }
  if (rope_type === "yarn" && !(beta_fast > beta_slow)) return "YaRN needs beta_fast larger than beta_slow.";
  return null;
}

/** Bytes of the cache: per layer and token `numbers`, sliding layers keeping window − 1 tokens (cache_bytes). */
function cacheBytes(numbers, s, tokens, keepWindow, size) {
  const slide = s.window && keepWindow ? Math.min(tokens, s.window - 1) : tokens;
  const kept = s.sliding_layers * (s.window ? slide : tokens) + (s.n_layers - s.sliding_layers) * tokens;
  return numbers * kept * size;
}

/** The cache of each layout, per token and after `context` tokens (cache_bytes with and without the latent). */
export function cacheRows(s) {
  const size = s.itemsizes[s.dtype];
  return ["MHA", "GQA", "MQA", "MLA"].map((name) => {
    const kvHeads = { MHA: s.n_heads, GQA: s.n_kv_heads, MQA: 1, MLA: 0 }[name];
    const numbers = name === "MLA" ? s.kv_lora_rank + s.qk_rope_head_dim : kvHeads * (s.head_dim + s.v_head_dim);
    return { name, kv_heads: kvHeads, per_token: cacheBytes(numbers, s, 1, false, size),
      total: cacheBytes(numbers, s, s.context, true, size) };
  });
}

/** RoPE's frequencies theta_i = 1 / base^(2i/d), i = 0..d/2-1 (rope_frequencies). */
export function ropeFrequencies(d, base) {
  return Array.from({ length: d / 2 }, (_, i) => 1 / base ** ((2 * i) / d));
}

/** 0.1 * mscale * ln(scale) + 1, or 1 for scale <= 1 (yarn_mscale). */
export function yarnMscale(scale, mscale = 1) {
  return scale <= 1 ? 1 : 0.1 * mscale * Math.log(scale) + 1;
}

function llama3(d, s) {
  const L = s.original_context;
  const lowWavelength = L / s.low_freq_factor;
  const highWavelength = L / s.high_freq_factor;
  return ropeFrequencies(d, s.rope_base).map((theta) => {
    const wavelength = (2 * Math.PI) / theta;
    const scaled = wavelength > lowWavelength ? theta / s.factor : theta;
    if (wavelength < highWavelength || wavelength > lowWavelength) return scaled;
    const smooth = (L / wavelength - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
    return ((1 - smooth) * scaled) / s.factor + smooth * scaled;
  });
}

function yarn(d, s) {
  const L = s.original_context;
  const dimension = (turns) => (d * Math.log(L / (turns * 2 * Math.PI))) / (2 * Math.log(s.rope_base));
  let low = dimension(s.beta_fast);
  let high = dimension(s.beta_slow);
  if (s.truncate) { low = Math.floor(low); high = Math.ceil(high); }
  low = Math.max(low, 0);
  high = Math.min(high, d - 1);
  if (low === high) high += 0.001; // no division by zero, as transformers does
  return ropeFrequencies(d, s.rope_base).map((theta, i) => {
    const ramp = Math.min(1, Math.max(0, (i - low) / (high - low))); // 0: kept, 1: divided by factor
    return (theta / s.factor) * ramp + theta * (1 - ramp);
  });
}

/** (frequencies after the rule, attention factor) for d rotated coordinates (RopeScaling.frequencies). */
export function scaledFrequencies(s, d, seqLen) {
  if (s.rope_type === "linear") return [ropeFrequencies(d, s.rope_base).map((t) => t / s.factor), 1];
  if (s.rope_type === "dynamic") {
    const L = s.original_context;
    const n = Math.max(seqLen, L);
    const base = s.rope_base * ((s.factor * n) / L - (s.factor - 1)) ** (d / (d - 2));
    return [ropeFrequencies(d, base), 1];
  }
  if (s.rope_type === "llama3") return [llama3(d, s), 1];
  if (s.rope_type === "yarn") {
    const factor = s.mscale && s.mscale_all_dim ? yarnMscale(s.factor, s.mscale) / yarnMscale(s.factor, s.mscale_all_dim)
      : yarnMscale(s.factor);
    return [yarn(d, s), factor];
  }
  return [ropeFrequencies(d, s.rope_base), 1];
}

/** Each pair's wavelength and ratio, and the pairs kept, slowed by the factor, or in between (rescaled_pairs). */
export function ropeNumbers(s) {
  const d = s.rope_dim;
  const theta = ropeFrequencies(d, s.rope_base);
  const [scaled, attentionFactor] = scaledFrequencies(s, d, s.context);
  const ratio = scaled.map((x, i) => x / theta[i]);
  const close = (a, b) => Math.abs(a - b) <= 1e-12 * Math.abs(b);
  const kept = ratio.map((r) => close(r, 1));
  const slowed = ratio.map((r, i) => close(r, 1 / s.factor) && !kept[i]);
  const count = (xs) => xs.filter(Boolean).length;
  const wavelength = theta.map((x) => (2 * Math.PI) / x);
  return {
    theta, scaled, ratio, wavelength, kept: count(kept), slowed: count(slowed),
    between: d / 2 - count(kept) - count(slowed), attention_factor: attentionFactor,
    // pairs turning less than once: in the trained context before the rule, in the whole context after it
    unturned_trained: count(wavelength.map((w) => w > s.original_context)),
    unturned_context: count(wavelength.map((w, i) => w / ratio[i] > s.context)),
  };
}

/** Everything the explorer shows, from its state; pure (the tests call it). Each part is {error} when impossible. */
export function computeTodaysModels(state) {
  const cacheProblem = cacheError(state);
  const ropeProblem = ropeError(state);
  const own = state.presets.find((p) => p.name === state.preset)?.layout ?? null;
  return {
    cache: cacheProblem ? { error: cacheProblem } : { own, rows: cacheRows(state) },
    rope: ropeProblem ? { error: ropeProblem } : ropeNumbers(state),
  };
}

/** Tokens as "4,096", "1.2M" past a million. */
function tokensText(x) {
  return x >= 1e6 ? `${fixed(x / 1e6, 1)}M` : Math.round(x).toLocaleString("en");
}

function render({ model, el }) {
  const limits = model.get("limits");
  const inputs = {};
  const notes = {};
  // an entry that cannot be used blanks what depends on it: the cache, RoPE's pairs, or both (the context)
  const refused = (name) => () => {
    if (name === "context" || CACHE_NUMBERS.some(([n]) => n === name)) clearCache(REFUSED);
    if (name === "context" || ROPE_NUMBERS.some(([n]) => n === name)) clearRope(REFUSED);
  };
  const changed = (name) => onNumber((x) => valid(name, x), (x) => state.set({ [name]: x, preset: "custom" }),
    refused(name));
  for (const [name] of CACHE_NUMBERS) {
    const [low, high] = limits.ints[name];
    inputs[name] = h("input", { type: "number", min: low, max: high, step: 1, "data-role": name, oninput: changed(name) });
    notes[name] = entryNote(inputs[name], wholeRule(low, high));
  }
  for (const [name] of ROPE_NUMBERS) {
    const bounds = limits.ints[name] ?? limits.floats[name];
    inputs[name] = h("input", { type: "number", min: bounds[0], max: bounds[1], step: name === "rope_dim" ? 2 : "any",
      "data-role": name, oninput: changed(name) });
    notes[name] = entryNote(inputs[name], limits.ints[name] ? wholeRule(bounds[0], bounds[1], name === "rope_dim")
      : `a number ${bounds[2] ? "from" : "above"} ${bounds[0]} ${bounds[2] ? "to" : "and at most"} ${bounds[1].toLocaleString("en")}`);
  }
  const presetMenu = presetSelect(model.get("presets"), (changes) => state.set(changes), ["layout"]);
  const dtypeMenu = dtypeSelect(model.get("itemsizes"), (dtype) => state.set({ dtype }));
  const ruleSelect = h("select", { "data-role": "rope_type", onchange: () => state.set({ rope_type: ruleSelect.value, preset: "custom" }) },
    Object.entries(RULES).map(([name, text]) => h("option", { value: name }, text)));
  const truncateBox = h("input", { type: "checkbox", "data-role": "truncate",
    onchange: () => state.set({ truncate: truncateBox.checked, preset: "custom" }) });

  const out = {};
  const cell = (role, attrs = {}) => { out[role] = h("td", { "data-role": role, ...attrs }); return out[role]; };
  const rowHead = (role) => { out[role] = h("th", { scope: "row", "data-role": role }); return out[role]; };
  const cacheRowsEls = {};
  const cacheTable = h("table", { class: "ac-table", "data-role": "cache-table" },
    h("caption", {}, "Keys and values kept, all layers"),
    h("thead", {}, h("tr", {}, ["layout", "per token", "whole context"].map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {}, ["MHA", "GQA", "MQA", "MLA"].map((name) => {
      cacheRowsEls[name] = h("tr", { "data-layout": name }, rowHead(`${name}-name`), cell(`${name}-per-token`), cell(`${name}-total`));
      return cacheRowsEls[name];
    })));
  const cacheStatus = h("p", { class: "ac-result", "data-role": "cache-status", "aria-live": "polite" });
  const cacheNote = h("p", { class: "ac-note", "data-role": "cache-note" });

  const ropeTable = h("table", { class: "ac-table", "data-role": "rope-table" },
    h("caption", {}, "RoPE's pairs under the rule"),
    h("tbody", {},
      h("tr", {}, h("th", { scope: "row" }, "pairs kept"), cell("kept")),
      h("tr", {}, h("th", { scope: "row" }, "pairs slowed by the factor"), cell("slowed")),
      h("tr", {}, h("th", { scope: "row" }, "pairs in between"), cell("between")),
      h("tr", {}, h("th", { scope: "row" }, "slowest pair, tokens per turn"), cell("slowest")),
      h("tr", {}, h("th", { scope: "row" }, "attention factor (q and k)"), cell("attention-factor"))));
  const ropeStatus = h("p", { class: "ac-result", "data-role": "rope-status", "aria-live": "polite" });

  // log-log axes: tokens per turn (before the rule) against theta after / theta before; a narrow
  // view box, so that its text stays legible when a phone shrinks the figure
  const W = 440; const H = 244; const left = 44; const right = 424; const top = 28; const bottom = 200;
  const svg = svgElement("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "data-role": "rope-chart" });
  const ticks = svgElement("g", {});
  const trained = svgElement("line", { class: "ac-marker", y1: top, y2: bottom });
  const dots = svgElement("g", {});
  const xLabel = svgElement("text", { x: right, y: bottom + 38, "text-anchor": "end", "font-size": 13, class: "ac-tick" });
  xLabel.textContent = "tokens per turn before the rule (log scale)";
  const yLabel = svgElement("text", { x: 4, y: 14, "font-size": 13, class: "ac-tick" }); // above the plot
  yLabel.textContent = "frequency after / before";
  svg.append(svgElement("line", { x1: left, x2: right, y1: bottom, y2: bottom, class: "ac-grid" }),
    svgElement("line", { x1: left, x2: left, y1: top, y2: bottom, class: "ac-grid" }), ticks, trained, dots, xLabel, yLabel);

  const root = h("div", { class: "ac-explorer ac-todays-models", "data-explorer": "todays-models" },
    h("p", { class: "ac-title" }, "Today's models: the cache per token, and RoPE for longer contexts"),
    h("div", { class: "ac-controls" }, labelled("configuration", presetMenu)),
    h("fieldset", {}, h("legend", {}, "The cache"),
      h("div", { class: "ac-controls" }, ...CACHE_NUMBERS.map(([name, label]) => labelled(label, inputs[name], notes[name])),
        labelled("dtype", dtypeMenu))),
    cacheStatus, cacheTable, cacheNote,
    h("fieldset", {}, h("legend", {}, "RoPE's frequencies"),
      h("div", { class: "ac-controls" }, labelled("rule", ruleSelect),
        ...ROPE_NUMBERS.map(([name, label]) => labelled(label, inputs[name], notes[name])),
        labelled("YaRN: round the ramp to whole pairs", truncateBox))),
    ropeStatus, h("figure", { class: "ac-figure" }, svg), ropeTable);
  el.replaceChildren(root);

  function valid(name, x) {
    if (limits.ints[name]) {
      const [low, high] = limits.ints[name];
      return Number.isInteger(x) && x >= low && x <= high && (name !== "rope_dim" || x % 2 === 0);
    }
    const [low, high, lowIncluded] = limits.floats[name];
    return (lowIncluded ? x >= low : x > low) && x <= high;
  }

  const NAMES = ["preset", ...CACHE_NUMBERS.map(([n]) => n), "dtype", "rope_type", ...ROPE_NUMBERS.map(([n]) => n),
    "truncate", "mscale", "mscale_all_dim"];

  function update() {
    const now = Object.fromEntries([...NAMES, "itemsizes", "presets"].map((k) => [k, model.get(k)]));
    for (const [name] of [...CACHE_NUMBERS, ...ROPE_NUMBERS]) showNumber(inputs[name], now[name]);
    presetMenu.value = now.preset;
    dtypeMenu.value = now.dtype;
    ruleSelect.value = now.rope_type;
    truncateBox.checked = now.truncate;
    const r = computeTodaysModels(now);
    showCache(now, r.cache);
    showRope(now, r.rope);
  }

  function showCache(now, c) {
    markInvalid(inputs.n_kv_heads, Boolean(c.error) && now.n_heads % now.n_kv_heads !== 0);
    markInvalid(inputs.qk_rope_head_dim, Boolean(c.error) && now.qk_rope_head_dim > now.head_dim);
    markInvalid(inputs.sliding_layers, Boolean(c.error) && now.sliding_layers > now.n_layers);
    if (c.error) {
      clearCache(c.error);
      return;
    }
    const byName = Object.fromEntries(c.rows.map((row) => [row.name, row]));
    for (const row of c.rows) {
      const what = row.name === "MLA" ? `${now.kv_lora_rank} + ${now.qk_rope_head_dim}` : `h_kv = ${row.kv_heads}`;
      show(out[`${row.name}-name`], `${row.name} (${what})${row.name === c.own ? ", this model" : ""}`);
      show(out[`${row.name}-per-token`], bytesText(row.per_token), row.per_token);
      show(out[`${row.name}-total`], bytesText(row.total), row.total);
      cacheRowsEls[row.name].classList.toggle("ac-selected", row.name === c.own);
    }
    const mha = byName.MHA.per_token; const mla = byName.MLA.per_token;
    const own = c.own ? byName[c.own] : null;
    show(cacheStatus, (own ? `${now.preset} keeps ${bytesText(own.per_token)} per token (${c.own}), `
      + `${bytesText(own.total)} for ${tokensText(now.context)} tokens. ` : "")
      + `MLA keeps ${fixed(mha / mla, 1)} times less than MHA per token.`);
    const slide = now.window && now.sliding_layers
      ? ` ${now.sliding_layers} layers keep only the last ${tokensText(now.window - 1)} tokens (window − 1).` : "";
    show(cacheNote, `Per layer and token: h_kv × (d_k + d_v) numbers, ${now.head_dim} + ${now.v_head_dim} here; `
      + `MLA: r + d_rope, whatever the heads; ${model.get("itemsizes")[now.dtype]} bytes each.${slide}`);
  }

  /** Blank the cache's table and say why: the shapes cannot be, or an entry is not used. */
  function clearCache(why) {
    show(cacheStatus, why);
    show(cacheNote, "");
    for (const name of ["MHA", "GQA", "MQA", "MLA"]) {
      show(out[`${name}-name`], LAYOUT_TEXT[name]);
      show(out[`${name}-per-token`], "–");
      show(out[`${name}-total`], "–");
      cacheRowsEls[name].classList.remove("ac-selected");
    }
  }

  /** Blank RoPE's table and chart and say why. */
  function clearRope(why) {
    show(ropeStatus, why);
    for (const role of ["kept", "slowed", "between", "slowest", "attention-factor"]) show(out[role], "–");
    dots.replaceChildren();
  }

  function showRope(now, p) {
    markInvalid(inputs.high_freq_factor, Boolean(p.error) && now.rope_type === "llama3");
    markInvalid(inputs.beta_fast, Boolean(p.error) && now.rope_type === "yarn");
    if (p.error) {
      clearRope(p.error);
      return;
    }
    const last = p.wavelength.length - 1;
    show(out.kept, String(p.kept), p.kept);
    show(out.slowed, String(p.slowed), p.slowed);
    show(out.between, String(p.between), p.between);
    show(out.slowest, `${tokensText(p.wavelength[last])} → ${tokensText(p.wavelength[last] / p.ratio[last])}`,
      p.wavelength[last] / p.ratio[last]);
    show(out["attention-factor"], fixed(p.attention_factor, 4), p.attention_factor);
    // the pairs that never complete a turn: over the trained context before the rule, over the whole context after it
    show(ropeStatus, `${now.rope_dim / 2} pairs: ${p.kept} kept, ${p.slowed} slowed ${inputText(now.factor)} times, `
      + `${p.between} between. Before the rule ${p.unturned_trained} turn less than once in the trained `
      + `${tokensText(now.original_context)} tokens; after it, ${p.unturned_context} turn less than once in the `
      + `${tokensText(now.context)} tokens of the context.`);
    drawChart(now, p);
  }

  function drawChart(now, p) {
    const xLo = 1; const xHi = 10 ** Math.ceil(Math.log10(2 * Math.max(...p.wavelength, now.original_context)));
    const yHi = 1.5; const yLo = Math.min(...p.ratio, 1 / now.factor, 0.5) / 1.5;
    const x = (v) => left + ((right - left) * Math.log10(v / xLo)) / Math.log10(xHi / xLo);
    const y = (v) => bottom - ((bottom - top) * Math.log10(v / yLo)) / Math.log10(yHi / yLo);
    trained.setAttribute("x1", x(now.original_context).toFixed(1));
    trained.setAttribute("x2", x(now.original_context).toFixed(1));
    dots.replaceChildren(...p.wavelength.map((w, i) => svgElement("circle", { cx: x(w).toFixed(1), cy: y(p.ratio[i]).toFixed(1), r: 3.5, class: "ac-dot" })));
    const marks = [];
    const decades = Math.round(Math.log10(xHi));
    for (let e = 1; e <= decades; e += decades > 6 ? 2 : 1) {
      const anchor = e === decades ? "end" : "middle"; // the last label ends at the axis' end
      const t = svgElement("text", { x: x(10 ** e).toFixed(1), y: bottom + 18, "text-anchor": anchor, "font-size": 13, class: "ac-tick" });
      t.textContent = `${10 ** (e % 3)}${["", "k", "M", "G", "T", "P"][Math.floor(e / 3)]}`;
      marks.push(t);
    }
    const levels = now.factor > 1 ? [[1, "1"], [1 / now.factor, `1/${inputText(now.factor)}`]] : [[1, "1"]];
    for (const [v, text] of levels) {
      const t = svgElement("text", { x: left - 6, y: (y(v) + 4).toFixed(1), "text-anchor": "end", "font-size": 13, class: "ac-tick" });
      t.textContent = text;
      marks.push(t, svgElement("line", { x1: left, x2: right, y1: y(v).toFixed(1), y2: y(v).toFixed(1), class: "ac-grid" }));
    }
    const mark = x(now.original_context);
    const before = mark > right - 110; // near the right end: the label goes left of the line
    // above the plot, where no dot can lie under it (a pair's ratio is at most 1, below the top)
    const label = svgElement("text", { x: (before ? mark - 4 : mark + 4).toFixed(1), y: top - 4, "font-size": 13,
      "text-anchor": before ? "end" : "start", class: "ac-tick" });
    label.textContent = "trained context";
    marks.push(label);
    ticks.replaceChildren(...marks);
    svg.setAttribute("aria-label", `RoPE's ${now.rope_dim / 2} pairs under the ${now.rope_type} rule: frequency after the rule `
      + `divided by before, against tokens per turn. ${p.kept} kept, ${p.slowed} slowed by ${inputText(now.factor)}, `
      + `${p.between} between; the trained context is ${tokensText(now.original_context)} tokens.`);
  }

  const state = bind(model, NAMES, update);
  update();
  return state.dispose;
}

export default { render };
