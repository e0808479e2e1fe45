// Explorer 7: the roofline. Context length, batch, attention layout and dtype in;
// where prefill and one decoding step of a Llama 3 8B-sized decoder land against
// this machine's two ceilings out, with their FLOPs, bytes and least time.
// The counts are attention_course.chapters.roofline.step_cost's: the state carries
// the layouts' plain fields, the model's sizes and each dtype's item size, and the
// ceilings measured in Python when the explorer was made.
// State (attention_course.explorers.RooflineExplorer): context, batch, head_layout, dtype,
// bandwidth (bytes/s), flops (FLOP/s), measured, layouts, model, itemsizes, limits.

import { bytesText, fixed, si } from "./format.js";
import { bind, dtypeSelect, entryNote, h, labelled, onNumber, show, showNumber, svgElement, wholeRule } from "./ui.js";

const LAYOUT_TEXT = {
  MHA: "MHA: a key/value head per query head",
  GQA: "GQA: 4 query heads share one",
  MQA: "MQA: one key/value head for all",
  MLA: "MLA: one latent per token",
};

/** What one layer caches and computes per token for a layout (AttentionLayout's properties). */
export function layoutSizes(c) {
  const mla = c.kv_lora_rank > 0;
  return {
    cachedPerToken: mla ? c.kv_lora_rank + c.qk_rope_head_dim : 2 * c.n_kv_heads * c.head_dim,
    scoreSize: mla ? c.kv_lora_rank + c.qk_rope_head_dim : c.head_dim,
    mixSize: mla ? c.kv_lora_rank : c.head_dim,
  };
}

/** Numbers in one layer's attention projections: W_q, W_k, W_v, W_o, or MLA's W_q, W_dkv, W_uk, W_uv, norm, W_o. */
export function attentionWeights(c, dModel) {
  const h = c.n_heads; const d = c.head_dim;
  if (c.kv_lora_rank > 0) {
    const r = c.kv_lora_rank; const rope = c.qk_rope_head_dim;
    return dModel * h * (d + rope) + dModel * (r + rope) + 2 * r * h * d + r + h * d * dModel;
  }
  return dModel * h * d + 2 * dModel * c.n_kv_heads * d + h * d * dModel;
}

/** FLOPs and bytes of one forward call: nNew tokens of each of `batch` requests after nPast cached (step_cost). */
export function stepCost(c, model, nNew, nPast, batch, size) {
  const { cachedPerToken, scoreSize, mixSize } = layoutSizes(c);
  const L = c.n_layers;
  const weights = L * (attentionWeights(c, model.d_model) + 3 * model.d_model * model.d_ff + 2 * model.d_model)
    + model.d_model + model.d_model * model.vocab_size;
  const norms = L * 2 * model.d_model + model.d_model + c.kv_lora_rank * L;
  const tokens = nNew * batch;
  const weightFlops = 2 * (weights - norms) * tokens; // every matrix multiplies every token
  const weightBytes = (weights + tokens * model.d_model) * size; // read once for the batch; one embedding row a token
  const pairs = nNew * nPast + (nNew * (nNew + 1)) / 2; // (query, key) pairs under the causal mask
  const attentionFlops = L * batch * c.n_heads * pairs * 2 * (scoreSize + mixSize);
  const numbers = (nPast + nNew) * cachedPerToken + nNew * cachedPerToken + nNew * c.n_heads * (scoreSize + mixSize);
  const attentionBytes = L * batch * numbers * size; // the cache read, new keys and values, queries and outputs
  return { flops: weightFlops + attentionFlops, bytes: weightBytes + attentionBytes, cacheBytes: attentionBytes, weightBytes };
}

/** Everything the explorer shows, from its state; pure (the tests call it). */
export function computeRoofline({ context, batch, head_layout, dtype, bandwidth, flops, layouts, model, itemsizes }) {
  const c = layouts.find((x) => x.name === head_layout);
  const size = itemsizes[dtype];
  const ridge = flops / bandwidth;
  const out = { ridge };
  for (const [phase, nNew, nPast] of [["prefill", context, 0], ["decode", 1, context]]) {
    const cost = stepCost(c, model, nNew, nPast, batch, size);
    const intensity = cost.flops / cost.bytes;
    out[phase] = {
      flops: cost.flops, bytes: cost.bytes, intensity,
      seconds: Math.max(cost.flops / flops, cost.bytes / bandwidth),
      attainable: Math.min(flops, bandwidth * intensity),
      bound: intensity < ridge ? "memory" : "compute",
      cacheBytes: cost.cacheBytes, weightBytes: cost.weightBytes,
    };
  }
  return out;
}

/** Seconds as "1.20 s", "8.23 ms" or "35.0 µs". */
export function timeText(s) {
  if (s >= 1) return `${fixed(s, 2)} s`;
  if (s >= 1e-3) return `${fixed(s * 1e3, 2)} ms`;
  return `${fixed(s * 1e6, 1)} µs`;
}

