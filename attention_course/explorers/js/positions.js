// Explorer 5: positions. The query of one token at position m and the key of
// another at position n. With RoPE both vectors are rotated, pair of
// coordinates by pair (i with i + d/2), by position x base^(-2i/d), and their
// score depends on m - n only; with ALiBi the vectors stay as they are and the
// score gets -slope x |m - n|. "Move both together" keeps m - n.
// State (attention_course.explorers.PositionsExplorer): tokens [query's, key's],
// query (d,), key (d,), m, n, max_position, together, method ("rope" | "alibi"),
// base, n_heads, head.

import { dot } from "./math.js";
import { fixed, vectorText } from "./format.js";
import { bind, entryNote, h, labelled, onNumber, show, showNumber } from "./ui.js";

const SVG = "http://www.w3.org/2000/svg";

/** RoPE's frequencies theta_i = base^(-2i/d), i = 0..d/2-1, as attention_course.rope_frequencies. */
export function ropeFrequencies(d, base) {
  return Array.from({ length: d / 2 }, (_, i) => 1 / base ** ((2 * i) / d));
}

/** One vector rotated to `position`: pair (i, i + d/2) turned by position x theta_i (apply_rope's default). */
export function ropeVector(x, position, base) {
  const half = x.length / 2;
  const out = x.slice();
  ropeFrequencies(x.length, base).forEach((theta, i) => {
    const angle = position * theta;
    const c = Math.cos(angle);
    const s = Math.sin(angle);
    out[i] = x[i] * c - x[i + half] * s;
    out[i + half] = x[i + half] * c + x[i] * s;
  });
  return out;
}

/** ALiBi's slopes for h heads, as attention_course.alibi_slopes (the ALiBi paper's rule). */
export function alibiSlopes(h) {
  const powerOfTwo = (m) => Array.from({ length: m }, (_, i) => 2 ** ((-8 * (i + 1)) / m));
  const m = 2 ** Math.floor(Math.log2(h));
  const slopes = powerOfTwo(m);
  return m === h ? slopes : slopes.concat(powerOfTwo(2 * m).filter((_, i) => i % 2 === 0).slice(0, h - m));
}

/** Every number the explorer shows, from its state; pure, the tests compare it with the package. */
export function computePositions({ query, key, m, n, method, base, n_heads, head }) {
  const d = query.length;
  const theta = ropeFrequencies(d, base);
  const qRot = ropeVector(query, m, base);
  const kRot = ropeVector(key, n, base);
  const raw = dot(query, key);
  const ropeScore = dot(qRot, kRot);
  const slope = alibiSlopes(n_heads)[head];
  const bias = -slope * Math.abs(m - n);
  const scale = 1 / Math.sqrt(d);
  const score = method === "rope" ? ropeScore * scale : raw * scale + bias;
  return {
    distance: m - n, raw, query_angles: theta.map((t) => m * t), key_angles: theta.map((t) => n * t),
    q_rot: qRot, k_rot: kRot, rope_score: ropeScore, slope, bias, score,
  };
}

/** Where a move of one slider to `value` puts both positions: [m, n], both kept in 0..max. */
export function movePositions({ m, n, together, max_position }, which, value) {
  const wanted = Math.round(Math.min(max_position, Math.max(0, value)));
  if (!together) return which === "m" ? [wanted, n] : [m, wanted];
  const start = which === "m" ? m : n;
  const low = -Math.min(m, n);
  const high = max_position - Math.max(m, n);
  const step = Math.min(high, Math.max(low, wanted - start)); // both move by the same step, as far as both can
  return [m + step, n + step];
}

function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  return node;
}

const R = 70; // the plane's radius in SVG units

