// Explorer 9: attention without all the scores. A sequence and k in: the keys a
// lightning indexer keeps (its k best scores, ties to the earlier key, as
// attention_course.core.sparse.top_k_mask), the full softmax's weight the dropped
// keys held, and the softmax over the kept keys alone. A published configuration
// and a context length in: the bytes each layer kind keeps, state against cache,
// added up as attention_course.decoder.cache_bytes does (chunked layers keep the
// current chunk). The state carries the package's numbers (each key's indexer
// score and weight; each layer kind's bytes per token and state), so nothing here
// is typed twice.
// State (attention_course.explorers.FrontierExplorer): sequence, k, preset,
// seq_len, sequences, presets, seq_len_max.

import { bytesText, fixed, weightText } from "./format.js";
import { bind, entryNote, h, labelled, onNumber, show, showNumber, wholeRule } from "./ui.js";

const REFUSED = "Nothing is counted while an entry above cannot be used: the note beside it says what it needs.";

/** The positions of the k best scores, in order of position (ties: the earlier key first). */
export function topK(scores, k) {
  const order = scores.map((s, i) => i).sort((a, b) => scores[b] - scores[a] || a - b);
  return order.slice(0, Math.min(k, scores.length)).sort((a, b) => a - b);
}

/** Everything the explorer shows, from its state; pure (the tests call it). */
export function computeFrontier({ sequence, k, preset, seq_len, sequences, presets }) {
  const seq = sequences.find((s) => s.name === sequence);
  const kept = topK(seq.scores, k);
  const keep = seq.scores.map((_, i) => kept.includes(i));
  let keptMass = 0;
  let droppedMass = 0;
  seq.weights.forEach((w, i) => { if (keep[i]) keptMass += w; else droppedMass += w; });
  const sparseWeights = seq.weights.map((w, i) => (keep[i] ? w / keptMass : 0));
  const model = presets.find((p) => p.name === preset);
  const rows = model.rows.map((r) => {
    const tokens = r.per_token === 0 ? 0 : (r.chunk ? seq_len % r.chunk : seq_len); // a chunked layer: the current chunk
    return { tokens, bytes: r.layers * (r.per_token * tokens + r.state) };
  });
  const total = rows.reduce((sum, r) => sum + r.bytes, 0);
  const stateBytes = model.rows.reduce((sum, r) => sum + r.layers * r.state, 0);
  const delta = model.rows.filter((r) => r.state > 0);
  const attention = model.rows.filter((r) => r.per_token > 0);
  const crossover = delta.length && attention.length ? delta[0].state / attention[0].per_token : null;
  return { kept, droppedMass, sparseWeights, rows, stateBytes, cacheBytes: total - stateBytes, total, crossover };
}

