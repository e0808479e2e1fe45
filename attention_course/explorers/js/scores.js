// Explorer 1: scores to weights. The worked example's tokens; the reader edits
// the query vector, the raw scores q.k or d_k, and every step of attention
// (scale, exp, softmax, mix the values) updates at once, as numbers and bars.
// State (set by attention_course.explorers.ScoresExplorer): tokens,
// query_token, query (d,), key_vectors (n_k, d), value_vectors (n_k, d_v), scores (n_k,),
// source ("query": scores are K q; "scores": typed by hand), d_k.

import { mixValues, scoresOf, softmax } from "./math.js";
import { fixed, inputText, vectorText, weightText } from "./format.js";
import { bar, bind, entryNote, h, labelled, onNumber, setBar, show, showNumber } from "./ui.js";

const REFUSED = "Nothing is computed while an entry cannot be used: the note beside it says what it needs.";
const ANY = "a number"; // what a q or q·k box needs; d_k needs a whole number of 1 or more

/** Every number the explorer shows, from its state (the model's traits); pure, the tests call it. */
export function computeScores({ query, key_vectors, value_vectors, scores, source, d_k }) {
  const raw = source === "query" ? scoresOf(query, key_vectors) : scores.slice(); // step 2: q . k_j
  const scale = 1 / Math.sqrt(d_k);
  const scaled = raw.map((s) => s * scale); // step 3
  const exponentials = scaled.map((z) => Math.exp(z)); // step 4a, unshifted as in the text: may overflow
  const weights = softmax(scaled); // step 4b, stable: never overflows
  const output = mixValues(weights, value_vectors); // step 5: (n_k,) x (n_k, d_v) -> (d_v,)
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  return { raw, scale, scaled, exponentials, expSum: sum(exponentials), weights, weightSum: sum(weights), output };
}

