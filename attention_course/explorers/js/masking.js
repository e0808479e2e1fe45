// Explorer 3: masks. A short padded sentence; the reader switches the causal and
// the padding mask on and off and picks a query token. Masked scores become
// -Infinity before the softmax, so masked keys get weight exactly 0.
// State (attention_course.explorers.MaskExplorer): tokens (n,), n_real (tokens
// after the first n_real are padding), query_vectors (n, d), key_vectors (n, d),
// causal, padding, selected (index of the query token shown as bars).

import { applyMask, causalRow, dot, paddingRow, softmax } from "./math.js";
import { fixed, weightText } from "./format.js";
import { bar, bind, h, labelled, setBar, show } from "./ui.js";

/** Which keys query i may attend to: (n,) booleans, True = may attend (the PyTorch convention). */
export function allowedRow(i, { n_real, causal, padding, n }) {
  const byCausal = causal ? causalRow(i, n) : Array(n).fill(true);
  const byPadding = padding ? paddingRow(n_real, n) : Array(n).fill(true);
  return byCausal.map((ok, j) => ok && byPadding[j]);
}

/** The (n, n) mask and weights softmax(Q K^T / sqrt(d) with masked scores = -inf); pure. */
export function computeMasks({ query_vectors, key_vectors, n_real, causal, padding }) {
  const n = key_vectors.length;
  const scale = 1 / Math.sqrt(key_vectors[0].length);
  const allowed = query_vectors.map((_, i) => allowedRow(i, { n_real, causal, padding, n }));
  const weights = query_vectors.map((q, i) =>
    softmax(applyMask(key_vectors.map((k) => dot(q, k) * scale), allowed[i]))); // (n, n), masked -> exactly 0
  return { allowed, weights };
}

function render({ model, el }) {
  const tokens = model.get("tokens");
  const n = tokens.length;
  const causal = h("input", { type: "checkbox", "data-role": "causal", onchange: () => state.set({ causal: causal.checked }) });
  const padding = h("input", { type: "checkbox", "data-role": "padding", onchange: () => state.set({ padding: padding.checked }) });
  const select = h("select", { "data-role": "selected", onchange: () => state.set({ selected: Number(select.value) }) },
    tokens.map((tok, i) => h("option", { value: i }, `${i}: ${tok}`)));

  const cells = tokens.map((_, i) => tokens.map((_, j) => h("td", { "data-role": "cell", "data-row": i, "data-col": j })));
  const rowsEls = tokens.map((tok, i) => h("tr", {}, h("th", { scope: "row" }, tok), cells[i]));
  const rowBars = tokens.map((tok, j) => ({
    weight: h("td", { "data-role": "weight", "data-token": tok, "data-index": j }),
    bar: bar("weight-bar"),
    status: h("td", { class: "ac-note", "data-role": "status" }),
  }));
  const heading = h("p", { class: "ac-result", "data-role": "row-heading", "aria-live": "polite" });
  const rowSum = h("td", { "data-role": "row-sum" });

  const root = h("div", { class: "ac-explorer ac-masks", "data-explorer": "masks" },
    h("p", { class: "ac-title" }, `Masks on “${tokens.join(" ")}”: which keys may each query attend to?`),
    h("p", { class: "ac-note", "data-role": "queries-note" },
      "Queries: the masks chapter’s (“blocked” has the worked example’s, the others invented); <pad> tokens have zero vectors."),
    h("div", { class: "ac-controls" },
      labelled("causal mask (no token sees a later one)", causal),
      labelled("padding mask (no token sees <pad>)", padding),
      labelled("query token", select)),
    h("table", { class: "ac-table ac-grid-table" },
      h("caption", {}, "Attention weights: one row per query, one column per key, counted from 0. Grey cells are masked: score −∞, weight exactly 0."),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "query \\ key"), tokens.map((tok) => h("th", { scope: "col" }, tok)))),
      h("tbody", {}, rowsEls)),
    heading,
    h("table", { class: "ac-table" },
      h("tbody", {}, tokens.map((tok, j) => h("tr", {},
        h("th", { scope: "row" }, tok), rowBars[j].weight, h("td", { class: "ac-bar-cell" }, rowBars[j].bar), rowBars[j].status))),
      h("tfoot", {}, h("tr", {}, h("th", { scope: "row" }, "sum"), rowSum, h("td"), h("td")))));
  el.replaceChildren(root);

  function update() {
    const now = {
      query_vectors: model.get("query_vectors"), key_vectors: model.get("key_vectors"),
      n_real: model.get("n_real"), causal: model.get("causal"), padding: model.get("padding"),
    };
    const selected = model.get("selected");
    const { allowed, weights } = computeMasks(now);
    causal.checked = now.causal;
    padding.checked = now.padding;
    if (Number(select.value) !== selected) select.value = String(selected);
    weights.forEach((row, i) => {
      rowsEls[i].classList.toggle("ac-selected", i === selected);
      row.forEach((w, j) => {
        const cell = cells[i][j];
        show(cell, weightText(w, 2), w);
        cell.classList.toggle("ac-masked", !allowed[i][j]);
        cell.style.setProperty("--ac-w", allowed[i][j] ? String(w) : "0");
      });
    });
    const row = weights[selected];
    const visible = tokens.filter((_, j) => allowed[selected][j]);
    show(heading, `Row of “${tokens[selected]}” (query ${selected}): it may attend to ${visible.length ? visible.join(", ") : "nothing, so every weight is 0"}.`);
    row.forEach((w, j) => {
      show(rowBars[j].weight, weightText(w), w);
      setBar(rowBars[j].bar, w);
      show(rowBars[j].status, allowed[selected][j] ? "" : "masked: exp(−∞) = 0");
    });
    const total = row.reduce((a, b) => a + b, 0);
    show(rowSum, fixed(total, 3), total);
  }

  const state = bind(model, ["causal", "padding", "selected", "n_real"], update);
  update();
  return state.dispose;
}

export default { render };
