// Explorer 5: the KV cache. A published configuration (or your own) in: layers,
// query and key/value heads, head size, dtype, context length, batch, sliding
// window. Out: the bytes the cache keeps, what multi-head attention would keep,
// and which query heads read which key/value head (0, 0, 1, 1, ...: consecutive).
// The counts are attention_course.decoder.kv_cache_bytes's: the state carries the
// item size of each dtype and the published shapes, so nothing here is typed twice.
// State (attention_course.explorers.KVCacheExplorer): preset, n_layers, n_heads,
// n_kv_heads, head_dim, dtype, seq_len, batch, window, presets, itemsizes, limits.

import { bytesText } from "./format.js";
import {
  bind, dtypeSelect, entryNote, h, labelled, markInvalid, onNumber, presetSelect, show, showNumber, wholeRule,
} from "./ui.js";

const NUMBERS = [
  ["n_layers", "layers L"],
  ["n_heads", "query heads h_q"],
  ["n_kv_heads", "key/value heads h_kv"],
  ["head_dim", "head size d"],
  ["seq_len", "context length (tokens)"],
  ["batch", "batch (sequences)"],
  ["window", "sliding window (0 = none)"],
];
const REFUSED = "Nothing is counted while an entry above cannot be used: the note beside it says what it needs.";
const SHOWN_GROUPS = 8; // rows of the head-sharing table before "and n more"

/** For each key/value head j, the query heads that read it: j*g .. j*g + g - 1 (head_groups in Python). */
export function headGroups(nHeads, nKvHeads) {
  const g = nHeads / nKvHeads;
  return Array.from({ length: nKvHeads }, (_, j) => Array.from({ length: g }, (_, i) => j * g + i));
}

/** Everything the explorer shows, from its state; pure (the tests call it). `error` is set for h_q not a multiple of h_kv. */
export function computeKvCache({ n_layers, n_heads, n_kv_heads, head_dim, dtype, seq_len, batch, window, itemsizes }) {
  if (n_heads % n_kv_heads !== 0) {
    return { error: `${n_heads} query heads cannot share ${n_kv_heads} key/value heads equally: h_q must be a multiple of h_kv.` };
  }
  const itemsize = itemsizes[dtype];
  const perToken = 2 * n_layers * n_kv_heads * head_dim * itemsize; // a key and a value per head, per layer
  const tokensKept = window ? Math.min(seq_len, window - 1) : seq_len; // a sliding layer keeps window - 1
  return {
    perToken,
    tokensKept,
    total: perToken * tokensKept * batch,
    mhaTotal: 2 * n_layers * n_heads * head_dim * itemsize * tokensKept * batch, // one key/value head per query head
    groups: n_heads / n_kv_heads,
    heads: headGroups(n_heads, n_kv_heads),
  };
}

function rangeText(heads) {
  return heads.length === 1 ? `query head ${heads[0]}` : `query heads ${heads[0]}–${heads[heads.length - 1]}`;
}