function render({ model, el }) {
  const tokens = model.get("tokens");
  const keys = model.get("key_vectors");
  const values = model.get("value_vectors");
  const d = keys[0].length;

  // An entry that is not a number (empty, half typed) leaves the state as it was, and the note beside its
  // box says so: a q or a q·k blanks the scores after it (a q the q·k boxes too), d_k also √d_k.
  const queryInputs = Array.from({ length: d }, (_, i) =>
    h("input", { type: "number", step: "any", "data-role": "query", "data-index": i,
      oninput: onNumber(() => true, (x) => setQuery(i, x), () => clear({ scores: true })) }));
  const queryNotes = queryInputs.map((input) => entryNote(input, ANY));
  const dkInput = h("input", { type: "number", min: 1, step: 1, "data-role": "d_k",
    oninput: onNumber((x) => Number.isInteger(x) && x >= 1, (x) => state.set({ d_k: x }), () => clear({ sqrt: true })) });
  const dkNote = entryNote(dkInput, "a whole number of 1 or more");
  const sqrtOut = h("output", { "data-role": "sqrt-dk" });
  const sourceNote = h("p", { class: "ac-note", "data-role": "source" });

  const rows = tokens.map((token, j) => ({
    score: h("input", { type: "number", step: "any", "data-role": "score", "data-index": j,
      oninput: onNumber(() => true, (x) => setScore(j, x), () => clear({})) }),
    scaled: h("td", { "data-role": "scaled" }),
    exp: h("td", { "data-role": "exp" }),
    weight: h("td", { "data-role": "weight", "data-token": token }),
    bar: bar("weight-bar"),
  }));
  const scoreNotes = rows.map((row) => entryNote(row.score, ANY));
  const expSum = h("td", { "data-role": "exp-sum" });
  const weightSum = h("td", { "data-role": "weight-sum" });
  const output = h("output", { "data-role": "output", "aria-live": "polite" });

  const table = h("table", { class: "ac-table" },
    h("caption", {}, "Step 2: q·k (type your own); 3: divide by √d_k; 4: exp and normalise; 5: mix the values"),
    h("thead", {}, h("tr", {},
      ["token", "key k", "q·k", "q·k / √d_k", "exp", "weight"].map((t) => h("th", { scope: "col" }, t)),
      h("th", { scope: "col", class: "ac-bar-cell" }, h("span", { class: "ac-sr" }, "weight as a bar")),
      h("th", { scope: "col" }, "value v"))),
    h("tbody", {}, tokens.map((token, j) => h("tr", {},
      h("th", { scope: "row" }, token),
      h("td", { class: "ac-vector" }, `[${keys[j].join(", ")}]`),
      h("td", {}, labelled(h("span", { class: "ac-sr" }, `q·k for “${token}”`), rows[j].score, scoreNotes[j])),
      rows[j].scaled, rows[j].exp, rows[j].weight,
      h("td", { class: "ac-bar-cell" }, rows[j].bar),
      h("td", { class: "ac-vector" }, `[${values[j].map((v) => fixed(v, 1)).join(", ")}]`)))),
    h("tfoot", {}, h("tr", {},
      h("th", { scope: "row" }, "sum"), h("td"), h("td"), h("td"), expSum, weightSum, h("td", { class: "ac-bar-cell" }), h("td"))));

  const root = h("div", { class: "ac-explorer ac-scores", "data-explorer": "scores" },
    h("p", { class: "ac-title" },
      `Scores to weights: the query of “${model.get("query_token")}” attends to “${tokens.join(" ")}”`),
    h("div", { class: "ac-controls" },
      h("fieldset", {}, h("legend", {}, "Query vector q"),
        queryInputs.map((input, i) => labelled(`q${i + 1}`, input, queryNotes[i]))),
      h("fieldset", {}, h("legend", {}, "Key size"),
        labelled("d_k", dkInput, [h("span", { class: "ac-hint" }, "√d_k = ", sqrtOut), dkNote]))),
    sourceNote, table,
    h("p", { class: "ac-result" }, "output = Σ weight × value = ", output));
  el.replaceChildren(root);

  function effectiveScores() {
    return model.get("source") === "query" ? scoresOf(model.get("query"), keys) : model.get("scores");
  }

  function setQuery(i, x) {
    const q = model.get("query").slice();
    q[i] = x;
    state.set({ query: q, scores: scoresOf(q, keys), source: "query" });
  }

  function setScore(j, x) {
    const s = effectiveScores().slice();
    s[j] = x;
    state.set({ scores: s, source: "scores" });
  }

  /**
   * Blank what an entry that cannot be used would change (the scaled scores, exp, weights, their sums and
   * the output; with `scores` the q·k boxes, with `sqrt` √d_k) and say why where the scores' source is told.
   */
  function clear({ scores = false, sqrt = false }) {
    show(sourceNote, REFUSED);
    if (sqrt) show(sqrtOut, "–");
    rows.forEach((row) => {
      if (scores) row.score.value = "";
      for (const cell of [row.scaled, row.exp, row.weight]) show(cell, "–");
      setBar(row.bar, NaN);
    });
    for (const cell of [expSum, weightSum, output]) show(cell, "–");
  }

  function update() {
    const now = {
      query: model.get("query"), key_vectors: keys, value_vectors: values, scores: model.get("scores"),
      source: model.get("source"), d_k: model.get("d_k"),
    };
    const r = computeScores(now);
    now.query.forEach((q, i) => showNumber(queryInputs[i], q, inputText));
    showNumber(dkInput, now.d_k, inputText);
    show(sqrtOut, fixed(Math.sqrt(now.d_k), 3), Math.sqrt(now.d_k));
    show(sourceNote, now.source === "query"
      ? "The scores are q·k, computed from the query vector. Type in a q·k box to set a score by hand."
      : "The scores were typed by hand; edit the query vector to compute them from q·k again.");
    rows.forEach((row, j) => {
      showNumber(row.score, r.raw[j], inputText);
      show(row.scaled, fixed(r.scaled[j], 2), r.scaled[j]);
      show(row.exp, fixed(r.exponentials[j], 2), r.exponentials[j]);
      show(row.weight, weightText(r.weights[j]), r.weights[j]);
      setBar(row.bar, r.weights[j]);
    });
    show(expSum, fixed(r.expSum, 2), r.expSum);
    show(weightSum, fixed(r.weightSum, 3), r.weightSum);
    show(output, vectorText(r.output, 2), JSON.stringify(r.output));
  }

  const state = bind(model, ["query", "scores", "source", "d_k"], update);
  update();
  return state.dispose;
}

export default { render };
