// Mount an explorer in a page that has no kernel (the static book).
// The explorer's module is the very text anywidget runs in JupyterLab; here it
// is imported from a data: URL (pages opened from file:// may not load sibling
// files) and rendered on a small in-page model with the part of anywidget's
// model API the explorers use: get, set, on, off, save_changes.

/** A model holding `state`; set() fires "change:<name>" and "change" like a widget model; toJSON() copies the state. */
export function createModel(state) {
  const data = structuredClone(state);
  const listeners = new Map(); // event name -> Set of callbacks
  const fire = (event, ...args) => (listeners.get(event) ?? new Set()).forEach((cb) => cb(...args));
  return {
    get: (name) => data[name],
    set(name, value) {
      if (JSON.stringify(data[name]) === JSON.stringify(value)) return; // unchanged: no event, as in Backbone
      data[name] = value;
      fire(`change:${name}`, value);
      fire("change");
    },
    on(event, callback) {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event).add(callback);
    },
    off(event, callback) {
      if (event === undefined || event === null) listeners.clear();
      else if (callback === undefined || callback === null) listeners.delete(event);
      else listeners.get(event)?.delete(callback);
    },
    save_changes() {}, // nothing to sync with: there is no kernel
    send() {},
    toJSON: () => structuredClone(data),
  };
}

/** Import the module `source` and render it into `el` on a model holding `state`. */
export async function mount(source, state, el) {
  try {
    const url = `data:text/javascript;charset=utf-8,${encodeURIComponent(source)}`;
    const widget = (await import(url)).default;
    const model = createModel(state);
    el.explorerModel = model; // for the browser's console and the browser tests: el.explorerModel.toJSON()
    await widget.initialize?.({ model });
    await widget.render({ model, el });
  } catch (error) {
    el.textContent = `This explorer could not start: ${error}`;
    throw error; // still reported in the console, where the browser tests look
  }
}
