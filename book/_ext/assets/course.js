// Accessibility fixes for every page of the book (added by book/_ext/offline_assets.py).
//
// 1. The theme's search button reads "Search Ctrl+K" on screen but is named "Search", and its
//    colour-mode button holds icons titled "Light", "Dark", "System Settings" under the name
//    "Color mode": the name must contain the text (axe-core's label-content-name-mismatch), so
//    the search button is named by its content and the icons lose their titles.
// 2. Formulas are kept out of the Tab order (mathjax3_config in _config.yml), but a display
//    formula wider than the column scrolls sideways, and a keyboard user must be able to scroll
//    it: those, and only those, get a Tab stop and a name.
(() => {
  const WIDE = "formula, scrolls sideways";

  function hideDecoration() {
    // Named by its content ("Search Ctrl+K"), which is what a reader sees.
    document.querySelectorAll(".search-button__button[aria-label]").forEach((el) => el.removeAttribute("aria-label"));
    // Font Awesome turns each icon's title ("Light", "Dark") into an SVG <title>: drop them, keep "Color mode".
    document.querySelectorAll(".theme-switch-button i").forEach((el) => el.removeAttribute("title"));
    document.querySelectorAll(".theme-switch-button svg").forEach((svg) => {
      svg.querySelectorAll("title").forEach((title) => title.remove());
      svg.removeAttribute("aria-labelledby");
    });
  }

  function wideFormulasFocusable() {
    document.querySelectorAll('mjx-container[display="true"]').forEach((el) => {
      const scrolls = el.scrollWidth > el.clientWidth + 1;
      if (scrolls && el.getAttribute("tabindex") !== "0") {
        el.setAttribute("tabindex", "0");
        el.setAttribute("role", "region");
        el.setAttribute("aria-label", WIDE);
      } else if (!scrolls && el.getAttribute("aria-label") === WIDE) {
        el.removeAttribute("tabindex");
        el.removeAttribute("role");
        el.removeAttribute("aria-label");
      }
    });
  }

  document.addEventListener("DOMContentLoaded", hideDecoration);
  window.addEventListener("load", () => {
    hideDecoration();
    const typeset = window.MathJax?.startup?.promise;
    if (typeset) typeset.then(wideFormulasFocusable);
  });
  let pending = null;
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(wideFormulasFocusable, 200);
  });
})();
