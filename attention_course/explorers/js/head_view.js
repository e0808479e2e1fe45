// Explorer: head view of the pretrained model. One head at a time, drawn as
// lines from a query piece (left) to the key pieces (right), thicker and darker
// for larger weights, with the chosen query's strongest keys listed below.
// State (set by attention_course.explorers.HeadViewExplorer): n_layers, n_heads,
// passages [{text, tokens (n,), weights: L*h*n*n integers in thousandths}],
// passage, layer, head, query (-1 = every query), text (typed, run by the
// kernel), error. Typing a sentence needs a kernel; without one (the book
// page) the passages computed when the page was built are browsable.

import { weightText } from "./format.js";
import { bar, bind, h, labelled, setBar, show } from "./ui.js";

const SVG = "http://www.w3.org/2000/svg";
const ROW = 18; // px between tokens
const MIN_WEIGHT = 0.01; // thinner links are not drawn

/** The (n, n) weights of one head, as floats, from a passage's thousandths; pure, the tests call it. */
export function headWeights(passage, nHeads, layer, head) {
  const n = passage.tokens.length;
  const start = (layer * nHeads + head) * n * n;
  return Array.from({ length: n }, (_, q) =>
    Array.from({ length: n }, (_, k) => passage.weights[start + q * n + k] / 1000));
}

/** The `count` largest weights of one query's row as [{key, token, weight}], largest first. */
export function topKeys(row, tokens, count = 5) {
  return row.map((weight, key) => ({ key, token: tokens[key], weight }))
    .sort((a, b) => b.weight - a.weight || a.key - b.key)
    .slice(0, count);
}

function svg(tag, attrs = {}, text = null) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

function options(select, labels, selected) {
  select.replaceChildren(...labels.map(([value, label]) => h("option", { value }, label)));
  select.value = String(selected);
}