/** One pair's plane: the query's and the key's pair before (dashed) and after rotation. */
function pairPlane(i, d, scaleOf) {
  const size = 2 * R + 30;
  const root = svg("svg", { viewBox: `${-size / 2} ${-size / 2} ${size} ${size}`, role: "img", class: "ac-pair-plane" });
  root.append(svg("circle", { cx: 0, cy: 0, r: R, fill: "none", class: "ac-grid" }),
    svg("line", { x1: -R - 8, y1: 0, x2: R + 8, y2: 0, class: "ac-grid" }),
    svg("line", { x1: 0, y1: -R - 8, x2: 0, y2: R + 8, class: "ac-grid" }));
  const arrow = (cls, dashed) => {
    const line = svg("line", { x1: 0, y1: 0, class: cls, "stroke-width": dashed ? 1.5 : 2.5 });
    if (dashed) line.setAttribute("stroke-dasharray", "4 3");
    const tip = svg("circle", { r: dashed ? 2 : 4, class: `${cls}-tip` });
    root.append(line, tip);
    return { line, tip };
  };
  const parts = {
    qBefore: arrow("ac-q", true), kBefore: arrow("ac-k", true), q: arrow("ac-q", false), k: arrow("ac-k", false),
  };
  const qLabel = svg("text", { class: "ac-q-text", "font-size": 13 });
  qLabel.textContent = "q";
  const kLabel = svg("text", { class: "ac-k-text", "font-size": 13 });
  kLabel.textContent = "k";
  root.append(qLabel, kLabel);
  const caption = h("figcaption", { class: "ac-note", "data-role": "pair-caption" });
  const figure = h("figure", { class: "ac-pair" }, root, caption);

  function place({ line, tip }, a, b) {
    const s = scaleOf();
    const x = a * s;
    const y = -b * s; // SVG's y axis points down
    line.setAttribute("x2", x.toFixed(2));
    line.setAttribute("y2", y.toFixed(2));
    tip.setAttribute("cx", x.toFixed(2));
    tip.setAttribute("cy", y.toFixed(2));
    return [x, y];
  }
  function update(query, key, qShown, kShown, theta, qAngle, kAngle) {
    const half = d / 2;
    show(caption, `pair ${i + 1}: coordinates ${i + 1} and ${i + 1 + half}, θ = ${fixed(theta, 4)} rad per position`);
    place(parts.qBefore, query[i], query[i + half]);
    place(parts.kBefore, key[i], key[i + half]);
    const [qx, qy] = place(parts.q, qShown[i], qShown[i + half]);
    const [kx, ky] = place(parts.k, kShown[i], kShown[i + half]);
    // Labels beside the tips, q above and k below, so that they stay apart when the vectors meet.
    // x and y of a label's baseline, kept inside the drawing (-R - 15 .. R + 15 each way).
    const atX = (v) => Math.max(-R - 14, Math.min(R + 6, v)).toFixed(2);
    const atY = (v) => Math.max(-R - 3, Math.min(R + 13, v)).toFixed(2);
    qLabel.setAttribute("x", atX(qx * 1.1 + 5));
    qLabel.setAttribute("y", atY(qy * 1.1 - 4));
    kLabel.setAttribute("x", atX(kx * 1.1 + 5));
    kLabel.setAttribute("y", atY(ky * 1.1 + 13));
    const degrees = (x, y) => fixed((Math.atan2(y, x) * 180) / Math.PI, 0);
    root.setAttribute("aria-label",
      `Pair ${i + 1}: the query's pair at ${degrees(qShown[i], qShown[i + half])} degrees, the key's at ` +
      `${degrees(kShown[i], kShown[i + half])} degrees; turned by ${fixed(qAngle, 2)} and ${fixed(kAngle, 2)} radians.`);
  }
  return { figure, update };
}

