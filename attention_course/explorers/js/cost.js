// Explorer 4: cost. n, d, dtype and the tile size in; FLOPs and memory of the
// plain and the tiled computation out, with the n^2 growth drawn on log-log axes.
// The counts are attention_course.cost's: the state carries its constants
// (softmax_flops_per_score, itemsize per dtype), so nothing here is typed twice.
// State (attention_course.explorers.CostExplorer): n, d, dtype, block_size,
// itemsizes ({dtype: bytes}), softmax_flops_per_score, n_max, d_max.

import { bytesText } from "./format.js";
import { bind, dtypeSelect, entryNote, h, labelled, onNumber, show, showNumber, svgElement, wholeRule } from "./ui.js";

/** attention_flops(n, n, d, d): the three parts and their total (exact below 2^53). */
export function attentionFlops(n, d, softmaxFlopsPerScore) {
  const pairs = n * n; // one score per (query, key) pair
  const scores = 2 * pairs * d; // Q K^T
  const softmax = softmaxFlopsPerScore * pairs;
  const mix = 2 * pairs * d; // weights @ V
  return { scores, softmax, mix, total: scores + softmax + mix };
}

/** Everything the explorer shows, from its state; pure (the tests call it). */
export function computeCost({ n, d, dtype, block_size, itemsizes, softmax_flops_per_score }) {
  const itemsize = itemsizes[dtype];
  const flops = attentionFlops(n, d, softmax_flops_per_score);
  const b = Math.min(block_size, n);
  const tiles = Math.ceil(n / block_size);
  return {
    flops, // the same arithmetic for both: tiling changes where scores live, not how many there are
    plainScoreBytes: n * n * itemsize, // score_matrix_bytes(n, n, dtype): the whole n x n matrix
    tiledScoreBytes: b * b * itemsize, // score_matrix_bytes(b, b, dtype): one tile at a time
    tilePairs: tiles * tiles, // tile_count(n, n, block_size)
    ioBytes: 4 * n * d * itemsize, // Q, K, V and the output, n x d each, for both
  };
}

/** A count with SI prefixes: 1.5e9 -> "1.50 G". */
export function countText(x) {
  const prefixes = ["", "k", "M", "G", "T", "P", "E"];
  let i = 0;
  let v = x;
  while (v >= 1000 && i < prefixes.length - 1) { v /= 1000; i++; }
  return i === 0 ? String(v) : `${v.toFixed(2)} ${prefixes[i]}`;
}

