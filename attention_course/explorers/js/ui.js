// Small DOM helpers shared by the explorers: elements, labelled controls, bars.
// Every control is a real form element inside its <label>, so it has an
// accessible name and works with the keyboard (Tab, arrows, Space).

/** Create an element: h("td", { class: "x", "data-role": "weight" }, "0.5"). */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** Create an SVG element: svgElement("line", { x1: 0, y1: 0, x2: 10, y2: 10 }). */
export function svgElement(tag, attrs = {}) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  return node;
}

/**
 * A <label> wrapping its text and its control, so the control's accessible name
 * is exactly `text`; an optional `hint` (such as the current value) follows the label.
 */
export function labelled(text, control, hint = null) {
  const label = h("label", { class: "ac-control" }, h("span", { class: "ac-label" }, text), control);
  return hint === null ? label : h("span", { class: "ac-control-group" }, label, hint);
}

/** A horizontal bar: an aria-hidden track whose fill is `fraction` (0..1) wide. */
export function bar(role) {
  const fill = h("span", { class: "ac-bar-fill" });
  const track = h("span", { class: "ac-bar", "aria-hidden": "true", "data-role": role }, fill);
  return track;
}

/** Set a bar's fill to `fraction` of its width (clipped to 0..1; NaN -> empty). */
export function setBar(track, fraction) {
  const f = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0;
  track.firstChild.style.width = `${(100 * f).toFixed(2)}%`;
}

/** Put `text` in a cell and the exact number in data-value (for tests and tooltips). */
export function show(node, text, value) {
  if (node.textContent !== text) node.textContent = text;
  if (value !== undefined) node.dataset.value = String(value);
}

/** The number typed in an <input>, or null if it is empty or not a finite number. */
export function readNumber(input) {
  if (input.value.trim() === "") return null;
  const x = Number(input.value);
  return Number.isFinite(x) ? x : null;
}

/** Flag an input as invalid (for assistive technology and the red outline) or clear the flag. */
export function markInvalid(input, invalid) {
  if (invalid) input.setAttribute("aria-invalid", "true");
  else input.removeAttribute("aria-invalid");
}

const NOTES = new WeakMap(); // a number field -> the note beside it (entryNote)

/**
 * The note beside a number field that says what the explorer does with an entry it cannot use, and
 * that `rule` ("a whole number from 1 to 256") is what it needs; empty while the entry is usable. The
 * field names it in aria-describedby, so a screen reader reads it with the field.
 */
export function entryNote(input, rule) {
  const id = `ac-note-${Math.random().toString(36).slice(2)}`; // unique on a page of several explorers
  const note = h("span", { class: "ac-entry-note", id, "data-role": `${input.dataset.role}-note`, "aria-live": "polite" });
  input.setAttribute("aria-describedby", id);
  NOTES.set(input, { note, rule });
  return note;
}

/** What the note beside `input` says for the text typed in it: empty when `usable`. */
function noteText(input, usable) {
  const entry = NOTES.get(input);
  if (usable || !entry) return "";
  const typed = input.value.trim();
  // A number field holds "" for text that is no number ("1e", "2-"): the browser says so in badInput.
  const what = typed !== "" ? `“${typed}”` : input.validity && input.validity.badInput ? "Not a number" : "Empty";
  return `${what}: not used, the results are blank until this is ${entry.rule}.`;
}

/** Write the note beside `input` (if it has one) for an entry that is usable or not. */
function showNote(input, usable) {
  const entry = NOTES.get(input);
  if (entry) show(entry.note, noteText(input, usable));
}

/**
 * The input handler of a number field: the number typed goes to `set(x)` when `valid(x)`; until then
 * (empty, not a number, out of range) the field is flagged invalid, the state is left as it was, the
 * note beside the field (`entryNote`) says so, and `refused(input)` blanks what the state no longer
 * matches, so that no result disagrees with the field.
 */
export function onNumber(valid, set, refused = null) {
  return (event) => {
    const x = readNumber(event.target);
    const ok = x !== null && valid(x);
    markInvalid(event.target, !ok);
    showNote(event.target, ok);
    if (ok) set(x);
    else if (refused) refused(event.target);
  };
}

/**
 * Show the state's `value` in a number field, unless the field already reads as that number (so that
 * "1.50", being typed, is left alone), and clear its invalid flag and its note; `text` writes the number.
 */
export function showNumber(input, value, text = String) {
  if (readNumber(input) !== value) {
    input.value = text(value);
    markInvalid(input, false);
    showNote(input, true);
  }
}

/** "a whole number from 1 to 256", or with `even` "an even whole number from 4 to 1024": an entry's rule. */
export function wholeRule(low, high, even = false) {
  return `${even ? "an even" : "a"} whole number from ${low.toLocaleString("en")} to ${high.toLocaleString("en")}`;
}

/** A <select> of the dtypes of `itemsizes` (name -> bytes a number), each with its size: "bfloat16 (2 bytes)". */
export function dtypeSelect(itemsizes, choose) {
  return h("select", { "data-role": "dtype", onchange: (event) => choose(event.target.value) },
    Object.entries(itemsizes).map(([name, size]) => h("option", { value: name }, `${name} (${size} byte${size > 1 ? "s" : ""})`)));
}

/**
 * The changes that choosing `name` among `presets` makes: the preset and its fields (all but its name and
 * those in `skip`), or "custom" alone for a name that is not a preset.
 */
export function presetChanges(presets, name, skip = []) {
  const chosen = presets.find((p) => p.name === name);
  if (!chosen) return { preset: "custom" };
  const fields = Object.entries(chosen).filter(([key]) => key !== "name" && !skip.includes(key));
  return { preset: name, ...Object.fromEntries(fields) };
}

/** A <select> of the presets' names and "custom" (the state's preset once a number is changed by hand). */
export function presetSelect(presets, set, skip = []) {
  return h("select", { "data-role": "preset", onchange: (event) => set(presetChanges(presets, event.target.value, skip)) },
    presets.map((p) => h("option", { value: p.name }, p.name)), h("option", { value: "custom" }, "custom"));
}

/**
 * Re-run `update` whenever one of the model's traits `names` changes (from the
 * kernel or another view), and return `set(changes)`, which writes several
 * traits, saves them to the kernel once and updates the view once.
 */
export function bind(model, names, update) {
  let quiet = false;
  const onChange = () => { if (!quiet) update(); };
  names.forEach((name) => model.on(`change:${name}`, onChange));
  function set(changes) {
    quiet = true;
    try {
      for (const [name, value] of Object.entries(changes)) model.set(name, value);
    } finally {
      quiet = false;
    }
    model.save_changes();
    update();
  }
  const dispose = () => names.forEach((name) => model.off(`change:${name}`, onChange));
  return { set, dispose };
}