function render({ model, el }) {
  const [qToken, kToken] = model.get("tokens");
  const query = model.get("query");
  const key = model.get("key");
  const d = query.length;
  const max = model.get("max_position");
  const nHeads = model.get("n_heads");
  const slopes = alibiSlopes(nHeads);

  const slider = (which) => h("input", {
    type: "range", min: 0, max, step: 1, "data-role": which,
    oninput: () => {
      const [m, n] = movePositions(now(), which, Number(sliders[which].value));
      state.set({ m, n });
    },
  });
  const sliders = { m: slider("m"), n: slider("n") };
  const outputs = { m: h("output", { "data-role": "m-value" }), n: h("output", { "data-role": "n-value" }) };
  const together = h("input", { type: "checkbox", "data-role": "together", onchange: () => state.set({ together: together.checked }) });
  const method = h("select", { "data-role": "method", onchange: () => state.set({ method: method.value }) },
    h("option", { value: "rope" }, "RoPE: rotate q and k"),
    h("option", { value: "alibi" }, "ALiBi: add −slope × distance"));
  // A base that is not a positive number (0, -3, empty) leaves the state as it was, the note beside the box
  // says so, and the results that depend on it (the rotated vectors, their score, the planes) are blanked.
  const baseInput = h("input", {
    type: "number", min: 1, step: "any", "data-role": "base",
    oninput: onNumber((x) => x > 0, (x) => state.set({ base: x }), () => clear()),
  });
  const baseNote = entryNote(baseInput, "a number above 0");
  const headSelect = h("select", { "data-role": "head", onchange: () => state.set({ head: Number(headSelect.value) }) },
    slopes.map((s, i) => h("option", { value: i }, `head ${i + 1}: slope ${s >= 0.01 ? fixed(s, 4) : s.toExponential(2)}`)));
  const baseControl = labelled("RoPE base (rope_theta)", baseInput, baseNote);
  const headControl = labelled("ALiBi head", headSelect);

  let scaleNow = 1;
  const planes = Array.from({ length: d / 2 }, (_, i) => pairPlane(i, d, () => scaleNow));
  const cells = {
    query: h("td", { class: "ac-vector", "data-role": "query-vector" }),
    key: h("td", { class: "ac-vector", "data-role": "key-vector" }),
    raw: h("td", { "data-role": "raw" }),
    distance: h("td", { "data-role": "distance" }),
    qRot: h("td", { class: "ac-vector", "data-role": "q-rot" }),
    kRot: h("td", { class: "ac-vector", "data-role": "k-rot" }),
    ropeScore: h("td", { "data-role": "rope-score" }),
    bias: h("td", { "data-role": "bias" }),
    score: h("td", { "data-role": "score" }),
  };
  const rowOf = (label, cell, role) => h("tr", { "data-row": role }, h("th", { scope: "row" }, label), cell);
  const rows = {
    qRot: rowOf("q rotated to m", cells.qRot, "rope"),
    kRot: rowOf("k rotated to n", cells.kRot, "rope"),
    ropeScore: rowOf("rotated q · rotated k", cells.ropeScore, "rope"),
    bias: rowOf("bias −slope × |m − n|", cells.bias, "alibi"),
  };
  const scoreLabel = h("th", { scope: "row" });
  const result = h("p", { class: "ac-result", "data-role": "result", "aria-live": "polite" });
  const planeNote = h("p", { class: "ac-note", "data-role": "plane-note" });
  const pairs = h("div", { class: "ac-pairs" }, planes.map((p) => p.figure));

  const root = h("div", { class: "ac-explorer ac-positions", "data-explorer": "positions" },
    h("p", { class: "ac-title" }, `Position in the score: the query of “${qToken}” at m, the key of “${kToken}” at n`),
    h("div", { class: "ac-controls" },
      labelled(`query position m (“${qToken}”)`, sliders.m, outputs.m),
      labelled(`key position n (“${kToken}”)`, sliders.n, outputs.n),
      labelled("move both together (keep m − n)", together),
      labelled("position method", method),
      baseControl, headControl),
    result,
    pairs, planeNote,
    h("table", { class: "ac-table" },
      h("caption", {}, "The numbers behind the score (d = " + d + ")"),
      h("tbody", {},
        rowOf(`query q of “${qToken}”`, cells.query, "both"),
        rowOf(`key k of “${kToken}”`, cells.key, "both"),
        rowOf("q · k (no position)", cells.raw, "both"),
        rowOf("distance m − n", cells.distance, "both"),
        rows.qRot, rows.kRot, rows.ropeScore, rows.bias,
        h("tr", { "data-row": "both" }, scoreLabel, cells.score))));
  el.replaceChildren(root);

  function now() {
    return {
      query: model.get("query"), key: model.get("key"), m: model.get("m"), n: model.get("n"),
      together: model.get("together"), max_position: model.get("max_position"), method: model.get("method"),
      base: model.get("base"), n_heads: model.get("n_heads"), head: model.get("head"),
    };
  }

  function update() {
    const s = now();
    const r = computePositions(s);
    const rope = s.method === "rope";
    for (const which of ["m", "n"]) {
      if (Number(sliders[which].value) !== s[which]) sliders[which].value = String(s[which]);
      show(outputs[which], String(s[which]), s[which]);
    }
    together.checked = s.together;
    if (method.value !== s.method) method.value = s.method;
    showNumber(baseInput, s.base);
    if (Number(headSelect.value) !== s.head) headSelect.value = String(s.head);
    baseControl.style.display = rope ? "" : "none"; // the control of the other method is put away
    headControl.style.display = rope ? "none" : "";
    rows.qRot.hidden = rows.kRot.hidden = rows.ropeScore.hidden = !rope;
    rows.bias.hidden = rope;

    show(cells.query, vectorText(s.query, 3));
    show(cells.key, vectorText(s.key, 3));
    show(cells.raw, fixed(r.raw, 3), r.raw);
    show(cells.distance, String(r.distance), r.distance);
    show(cells.qRot, vectorText(r.q_rot, 3));
    cells.qRot.dataset.value = JSON.stringify(r.q_rot);
    show(cells.kRot, vectorText(r.k_rot, 3));
    cells.kRot.dataset.value = JSON.stringify(r.k_rot);
    show(cells.ropeScore, fixed(r.rope_score, 3), r.rope_score);
    show(cells.bias, fixed(r.bias, 3), r.bias);
    show(scoreLabel, rope ? "score the softmax sees: rotated q · k / √d" : "score the softmax sees: q · k / √d + bias");
    show(cells.score, fixed(r.score, 3), r.score);

    const same = s.together ? " Both move together, so m − n and the score stay as they are." : "";
    show(result, rope
      ? `m − n = ${r.distance}: the rotated score is ${fixed(r.rope_score, 3)} (without positions ${fixed(r.raw, 3)}).${same}`
      : `m − n = ${r.distance}: head ${s.head + 1} adds ${fixed(r.bias, 3)} to the scaled score ${fixed(r.raw / Math.sqrt(d), 3)}.${same}`);
    show(planeNote, rope
      ? "Dashed: the pairs as given (position 0). Solid: turned by m·θ (q) and n·θ (k); the angle between them is (m − n)·θ."
      : "ALiBi leaves q and k as they are: position enters as a bias added to the score, a float mask.");

    pairs.style.display = "";
    const shownQ = rope ? r.q_rot : s.query;
    const shownK = rope ? r.k_rot : s.key;
    const longest = Math.max(1e-12, ...Array.from({ length: d / 2 }, (_, i) => Math.max(
      Math.hypot(s.query[i], s.query[i + d / 2]), Math.hypot(s.key[i], s.key[i + d / 2]))));
    scaleNow = R / longest;
    const theta = ropeFrequencies(d, s.base);
    planes.forEach((p, i) => p.update(s.query, s.key, shownQ, shownK, theta[i],
      rope ? r.query_angles[i] : 0, rope ? r.key_angles[i] : 0));
  }

  /** Blank what the base changes, the rotated q and k, their score and the planes, and say why. */
  function clear() {
    for (const cell of [cells.qRot, cells.kRot, cells.ropeScore, cells.score]) show(cell, "–");
    show(result, "Nothing is computed while an entry above cannot be used: the note beside it says what it needs.");
    pairs.style.display = "none";
    show(planeNote, "");
  }

  const state = bind(model, ["m", "n", "together", "method", "base", "head"], update);
  update();
  return state.dispose;
}

export default { render };
