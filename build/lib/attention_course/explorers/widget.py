"""The shared base of the explorers: one ES module, live in Jupyter and static in the book.

An explorer is an `anywidget.AnyWidget` whose `_esm` is one module from `js/`
(bundled with its imports by `bundle`). In JupyterLab or Notebook 7 the widget
runs live: the module renders the controls, computes every update in the page
and syncs the state with the kernel through traitlets.

For pages without a kernel (the rendered book), `_repr_mimebundle_` adds a
`text/html` entry that inlines the same module text and mounts it on a small
in-page model (`js/mount.js`), starting from the state Python computed. The
book's config tells myst-nb to prefer that entry over the widget view
(`nb_mime_priority_overrides`), and JupyterLab still prefers the widget view.
"""

from __future__ import annotations

import html
import json
from typing import ClassVar

import anywidget

from .bundle import JS_DIR, bundle

CSS = (JS_DIR / "explorers.css").read_text(encoding="utf-8")
"""The explorers' stylesheet, shared by all of them."""

_BASE_TRAITS = frozenset(anywidget.AnyWidget.class_trait_names(sync=True)) | {"_esm", "_css", "_anywidget_id"}


def script_json(value) -> str:
    """`value` as JSON that is safe inside a <script> element.

    "<", ">" and "&" are written as \\u escapes (valid JSON and JavaScript), so
    no string in `value` can close the script or open a comment.
    """
    text = json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class Explorer(anywidget.AnyWidget):
    """Base class: set `_module` to the file name of the explorer's ES module in js/."""

    _module: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs) -> None:
        if cls.__dict__.get("_module"):
            cls._esm = bundle(cls._module)  # a multi-line string, which anywidget keeps as is
            cls._css = CSS
        super().__init_subclass__(**kwargs)

    def state(self) -> dict:
        """The explorer's own synced traits (not anywidget's or ipywidgets'), as JSON-ready values."""
        names = sorted(set(self.trait_names(sync=True)) - _BASE_TRAITS)
        return {name: getattr(self, name) for name in names}

    def summary(self) -> str:
        """Plain-text summary of what the explorer shows, computed by the package."""
        return type(self).__name__

    def static_html(self) -> str:
        """The explorer for a page without a kernel: the module inlined and mounted on the state."""
        dom_id = f"ac-explorer-{self.model_id}"
        call = f"mount({script_json(self._esm)}, {script_json(self.state())}, document.getElementById({script_json(dom_id)}));"
        fallback = html.escape(self.summary())
        return (
            f"<style>{CSS}</style>\n"
            f'<div class="ac-explorer-host" id="{dom_id}" data-explorer-host="{self._module.removesuffix(".js")}">'
            f'<noscript><pre>{fallback}</pre><p>Turn on JavaScript to move the controls.</p></noscript></div>\n'
            f'<script type="module">\n{bundle("mount.js")}\n{call}\n</script>\n'
        )

    def _repr_mimebundle_(self, **kwargs):
        data, metadata = super()._repr_mimebundle_(**kwargs)
        data["text/plain"] = self.summary()
        data["text/html"] = self.static_html()
        return data, metadata

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.summary()}>"
