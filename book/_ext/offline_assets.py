"""Make the rendered book self-contained: it must work from file:// with the network off.

A local Sphinx extension, wired in `_config.yml` under `sphinx: local_extensions`.
It does four things Jupyter Book 1 does not do by itself:

1. MathJax from the build, not from a CDN. Sphinx's default `mathjax_path` is
   a jsDelivr URL. We copy MathJax 3 from the npm package that `npm ci`
   installs (pinned in `package-lock.json`) into `_static/mathjax/` of the
   built site, with its licence, and point `mathjax_path` there.

   We ship `tex-svg-full.js`: the SVG output draws glyphs as paths, so it
   needs no font files, and the "full" bundle contains every TeX extension,
   so nothing is loaded on demand: one 2.2 MB file, about the size of
   `tex-chtml.js` plus the fonts and extensions it fetches at run time.
   Measured in headless Chromium 156 from file:// with the network blocked,
   both bundles render every formula (Chromium lets a file:// page load
   the CHTML web fonts). Browsers with a stricter file:// origin policy
   (Firefox treats only the page's own folder and its subfolders as the
   same origin) refuse web fonts from `../_static/`, where the chapters in
   `book/` find them; SVG output has no fonts to refuse. Set
   `offline_mathjax_bundle: tex-chtml.js` to switch. When a chapter title
   holds math, the sidebar shows it on every page, so every page gets MathJax.

   The source folder is never named `_static`: Jupyter Book adds every `.js`
   found in a source `_static` folder to every page, which would load 2 MB of
   MathJax even on pages without math (Sphinx loads it only where needed).

2. No sphinx-thebe when the thebe launch button is off. Jupyter Book always
   loads sphinx-thebe, which then adds to every page an inline script
   declaring `const THEBE_JS_URL` (twice, a console SyntaxError) pointing at
   unpkg.com, plus a Binder configuration. With `launch_buttons.thebe: false`
   none of it is used, so we disconnect its page hooks and drop its styles.

3. The book's own small stylesheet, `assets/course.css` (tables of the
   attention trace, shapes that do not wrap), served from `_static/`.

4. A front door that follows the root. `index.html` redirects to the root
   chapter, but sphinx-external-toc writes it only when it is missing, so a
   build folder made before the root changed keeps sending readers to a page
   that no longer exists. We rewrite the redirect whenever it is stale.

5. No unused widget state. myst-nb embeds every notebook's saved ipywidgets
   state in its page (about 100 KB per explorer page) for the widget manager
   scripts it would load from a CDN. The book loads none of those
   (`nb_ipywidgets_js: {}`; the explorers mount their own inlined modules from
   their `text/html` output), so nothing reads the state: we leave it out.

6. No stale pages. Sphinx never deletes the page of a chapter that was removed
   or renamed, so a build folder made before the change keeps serving it, with
   whatever scripts that old page loaded. After each build we delete every
   page that no current source document and no Sphinx index produced, and every
   figure in `_images/` that no page shows any more (each run of a chapter
   writes its figures under new names), so that the folder, and the copy of it
   that the students' wheel carries, holds only what the book shows.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ConfigError
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: The book's own styles; a folder not named `_static`, so Jupyter Book adds nothing by itself.
ASSETS = Path(__file__).parent / "assets"
COURSE_CSS = "course.css"
COURSE_JS = "course.js"
#: A page's reference to one of the figures Sphinx copies into `_images/`.
IMAGE_REFERENCE = re.compile(r"_images/([^\"'?#\s)]+)")
#: Where the copied MathJax lives inside the built site's `_static/`.
MATHJAX_TARGET = "mathjax"
#: Files (relative to the npm package's `es5/`) each bundle needs at run time.
BUNDLE_FILES = {
    "tex-svg-full.js": ["tex-svg-full.js"],
    # tex-chtml.js loads its web fonts and any TeX extension beyond the core
    # ones at run time, so those folders must sit beside it.
    "tex-chtml.js": ["tex-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions"],
}


def _package_dir(app: Sphinx) -> Path:
    return (Path(app.confdir) / app.config.offline_mathjax_package).resolve()


def _set_mathjax_path(app: Sphinx, config) -> None:
    """config-inited: serve MathJax from `_static/mathjax/`, never from a URL."""
    bundle = config.offline_mathjax_bundle
    if bundle not in BUNDLE_FILES:
        raise ConfigError(
            f"offline_mathjax_bundle must be one of {sorted(BUNDLE_FILES)}; got {bundle!r}"
        )
    if "://" in str(config.mathjax_path) and config.mathjax_path != _sphinx_default_mathjax():
        logger.warning(
            "offline_assets: ignoring mathjax_path=%r; the book serves its own MathJax",
            config.mathjax_path,
        )
    config.mathjax_path = f"{MATHJAX_TARGET}/{bundle}"  # relative paths are under _static/


def _sphinx_default_mathjax() -> str:
    from sphinx.ext.mathjax import MATHJAX_URL

    return MATHJAX_URL


def _add_course_styles(app: Sphinx) -> None:
    """builder-inited: add `assets/course.css` (trace tables, unbroken shapes) and `assets/course.js`
    (accessible names for the theme's buttons, a Tab stop for formulas that scroll) to every page."""
    if app.builder.format != "html":
        return
    app.config.html_static_path.append(str(ASSETS))  # copied into _static/ of the site
    app.add_css_file(COURSE_CSS)
    app.add_js_file(COURSE_JS)


def _require_mathjax(app: Sphinx) -> None:
    """builder-inited: fail at once, with the fix, if `npm ci` has not been run."""
    if app.builder.format != "html":
        return
    package = _package_dir(app)
    needed = [f"es5/{rel}" for rel in BUNDLE_FILES[app.config.offline_mathjax_bundle]] + ["LICENSE"]
    missing = [rel for rel in needed if not (package / rel).exists()]
    if missing:
        raise ConfigError(
            f"MathJax is missing from {package} (not found: {', '.join(missing)}). "
            "The book serves its own copy so that pages work offline: run `npm ci` "
            "in the repository root (or `make book`, which runs it) to install the "
            "version pinned in package-lock.json."
        )


def _copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    """build-finished: copy the bundle and MathJax's licence into the site."""
    if exception is not None or app.builder.format != "html":
        return
    es5 = _package_dir(app) / "es5"
    target = Path(app.outdir) / "_static" / MATHJAX_TARGET
    if target.exists():
        shutil.rmtree(target)  # no stale files from another bundle
    target.mkdir(parents=True)
    for rel in BUNDLE_FILES[app.config.offline_mathjax_bundle]:
        source, dest = es5 / rel, target / rel
        if source.is_dir():
            shutil.copytree(source, dest)
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest)
    shutil.copy2(es5.parent / "LICENSE", target / "LICENSE")
    version = _package_version(es5.parent)
    (target / "README.txt").write_text(
        f"MathJax {version} (https://www.mathjax.org), copied from the npm package by the\n"
        "book's offline_assets extension. Licensed under the Apache License 2.0: see LICENSE.\n",
        encoding="utf8",
    )