function render({ model, el }) {
  const limits = model.get("limits");
  const inputs = {};
  const notes = {};
  for (const [name] of NUMBERS) {
    const low = name === "window" ? 0 : 1;
    inputs[name] = h("input", { type: "number", min: low, max: limits[name], step: 1, "data-role": name,
      oninput: onNumber((x) => Number.isInteger(x) && x >= low && x <= limits[name],
        (x) => state.set({ [name]: x, preset: "custom" }), () => clear(REFUSED)) });
    notes[name] = entryNote(inputs[name], wholeRule(low, limits[name]));
  }
  const presetMenu = presetSelect(model.get("presets"), (changes) => state.set(changes));
  const dtypeMenu = dtypeSelect(model.get("itemsizes"), (dtype) => state.set({ dtype }));

  const out = {};
  const cell = (role) => { out[role] = h("td", { "data-role": role }); return out[role]; };
  const table = h("table", { class: "ac-table" },
    h("caption", {}, "Keys and values kept for every layer, key/value head and token"),
    h("tbody", {},
      h("tr", {}, h("th", { scope: "row" }, "one token, all layers"), cell("per-token")),
      h("tr", {}, h("th", { scope: "row" }, "tokens kept"), cell("tokens-kept")),
      h("tr", {}, h("th", { scope: "row" }, "the whole cache"), cell("total")),
      h("tr", {}, h("th", { scope: "row" }, "with h_kv = h_q (multi-head)"), cell("mha-total"))));
  const formula = h("p", { class: "ac-note", "data-role": "formula" });
  const status = h("p", { class: "ac-result", "data-role": "status", "aria-live": "polite" });
  const groupsHeading = h("p", { class: "ac-note", "data-role": "groups-heading" });
  const groupsBody = h("tbody", {});
  const groupsTable = h("table", { class: "ac-table", "data-role": "groups" },
    h("caption", {}, "Which query heads read each key/value head"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "key/value head"), h("th", { scope: "col" }, "read by"))),
    groupsBody);

  const root = h("div", { class: "ac-explorer ac-kv-cache", "data-explorer": "kv-cache" },
    h("p", { class: "ac-title" }, "The KV cache: how much a decoder keeps for its context"),
    h("div", { class: "ac-controls" },
      labelled("configuration", presetMenu),
      ...NUMBERS.map(([name, label]) => labelled(label, inputs[name], notes[name])),
      labelled("dtype", dtypeMenu)),
    status, table, formula, groupsHeading, groupsTable);
  el.replaceChildren(root);

  function update() {
    const now = Object.fromEntries(["n_layers", "n_heads", "n_kv_heads", "head_dim", "dtype", "seq_len", "batch",
      "window", "itemsizes"].map((k) => [k, model.get(k)]));
    for (const [name] of NUMBERS) showNumber(inputs[name], now[name]);
    presetMenu.value = model.get("preset");
    dtypeMenu.value = now.dtype;
    const r = computeKvCache(now);
    markInvalid(inputs.n_kv_heads, Boolean(r.error));
    if (r.error) {
      clear(r.error);
      return;
    }
    show(status, `${bytesText(r.total)} for ${r.tokensKept.toLocaleString("en")} tokens × ${now.batch} sequence${now.batch > 1 ? "s" : ""}`
      + (r.groups > 1 ? `; multi-head attention would keep ${r.groups} times as much.` : "."));
    show(out["per-token"], bytesText(r.perToken), r.perToken);
    show(out["tokens-kept"], now.window && now.seq_len >= now.window
      ? `${r.tokensKept.toLocaleString("en")} (window − 1)` : r.tokensKept.toLocaleString("en"), r.tokensKept);
    show(out.total, bytesText(r.total), r.total);
    show(out["mha-total"], `${bytesText(r.mhaTotal)} (${r.groups} ×)`, r.mhaTotal);
    show(formula, `2 (key and value) × ${now.n_layers} layers × ${now.n_kv_heads} heads × ${now.head_dim} × `
      + `${model.get("itemsizes")[now.dtype]} bytes = ${r.perToken.toLocaleString("en")} bytes per token`);
    const kind = r.groups === 1 ? "multi-head attention: every query head has its own key/value head"
      : now.n_kv_heads === 1 ? `multi-query attention: all ${now.n_heads} query heads read the one key/value head`
        : `grouped-query attention: each key/value head is read by ${r.groups} consecutive query heads`;
    show(groupsHeading, `${kind} (g = h_q / h_kv = ${r.groups}).`);
    const rows = r.heads.slice(0, SHOWN_GROUPS).map((heads, j) => h("tr", { "data-role": "group" },
      h("th", { scope: "row" }, `key/value head ${j}`), h("td", { "data-role": "group-heads" }, rangeText(heads))));
    if (r.heads.length > SHOWN_GROUPS) {
      rows.push(h("tr", {}, h("th", { scope: "row" }, "…"),
        h("td", {}, `and ${r.heads.length - SHOWN_GROUPS} more key/value heads, ${r.groups} query head${r.groups > 1 ? "s" : ""} each`)));
    }
    groupsBody.replaceChildren(...rows);
  }

  /** Blank every result and say why in the status line: the shapes cannot be, or an entry is not used. */
  function clear(why) {
    show(status, why);
    for (const role of ["per-token", "tokens-kept", "total", "mha-total"]) show(out[role], "–");
    show(formula, "");
    show(groupsHeading, "");
    groupsBody.replaceChildren();
  }

  const state = bind(model, ["preset", "n_layers", "n_heads", "n_kv_heads", "head_dim", "dtype", "seq_len", "batch", "window"], update);
  update();
  return state.dispose;
}

export default { render };