function render({ model, el }) {
  const live = Boolean(model.widget_manager); // a kernel is there to run typed sentences
  const passageSelect = h("select", { "data-role": "passage", onchange: (e) => pick({ passage: Number(e.target.value), query: -1 }) });
  const layerSelect = h("select", { "data-role": "layer", onchange: (e) => pick({ layer: Number(e.target.value) }) });
  const headSelect = h("select", { "data-role": "head", onchange: (e) => pick({ head: Number(e.target.value) }) });
  const querySelect = h("select", { "data-role": "query", onchange: (e) => pick({ query: Number(e.target.value) }) });
  const picture = svg("svg", { "data-role": "head-view", role: "img", style: "max-width: 28rem" });
  const caption = h("figcaption", { class: "ac-note", "data-role": "caption" });
  const listCaption = h("caption", {});
  const listBody = h("tbody", { "data-role": "top-keys" });
  const errorNote = h("p", { class: "ac-note", "data-role": "error", role: "alert" });
  const textInput = h("input", { type: "text", size: 48, "data-role": "text", placeholder: "Type a sentence" });
  const form = live
    ? h("form", { class: "ac-controls", onsubmit: (e) => { e.preventDefault(); state.set({ text: textInput.value }); } },
      labelled("Your sentence", textInput), h("button", { type: "submit" }, "Run the model"))
    : h("p", { class: "ac-note" }, "To run the model on your own sentence, open this chapter as a notebook: "
      + "the explorer is live in Jupyter. Here you can browse the sentences computed when the page was built.");

  const root = h("div", { class: "ac-explorer ac-head-view", "data-explorer": "head-view" },
    h("p", { class: "ac-title" }, "Head view: where each query piece looks, head by head"),
    form, errorNote,
    h("div", { class: "ac-controls" },
      labelled("Sentence", passageSelect), labelled("Layer", layerSelect), labelled("Head", headSelect),
      labelled("Query", querySelect)),
    h("figure", {}, picture, caption),
    h("table", { class: "ac-table" }, listCaption,
      h("thead", {}, h("tr", {}, ["key", "weight", h("span", { class: "ac-sr" }, "weight as a bar")].map((t) => h("th", { scope: "col" }, t)))), listBody));
  el.replaceChildren(root);

  function pick(changes) { state.set(changes); }

  function update() {
    const passages = model.get("passages");
    const nLayers = model.get("n_layers");
    const nHeads = model.get("n_heads");
    const index = Math.min(model.get("passage"), passages.length - 1);
    const passage = passages[index];
    const layer = model.get("layer");
    const head = model.get("head");
    const tokens = passage.tokens;
    const n = tokens.length;
    const query = model.get("query") < n ? model.get("query") : -1;
    options(passageSelect, passages.map((p, i) => [i, p.text.length > 60 ? `${p.text.slice(0, 57)}…` : p.text]), index);
    options(layerSelect, Array.from({ length: nLayers }, (_, i) => [i, String(i)]), layer);
    options(headSelect, Array.from({ length: nHeads }, (_, i) => [i, String(i)]), head);
    options(querySelect, [[-1, "every token"], ...tokens.map((t, i) => [i, `${i}: ${t}`])], query);
    show(errorNote, model.get("error"));
    errorNote.hidden = !model.get("error");

    const w = headWeights(passage, nHeads, layer, head);
    const width = 360;
    const height = n * ROW + 10;
    const left = 140;
    const right = width - 140;
    picture.setAttribute("viewBox", `0 0 ${width} ${height}`);
    picture.setAttribute("aria-label", `Layer ${layer}, head ${head}: lines from ${query === -1 ? "every token" : tokens[query]} to the tokens it attends to`);
    const y = (i) => 12 + i * ROW;
    const lines = [];
    const rows = query === -1 ? tokens.map((_, i) => i) : [query];
    for (const q of rows) {
      for (let k = 0; k < n; k++) {
        const weight = w[q][k];
        if (weight < MIN_WEIGHT) continue;
        lines.push(svg("line", {
          x1: left, y1: y(q) - 4, x2: right, y2: y(k) - 4, stroke: "var(--ac-accent)",
          "stroke-opacity": Math.min(1, 0.15 + weight).toFixed(3), "stroke-width": (0.5 + 6 * weight).toFixed(2),
          "stroke-linecap": "round", "data-q": q, "data-k": k, "data-weight": weight,
        }));
      }
    }
    const labels = tokens.flatMap((token, i) => [
      svg("text", { x: left - 6, y: y(i), "text-anchor": "end", "font-size": 11, "data-side": "query", "data-index": i,
        "font-weight": i === query ? "bold" : "normal", fill: query === -1 || i === query ? "currentColor" : "gray",
        style: "cursor: pointer" }, token),
      svg("text", { x: right + 6, y: y(i), "text-anchor": "start", "font-size": 11, "data-side": "key", "data-index": i, fill: "currentColor" }, token),
    ]);
    picture.replaceChildren(...lines, ...labels);
    show(caption, `Layer ${layer}, head ${head} (counted from 0): ${lines.length} links of weight ≥ ${MIN_WEIGHT}. `
      + "Click a token on the left to follow its query alone.");

    if (query === -1) {
      listCaption.textContent = "Choose a query token to list the keys it weighs most.";
      listBody.replaceChildren();
    } else {
      listCaption.textContent = `The keys “${query}: ${tokens[query]}” weighs most`;
      listBody.replaceChildren(...topKeys(w[query], tokens).map(({ key, token, weight }) => {
        const cell = h("td", { "data-role": "weight", "data-key": key });
        show(cell, weightText(weight), weight);
        const b = bar("weight-bar");
        setBar(b, weight);
        return h("tr", {}, h("th", { scope: "row" }, `${key}: ${token}`), cell, h("td", { class: "ac-bar-cell" }, b));
      }));
    }
  }

  picture.addEventListener("click", (event) => {
    const target = event.target.closest?.('text[data-side="query"]');
    if (!target) return;
    const i = Number(target.dataset.index);
    pick({ query: model.get("query") === i ? -1 : i });
  });

  const state = bind(model, ["passages", "passage", "layer", "head", "query", "error", "n_layers", "n_heads"], update);
  update();
  return state.dispose;
}

export default { render };