function render({ model, el }) {
  const nMax = model.get("n_max");
  const dMax = model.get("d_max");
  const nInput = h("input", { type: "number", min: 1, max: nMax, step: 1, "data-role": "n", oninput: onInt("n", nMax) });
  const dInput = h("input", { type: "number", min: 1, max: dMax, step: 1, "data-role": "d", oninput: onInt("d", dMax) });
  const bInput = h("input", { type: "number", min: 1, max: nMax, step: 1, "data-role": "block_size", oninput: onInt("block_size", nMax) });
  const dtypeMenu = dtypeSelect(model.get("itemsizes"), (dtype) => state.set({ dtype }));

  const out = {};
  const cell = (role) => { out[role] = h("td", { "data-role": role }); return out[role]; };
  const table = h("table", { class: "ac-table" },
    h("caption", {}, "One attention head, n queries against n keys, d = d_k = d_v"),
    h("thead", {}, h("tr", {}, [h("span", { class: "ac-sr" }, "quantity"), "plain", "tiled"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {},
      h("tr", {}, h("th", { scope: "row" }, "FLOPs: Q Kᵀ + softmax + weights V"), cell("plain-flops"), cell("tiled-flops")),
      h("tr", {}, h("th", { scope: "row" }, "memory for the scores"), cell("plain-memory"), cell("tiled-memory")),
      h("tr", {}, h("th", { scope: "row" }, "Q, K, V and output (both)"), cell("io-memory"), h("td", {}, "same")),
      h("tr", {}, h("th", { scope: "row" }, "score tiles visited"), h("td", {}, "1 (the whole matrix)"), cell("tile-pairs"))));
  const growth = h("p", { class: "ac-note", "data-role": "growth", "aria-live": "polite" });

  // Log-log chart: score memory against n, plain (slope 2) and tiled (flat), 2^4..n_max.
  const W = 600; const H = 220; const left = 60; const bottom = 190; const top = 10; const right = 590;
  const nLo = 16; const nHi = nMax;
  const svg = svgElement("svg", { viewBox: `0 0 ${W} ${H}`, role: "img" });
  const plainPath = svgElement("path", { class: "ac-line-plain", fill: "none" });
  const tiledPath = svgElement("path", { class: "ac-line-tiled", fill: "none" });
  const marker = svgElement("line", { class: "ac-marker", y1: top, y2: bottom });
  const plainDot = svgElement("circle", { r: 4, class: "ac-dot-plain" });
  const tiledDot = svgElement("circle", { r: 4, class: "ac-dot-tiled" });
  svg.append(svgElement("line", { x1: left, x2: right, y1: bottom, y2: bottom, class: "ac-grid" }),
    svgElement("line", { x1: left, x2: left, y1: top, y2: bottom, class: "ac-grid" }), plainPath, tiledPath, marker, plainDot, tiledDot);
  for (let n = nLo; n <= nHi; n *= 16) {
    const t = svgElement("text", { y: bottom + 14, "text-anchor": "middle", "font-size": 11, class: "ac-tick" });
    t.textContent = n >= 2 ** 20 ? `${n / 2 ** 20}M` : n >= 1024 ? `${n / 1024}k` : String(n);
    t.dataset.n = n;
    svg.append(t);
  }
  const xLabel = svgElement("text", { x: right, y: bottom + 28, "text-anchor": "end", "font-size": 11, class: "ac-tick" });
  xLabel.textContent = "n (log scale)";
  const yLabels = [svgElement("text", { x: left - 4, y: top + 10, "text-anchor": "end", "font-size": 11, class: "ac-tick" }),
    svgElement("text", { x: left - 4, y: bottom, "text-anchor": "end", "font-size": 11, class: "ac-tick" })];
  const legend = svgElement("text", { x: left + 8, y: top + 12, "font-size": 12, class: "ac-tick" });
  legend.textContent = "memory for the scores: plain (n², solid) vs tiled (one tile, dashed)";
  svg.append(xLabel, ...yLabels, legend);

  const root = h("div", { class: "ac-explorer ac-cost", "data-explorer": "cost" },
    h("p", { class: "ac-title" }, "Cost: how the work and the memory of attention grow with n"),
    h("div", { class: "ac-controls" },
      labelled("n (tokens)", nInput, entryNote(nInput, wholeRule(1, nMax))),
      labelled("d (head size)", dInput, entryNote(dInput, wholeRule(1, dMax))),
      labelled("dtype", dtypeMenu), labelled("tile size b", bInput, entryNote(bInput, wholeRule(1, nMax)))),
    table, growth, h("figure", { class: "ac-figure" }, svg));
  el.replaceChildren(root);

  function onInt(name, max) {
    return onNumber((x) => Number.isInteger(x) && x >= 1 && x <= max, (x) => state.set({ [name]: x }), () => clear());
  }

  /** Blank the table and the points while an entry cannot be used: the note beside it says what it needs. */
  function clear() {
    for (const role of ["plain-flops", "tiled-flops", "plain-memory", "tiled-memory", "io-memory", "tile-pairs"]) {
      show(out[role], "–");
    }
    for (const node of [plainDot, tiledDot, marker]) node.setAttribute("visibility", "hidden");
    show(growth, "Nothing is counted while an entry above cannot be used: the note beside it says what it needs.");
  }

  function update() {
    const now = {
      n: model.get("n"), d: model.get("d"), dtype: model.get("dtype"), block_size: model.get("block_size"),
      itemsizes: model.get("itemsizes"), softmax_flops_per_score: model.get("softmax_flops_per_score"),
    };
    const r = computeCost(now);
    for (const [input, value] of [[nInput, now.n], [dInput, now.d], [bInput, now.block_size]]) showNumber(input, value);
    dtypeMenu.value = now.dtype;
    for (const node of [plainDot, tiledDot, marker]) node.removeAttribute("visibility");
    show(out["plain-flops"], countText(r.flops.total), r.flops.total);
    show(out["tiled-flops"], `${countText(r.flops.total)} (the same)`, r.flops.total);
    show(out["plain-memory"], bytesText(r.plainScoreBytes), r.plainScoreBytes);
    show(out["tiled-memory"], bytesText(r.tiledScoreBytes), r.tiledScoreBytes);
    show(out["io-memory"], bytesText(r.ioBytes), r.ioBytes);
    show(out["tile-pairs"], `${r.tilePairs} (${Math.ceil(now.n / now.block_size)} × ${Math.ceil(now.n / now.block_size)})`, r.tilePairs);
    const twice = computeCost({ ...now, n: 2 * now.n });
    show(growth, `Doubling n to ${2 * now.n} multiplies the FLOPs by ${(twice.flops.total / r.flops.total).toFixed(2)} `
      + `and the plain score memory by ${(twice.plainScoreBytes / r.plainScoreBytes).toFixed(2)}; `
      + `the tiled score memory by ${(twice.tiledScoreBytes / r.tiledScoreBytes).toFixed(2)}.`);
    drawChart(now);
  }

  function drawChart(now) {
    const ns = [];
    for (let n = nLo; n <= nHi; n *= 2) ns.push(n);
    const mem = (n) => computeCost({ ...now, n });
    const yMax = Math.log2(mem(nHi).plainScoreBytes);
    const yMin = Math.log2(Math.min(mem(nLo).plainScoreBytes, mem(nLo).tiledScoreBytes));
    const x = (n) => left + ((right - left) * Math.log2(n / nLo)) / Math.log2(nHi / nLo);
    const y = (bytes) => bottom - ((bottom - top) * (Math.log2(bytes) - yMin)) / (yMax - yMin);
    const path = (key) => ns.map((n, i) => `${i ? "L" : "M"}${x(n).toFixed(1)},${y(mem(n)[key]).toFixed(1)}`).join("");
    plainPath.setAttribute("d", path("plainScoreBytes"));
    tiledPath.setAttribute("d", path("tiledScoreBytes"));
    const r = mem(now.n);
    const xn = x(Math.min(Math.max(now.n, nLo), nHi)).toFixed(1);
    marker.setAttribute("x1", xn);
    marker.setAttribute("x2", xn);
    plainDot.setAttribute("cx", xn);
    plainDot.setAttribute("cy", y(r.plainScoreBytes).toFixed(1));
    tiledDot.setAttribute("cx", xn);
    tiledDot.setAttribute("cy", y(r.tiledScoreBytes).toFixed(1));
    svg.querySelectorAll("text[data-n]").forEach((t) => t.setAttribute("x", x(Number(t.dataset.n)).toFixed(1)));
    yLabels[0].textContent = bytesText(2 ** yMax);
    yLabels[1].textContent = bytesText(2 ** yMin);
    svg.setAttribute("aria-label", `At n = ${now.n} the plain computation stores ${bytesText(r.plainScoreBytes)} of scores, the tiled one ${bytesText(r.tiledScoreBytes)}`);
  }

  const state = bind(model, ["n", "d", "dtype", "block_size"], update);
  update();
  return state.dispose;
}

export default { render };