function render({ model, el }) {
  const sequences = model.get("sequences");
  const presets = model.get("presets");
  const maxLen = model.get("seq_len_max");
  const keysOf = () => sequences.find((s) => s.name === model.get("sequence")).tokens.length;

  const sequenceMenu = h("select", { "data-role": "sequence",
    onchange: (event) => {
      const n = sequences.find((s) => s.name === event.target.value).tokens.length;
      state.set({ sequence: event.target.value, k: Math.min(model.get("k"), n) });
    } }, sequences.map((s) => h("option", { value: s.name }, s.title)));
  const kInput = h("input", { type: "number", min: 1, step: 1, "data-role": "k",
    oninput: onNumber((x) => Number.isInteger(x) && x >= 1 && x <= keysOf(), (x) => state.set({ k: x }),
      () => clearKeys()) });
  const kNote = entryNote(kInput, `a whole number from 1 to the sequence's length (${sequences.map((s) => `${s.tokens.length} for ${s.name}`).join(", ")})`);
  const presetMenu = h("select", { "data-role": "preset", onchange: (event) => state.set({ preset: event.target.value }) },
    presets.map((p) => h("option", { value: p.name }, p.name)));
  const lenInput = h("input", { type: "number", min: 1, max: maxLen, step: 1, "data-role": "seq_len", class: "ac-wide",
    oninput: onNumber((x) => Number.isInteger(x) && x >= 1 && x <= maxLen, (x) => state.set({ seq_len: x }),
      () => clearBytes()) });
  const lenNote = entryNote(lenInput, wholeRule(1, maxLen));

  const keysStatus = h("p", { class: "ac-result", "data-role": "keys-status", "aria-live": "polite" });
  const keysBody = h("tbody", {});
  const keysTable = h("table", { class: "ac-table", "data-role": "keys" },
    h("caption", {}, "Each key: the indexer's score, the full softmax's weight, the weight after selection"),
    h("thead", {}, h("tr", {}, ...["key", "indexer", "weight", "kept", "top-k weight"].map((c) => h("th", { scope: "col" }, c)))),
    keysBody);
  const bytesStatus = h("p", { class: "ac-result", "data-role": "bytes-status", "aria-live": "polite" });
  const source = h("p", { class: "ac-note", "data-role": "source" });
  const bytesBody = h("tbody", {});
  const bytesTable = h("table", { class: "ac-table", "data-role": "layers" },
    h("caption", {}, "Bytes each layer kind keeps (bfloat16): per token and as a state, per layer; all its layers at n"),
    h("thead", {}, h("tr", {}, ...["layer kind", "layers", "per token", "state", "at n"].map((c) => h("th", { scope: "col" }, c)))),
    bytesBody);
  const crossoverNote = h("p", { class: "ac-note", "data-role": "crossover" });

  const root = h("div", { class: "ac-explorer ac-frontier", "data-explorer": "frontier" },
    h("p", { class: "ac-title" }, "Attention without all the scores: the keys kept, and state against cache"),
    h("div", { class: "ac-controls" },
      labelled("sequence", sequenceMenu),
      labelled("keys kept k", kInput, kNote)),
    keysStatus, keysTable,
    h("div", { class: "ac-controls" },
      labelled("configuration", presetMenu),
      labelled("context length n (tokens)", lenInput, lenNote)),
    bytesStatus, bytesTable, crossoverNote, source);
  el.replaceChildren(root);

  const now = () => Object.fromEntries(["sequence", "k", "preset", "seq_len", "sequences", "presets"]
    .map((name) => [name, model.get(name)]));

  function update() {
    const s = now();
    sequenceMenu.value = s.sequence;
    presetMenu.value = s.preset;
    kInput.max = keysOf();
    showNumber(kInput, s.k);
    showNumber(lenInput, s.seq_len);
    const r = computeFrontier(s);
    const seq = sequences.find((q) => q.name === s.sequence);
    const names = r.kept.map((i) => seq.tokens[i]).join(", ");
    show(keysStatus, `k = ${s.k} keeps ${names}; the ${seq.tokens.length - r.kept.length} dropped key`
      + `${seq.tokens.length - r.kept.length === 1 ? "" : "s"} held ${fixed(r.droppedMass, 3)} of the weight.`);
    keysStatus.dataset.value = String(r.droppedMass);
    keysBody.replaceChildren(...seq.tokens.map((token, i) => {
      const kept = r.kept.includes(i);
      return h("tr", { "data-role": "key", class: kept ? "ac-kept" : null },
        h("th", { scope: "row" }, token),
        h("td", { "data-role": "score", "data-value": seq.scores[i] }, fixed(seq.scores[i], 2)),
        h("td", { "data-role": "weight", "data-value": seq.weights[i] }, weightText(seq.weights[i])),
        h("td", { "data-role": "kept" }, kept ? "yes" : "no"),
        h("td", { "data-role": "sparse-weight", "data-value": r.sparseWeights[i] }, weightText(r.sparseWeights[i])));
    }));
    const preset = presets.find((p) => p.name === s.preset);
    show(source, `Source: ${preset.source}.`);
    show(bytesStatus, `At ${s.seq_len.toLocaleString("en")} tokens: ${bytesText(r.stateBytes)} of state, `
      + `${bytesText(r.cacheBytes)} of cache, ${bytesText(r.total)} a sequence.`);
    bytesStatus.dataset.value = String(r.total);
    bytesBody.replaceChildren(...preset.rows.map((row, i) => h("tr", { "data-role": "layer" },
      h("th", { scope: "row" }, row.chunk ? `${row.kind} (chunks of ${row.chunk.toLocaleString("en")})` : row.kind),
      h("td", {}, String(row.layers)),
      h("td", {}, row.per_token ? bytesText(row.per_token) : "–"),
      h("td", {}, row.state ? bytesText(row.state) : "–"),
      h("td", { "data-role": "layer-bytes", "data-value": r.rows[i].bytes }, bytesText(r.rows[i].bytes)))));
    show(crossoverNote, r.crossover === null
      ? "No layer of this model keeps a state: every layer's cache grows with the context."
      : `One delta-rule layer's state is what one attention layer caches for ${fixed(r.crossover, 0)} tokens.`);
  }

  /** Blank what k decides (the keys kept, the weights after selection) and say why: the k typed cannot be used. */
  function clearKeys() {
    show(keysStatus, REFUSED);
    keysStatus.dataset.value = "";
    for (const cell of keysBody.querySelectorAll('[data-role="kept"], [data-role="sparse-weight"]')) show(cell, "–", "");
  }

  /** Blank what the context length decides (the bytes at n) and say why: the length typed cannot be used. */
  function clearBytes() {
    show(bytesStatus, REFUSED);
    bytesStatus.dataset.value = "";
    for (const cell of bytesBody.querySelectorAll('[data-role="layer-bytes"]')) show(cell, "–", "");
  }

  const state = bind(model, ["sequence", "k", "preset", "seq_len"], update);
  update();
  return state.dispose;
}

export default { render };