function render({ model, el }) {
  const limits = model.get("limits");
  const inputs = {};
  const notes = {};
  for (const name of ["context", "batch"]) {
    inputs[name] = h("input", { type: "number", min: 1, max: limits[name], step: 1, "data-role": name,
      oninput: onNumber((x) => Number.isInteger(x) && x >= 1 && x <= limits[name], (x) => state.set({ [name]: x }),
        () => clear()) });
    notes[name] = entryNote(inputs[name], wholeRule(1, limits[name]));
  }
  const layoutSelect = h("select", { "data-role": "head_layout", onchange: () => state.set({ head_layout: layoutSelect.value }) },
    model.get("layouts").map((x) => h("option", { value: x.name }, LAYOUT_TEXT[x.name] ?? x.name)));
  const dtypeMenu = dtypeSelect(model.get("itemsizes"), (dtype) => state.set({ dtype }));

  const out = {};
  const cell = (role) => { out[role] = h("td", { "data-role": role }); return out[role]; };
  const row = (label, key) => h("tr", {}, h("th", { scope: "row" }, label), cell(`prefill-${key}`), cell(`decode-${key}`));
  const table = h("table", { class: "ac-table" },
    h("caption", {}, "One forward call, every request of the batch"),
    h("thead", {}, h("tr", {}, [h("span", { class: "ac-sr" }, "quantity"), "prefill", "decode step"].map((x) => h("th", { scope: "col" }, x)))),
    h("tbody", {},
      row("FLOPs", "flops"), row("bytes moved", "bytes"), row("of which attention", "cache"),
      row("FLOPs per byte", "intensity"), row("bound by", "bound"), row("least time here", "time")));
  const ceilingsNote = h("p", { class: "ac-note", "data-role": "ceilings" });
  const status = h("p", { class: "ac-result", "data-role": "status", "aria-live": "polite" });

  // log-log axes: FLOPs per byte 0.1 .. 10^4, GFLOP/s from the memory roof at 0.1 to above the peak; a
  // narrow view box, so that its text stays legible when a phone shrinks the figure
  const W = 440; const H = 240; const left = 48; const right = 430; const top = 12; const bottom = 198;
  const xLo = 0.1; const xHi = 1e4;
  const svg = svgElement("svg", { viewBox: `0 0 ${W} ${H}`, role: "img" });
  const roof = svgElement("path", { class: "ac-line-plain", fill: "none" });
  const ridgeLine = svgElement("line", { class: "ac-marker", y1: top, y2: bottom });
  const dots = { prefill: svgElement("rect", { width: 10, height: 10, class: "ac-dot-tiled" }), decode: svgElement("circle", { r: 6, class: "ac-dot-plain" }) };
  const dotText = { prefill: svgElement("text", { "font-size": 13, class: "ac-tick" }), decode: svgElement("text", { "font-size": 13, class: "ac-tick" }) };
  dotText.prefill.textContent = "prefill";
  dotText.decode.textContent = "decode";
  const ticks = svgElement("g", {});
  svg.append(svgElement("line", { x1: left, x2: right, y1: bottom, y2: bottom, class: "ac-grid" }),
    svgElement("line", { x1: left, x2: left, y1: top, y2: bottom, class: "ac-grid" }), ticks, roof, ridgeLine,
    dots.prefill, dots.decode, dotText.prefill, dotText.decode);
  const xLabel = svgElement("text", { x: right, y: bottom + 32, "text-anchor": "end", "font-size": 13, class: "ac-tick" });
  xLabel.textContent = "FLOPs per byte (log scale)";
  const yLabel = svgElement("text", { x: left + 4, y: top + 10, "font-size": 13, class: "ac-tick" });
  yLabel.textContent = "GFLOP/s (log scale)";
  svg.append(xLabel, yLabel);

  const root = h("div", { class: "ac-explorer ac-roofline", "data-explorer": "roofline" },
    h("p", { class: "ac-title" }, "The roofline: what bounds prefill and a decoding step on this machine"),
    ceilingsNote,
    h("div", { class: "ac-controls" },
      labelled("context length (tokens)", inputs.context, notes.context),
      labelled("batch (requests)", inputs.batch, notes.batch),
      labelled("head layout", layoutSelect), labelled("dtype", dtypeMenu)),
    status, h("figure", { class: "ac-figure" }, svg), table);
  el.replaceChildren(root);

  function update() {
    const now = Object.fromEntries(["context", "batch", "head_layout", "dtype", "bandwidth", "flops", "layouts", "model",
      "itemsizes"].map((k) => [k, model.get(k)]));
    for (const name of ["context", "batch"]) showNumber(inputs[name], now[name]);
    layoutSelect.value = now.head_layout;
    dtypeMenu.value = now.dtype;
    const r = computeRoofline(now);
    show(ceilingsNote, `This machine: ${fixed(now.bandwidth / 1e9, 1)} GB/s from memory, ${fixed(now.flops / 1e9, 1)} GFLOP/s `
      + `of matrix products, so the ridge is at ${fixed(r.ridge, 1)} FLOPs per byte (${model.get("measured")}).`);
    for (const phase of ["prefill", "decode"]) {
      const p = r[phase];
      show(out[`${phase}-flops`], `${si(p.flops)}FLOP`, p.flops);
      show(out[`${phase}-bytes`], bytesText(p.bytes), p.bytes);
      show(out[`${phase}-cache`], bytesText(p.cacheBytes), p.cacheBytes);
      show(out[`${phase}-intensity`], fixed(p.intensity, 2), p.intensity);
      show(out[`${phase}-bound`], p.bound === "memory" ? "memory" : "arithmetic", p.bound === "memory" ? 0 : 1);
      show(out[`${phase}-time`], timeText(p.seconds), p.seconds);
    }
    show(status, `A decoding step does ${fixed(r.decode.intensity, 2)} FLOPs per byte it reads: `
      + `${r.decode.bound === "memory" ? "it waits for memory" : "it waits for arithmetic"}; `
      + `prefill of ${now.context.toLocaleString("en")} tokens does at most ${fixed(r.prefill.intensity, 1)} `
      + "(counted with every cached key and value read once; a tiled kernel reads them again for each tile of queries).");
    drawChart(now, r);
  }

  /** Blank the table and the points while an entry cannot be used: the note beside it says what it needs. */
  function clear() {
    for (const phase of ["prefill", "decode"]) {
      for (const key of ["flops", "bytes", "cache", "intensity", "bound", "time"]) show(out[`${phase}-${key}`], "–");
      for (const node of [dots[phase], dotText[phase]]) node.setAttribute("visibility", "hidden");
    }
    show(status, "Nothing is counted while an entry above cannot be used: the note beside it says what it needs.");
  }

  function drawChart(now, r) {
    for (const node of [...Object.values(dots), ...Object.values(dotText)]) node.removeAttribute("visibility");
    const yLo = (now.bandwidth * xLo) / 1e9 / 2; const yHi = (now.flops / 1e9) * 2;
    const x = (v) => left + ((right - left) * Math.log10(Math.min(Math.max(v, xLo), xHi) / xLo)) / Math.log10(xHi / xLo);
    const y = (g) => bottom - ((bottom - top) * Math.log10(g / yLo)) / Math.log10(yHi / yLo);
    const gflops = (i) => Math.min(now.flops, now.bandwidth * i) / 1e9;
    roof.setAttribute("d", `M${x(xLo).toFixed(1)},${y(gflops(xLo)).toFixed(1)}L${x(r.ridge).toFixed(1)},${y(gflops(r.ridge)).toFixed(1)}`
      + `L${x(xHi).toFixed(1)},${y(gflops(xHi)).toFixed(1)}`);
    ridgeLine.setAttribute("x1", x(r.ridge).toFixed(1));
    ridgeLine.setAttribute("x2", x(r.ridge).toFixed(1));
    for (const phase of ["prefill", "decode"]) {
      const px = x(r[phase].intensity); const py = y(r[phase].attainable / 1e9);
      if (phase === "prefill") { dots.prefill.setAttribute("x", (px - 5).toFixed(1)); dots.prefill.setAttribute("y", (py - 5).toFixed(1)); }
      else { dots.decode.setAttribute("cx", px.toFixed(1)); dots.decode.setAttribute("cy", py.toFixed(1)); }
      const before = px > right - 70; // label on the left near the right edge
      dotText[phase].setAttribute("x", (before ? px - 10 : px + 10).toFixed(1));
      dotText[phase].setAttribute("y", (py + 18).toFixed(1)); // below the roof, which rises to the right
      dotText[phase].setAttribute("text-anchor", before ? "end" : "start");
    }
    const marks = [];
    for (let e = -1; e <= 4; e++) {
      const anchor = e === 4 ? "end" : "middle"; // the last label ends at the axis' end
      const t = svgElement("text", { x: x(10 ** e).toFixed(1), y: bottom + 16, "text-anchor": anchor, "font-size": 13, class: "ac-tick" });
      t.textContent = ["0.1", "1", "10", "100", "1k", "10k"][e + 1];
      marks.push(t);
    }
    for (let e = Math.ceil(Math.log10(yLo)); e <= Math.floor(Math.log10(yHi)); e++) {
      const t = svgElement("text", { x: left - 6, y: (y(10 ** e) + 4).toFixed(1), "text-anchor": "end", "font-size": 13, class: "ac-tick" });
      t.textContent = si(10 ** e);
      marks.push(t);
    }
    ticks.replaceChildren(...marks);
    svg.setAttribute("aria-label", `Roofline of this machine: memory roof up to ${fixed(r.ridge, 1)} FLOPs per byte, then `
      + `${fixed(now.flops / 1e9, 1)} GFLOP/s. Prefill at ${fixed(r.prefill.intensity, 1)} FLOPs per byte is ${r.prefill.bound}-bound; `
      + `the decoding step at ${fixed(r.decode.intensity, 2)} is ${r.decode.bound}-bound.`);
  }

  const state = bind(model, ["context", "batch", "head_layout", "dtype", "bandwidth", "flops"], update);
  update();
  return state.dispose;
}

export default { render };