def _package_version(package: Path) -> str:
    import json

    try:
        return json.loads((package / "package.json").read_text(encoding="utf8"))["version"]
    except (OSError, ValueError, KeyError):
        return "(unknown version)"


def _mathjax_for_math_in_titles(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """html-page-context: every page whose navigation shows a title with math needs MathJax.

    Sphinx adds MathJax only to pages with equations in their body, but the
    sidebar lists every chapter's title, so a title such as "Why scale by
    $\\sqrt{d_k}$" would show as raw TeX on the other pages. If any title holds
    math, load MathJax on every page (runs before sphinx.ext.mathjax's handler).
    """
    if app.builder.format != "html" or app.registry.html_assets_policy == "always":
        return
    if any(next(iter(title.findall(nodes.math)), None) is not None for title in app.env.titles.values()):
        app.set_html_assets_policy("always")


def _refresh_index_redirect(app: Sphinx, exception: Exception | None) -> None:
    """build-finished: make `index.html` redirect to the current root document."""
    if exception is not None or app.builder.name != "html" or app.config.root_doc == "index":
        return
    index = Path(app.outdir) / "index.html"
    redirect = f'<meta http-equiv="Refresh" content="0; url={app.config.root_doc}.html" />\n'
    current = index.read_text(encoding="utf8") if index.exists() else None
    if current != redirect and (current is None or current.startswith("<meta http-equiv=\"Refresh\"")):
        index.write_text(redirect, encoding="utf8")  # only ever replace a redirect, never a page


def _drop_unused_thebe(app: Sphinx, config) -> None:
    """config-inited: unhook sphinx-thebe unless the thebe launch button is on."""
    launch = (config.html_theme_options or {}).get("launch_buttons", {}) or {}
    if launch.get("thebe"):
        return
    for listeners in app.events.listeners.values():
        for listener in list(listeners):
            if getattr(listener.handler, "__module__", "").startswith("sphinx_thebe"):
                app.disconnect(listener.id)
    app.registry.css_files[:] = [
        (name, attrs) for name, attrs in app.registry.css_files if not name.startswith("sphinx-thebe")
    ]


def _drop_unused_widget_state(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """html-page-context: leave out the ipywidgets state when no widget manager is loaded."""
    if app.builder.format != "html" or "nb_ipywidgets_js" not in app.config or app.config.nb_ipywidgets_js:
        return  # not a myst-nb build, or its widget scripts are loaded and read the state
    from myst_nb.sphinx_ import NbMetadataCollector

    if pagename in NbMetadataCollector.get_doc_data(app.env):
        NbMetadataCollector.get_js_files(app.env, pagename).pop("ipywidgets_state", None)


def _remove_stale_pages(app: Sphinx, exception: Exception | None) -> None:
    """build-finished: delete pages whose source document no longer exists."""
    if exception is not None or app.builder.name != "html":
        return
    outdir = Path(app.outdir)
    generated = {"index", "genindex", "search", *app.config.html_additional_pages}
    generated |= {f"{domain.name}-{index.name}" for domain in app.env.domains.values() for index in domain.indices}
    for page in outdir.rglob("*.html"):
        rel = page.relative_to(outdir)
        if rel.parts[0].startswith("_"):  # _static, _sources, _images: the theme's and Sphinx's files
            continue
        docname = rel.with_suffix("").as_posix()
        if docname not in app.env.found_docs and docname not in generated:
            logger.info("offline_assets: removing %s, whose source no longer exists", rel)
            page.unlink()
    images = outdir / "_images"
    if images.is_dir():
        shown = set()
        for page in outdir.rglob("*.html"):
            if not page.relative_to(outdir).parts[0].startswith("_"):
                shown.update(IMAGE_REFERENCE.findall(page.read_text(encoding="utf8", errors="replace")))
        for image in images.iterdir():
            if image.is_file() and image.name not in shown:
                logger.info("offline_assets: removing _images/%s, which no page shows", image.name)
                image.unlink()


def setup(app: Sphinx) -> dict:
    app.add_config_value("offline_mathjax_package", "node_modules/mathjax", "html")
    app.add_config_value("offline_mathjax_bundle", "tex-svg-full.js", "html")
    app.connect("config-inited", _set_mathjax_path)
    app.connect("config-inited", _drop_unused_thebe)
    app.connect("builder-inited", _require_mathjax)
    app.connect("builder-inited", _add_course_styles)
    app.connect("html-page-context", _mathjax_for_math_in_titles, priority=400)
    app.connect("html-page-context", _drop_unused_widget_state, priority=400)  # before myst-nb adds it
    app.connect("build-finished", _copy_mathjax)
    app.connect("build-finished", _refresh_index_redirect, priority=900)  # after sphinx-external-toc
    app.connect("build-finished", _remove_stale_pages)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
