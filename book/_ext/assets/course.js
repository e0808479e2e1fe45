// Accessibility and layout fixes for every page of the book (added by book/_ext/offline_assets.py).
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
      if (!svg.querySelector("title") && svg.getAttribute("aria-hidden") === "true" && !svg.hasAttribute("role")) return;
      svg.querySelectorAll("title").forEach((title) => title.remove());
      svg.removeAttribute("aria-labelledby");
      svg.removeAttribute("role");
      svg.setAttribute("aria-hidden", "true");
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

  // 3. Explorers come after many links and code cells: a line of links at the top of the
  //    article takes a keyboard reader to each one in a few presses.
  function explorerLinks() {
    const article = document.querySelector("article.bd-article");
    const hosts = Array.from(document.querySelectorAll(".ac-explorer-host[id]"));
    if (!article || !hosts.length || article.querySelector(".ac-jump")) return;
    const nav = document.createElement("nav");
    nav.className = "ac-jump";
    nav.setAttribute("aria-label", "Explorers on this page");
    nav.append(hosts.length === 1 ? "Interactive explorer on this page: " : "Interactive explorers on this page: ");
    hosts.forEach((host, i) => {
      const link = document.createElement("a");
      link.href = `#${host.id}`;
      link.textContent = host.querySelector(".ac-title")?.textContent.split(":")[0] || `explorer ${i + 1}`;
      if (i) nav.append(", ");
      nav.append(link);
    });
    article.prepend(nav);
  }

  // 4. Outputs and code fit their column (course.css): each <pre> of the article gets its longest
  //    line, in characters, as --ac-cols, and the stylesheet sizes its font from it and the box's width.
  function outputColumns() {
    document.querySelectorAll(".bd-article div.highlight > pre").forEach((pre) => {
      const longest = Math.max(1, ...pre.textContent.replace(/\n$/, "").split("\n").map((line) => Array.from(line).length));
      pre.style.setProperty("--ac-cols", String(longest));
    });
  }

  // 5. Tables of the prose with four columns or more stack on a phone (course.css): every cell
  //    carries its column's name, shown before it when the rows become blocks.
  function stackableTables() {
    document.querySelectorAll(".bd-article table").forEach((table) => {
      if (table.closest(".cell_output, .ac-explorer")) return;
      const names = Array.from(table.querySelectorAll("thead tr:last-child th")).map((th) => th.textContent.trim());
      if (names.length < 4) return;
      table.classList.add("ac-stack");
      table.querySelectorAll("tbody tr").forEach((row) =>
        Array.from(row.children).forEach((cell, i) => {
          if (names[i]) cell.dataset.label = names[i];
          if (!cell.textContent.trim()) cell.classList.add("ac-empty");  // no "Shape:" with nothing after it
        }));
    });
  }

  // 6. The theme opens the page's contents from the first "secondary-toggle" button of the page,
  //    which this theme never shows: the one in the article's header does nothing by itself.
  //    Forward its clicks (and, with course.css, use it from 1200 to 1599 px wide as well).
  function contentsButton() {
    const [bound, ...others] = document.querySelectorAll(".secondary-toggle");
    others.forEach((button) => button.addEventListener("click", (event) => {
      event.preventDefault();
      event.stopPropagation();
      bound?.click();
    }));
  }

  // 7. The book's title at the top of the sidebar, a link to its first page, lies outside every
  //    landmark, where a screen reader moving by landmarks never meets it: it becomes a navigation
  //    landmark of its own.
  function titleLandmark() {
    document.querySelectorAll(".sidebar-primary-item").forEach((item) => {
      if (!item.querySelector(".navbar-brand") || item.closest("nav, [role]")) return;
      item.setAttribute("role", "navigation");
      item.setAttribute("aria-label", "Book");
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    titleLandmark();
    outputColumns();
    stackableTables();
    contentsButton();
    hideDecoration();
    // Font Awesome may draw its icons after this script ran: fix them whenever the buttons change.
    document.querySelectorAll(".theme-switch-button").forEach((button) =>
      new MutationObserver(hideDecoration).observe(button, { childList: true, subtree: true }));
  });
  window.addEventListener("load", () => {
    hideDecoration();
    explorerLinks();
    const typeset = window.MathJax?.startup?.promise;
    if (typeset) typeset.then(wideFormulasFocusable);
  });
  let pending = null;
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(wideFormulasFocusable, 200);
  });
})();
