"""Inline an explorer's ES module and its `./x.js` imports into one module.

The same module text runs in two places: anywidget loads it in JupyterLab as
the widget's `_esm`, and the static book page imports it from a `data:` URL.
Neither can resolve a relative import (the module has no URL of its own, and
pages opened from file:// may not fetch sibling files), so the imports are
resolved here, in Python, when the explorer class is defined. No build step,
no node_modules.

The modules in `js/` keep to a small subset of ES module syntax, which this
checks: `import { a, b as c } from "./m.js";` and `export function` /
`export const` declarations, plus one `export default` in the entry module.
Each dependency becomes an immediately invoked function that returns its
exports, so its private names cannot clash with another module's.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

JS_DIR = Path(__file__).parent / "js"
"""Where the explorers' ES modules live (shipped as package data)."""

_IMPORT = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"\./([\w-]+\.js)";[ \t]*$', re.MULTILINE)
_ANY_IMPORT = re.compile(r"^\s*import\b", re.MULTILINE)
_EXPORT = re.compile(r"^export\s+(?=(?:async\s+)?function\b|const\b|let\b|class\b)", re.MULTILINE)
_EXPORTED_NAME = re.compile(r"^export\s+(?:async\s+)?(?:function\*?|const|let|class)\s+([A-Za-z_$][\w$]*)", re.MULTILINE)
_DEFAULT = re.compile(r"^export\s+default\b", re.MULTILINE)


def _read(name: str, js_dir: Path) -> str:
    path = js_dir / name
    if not path.is_file():
        raise ValueError(f"no ES module named {name!r} in {js_dir}")
    return path.read_text(encoding="utf-8")


def _namespace(name: str) -> str:
    """The variable that holds a dependency's exports: "math.js" -> "__ac_math"."""
    return "__ac_" + re.sub(r"\W", "_", name.removesuffix(".js"))


def _destructure(spec: str, name: str) -> str:
    """`{ a, b as c }` imported from `name` -> `const { a, b: c } = __ac_name;`."""
    parts = []
    for item in filter(None, (s.strip() for s in spec.split(","))):
        original, _, alias = (w.strip() for w in item.partition(" as "))
        parts.append(f"{original}: {alias}" if alias else original)
    return f"const {{ {', '.join(parts)} }} = {_namespace(name)};"


def _resolve_imports(source: str, name: str) -> tuple[str, list[str]]:
    """Replace each relative import by a destructuring of the dependency's namespace."""
    deps = [match.group(2) for match in _IMPORT.finditer(source)]
    body = _IMPORT.sub(lambda m: _destructure(m.group(1), m.group(2)), source)
    if _ANY_IMPORT.search(body):
        raise ValueError(f"{name}: only `import {{ ... }} from \"./x.js\";` imports can be bundled")
    return body, deps


def _as_dependency(source: str, name: str) -> str:
    """A dependency module as `const __ac_name = (() => { ...; return { exports }; })();`."""
    if _DEFAULT.search(source):
        raise ValueError(f"{name}: a dependency may not have a default export")
    exported = _EXPORTED_NAME.findall(source)
    body = _EXPORT.sub("", source)
    if re.search(r"^export\b", body, re.MULTILINE):
        raise ValueError(f"{name}: only `export function|const|let|class` declarations can be bundled")
    return f"// --- {name}\nconst {_namespace(name)} = (() => {{\n{body}\nreturn {{ {', '.join(exported)} }};\n}})();\n"


@cache
def bundle(entry: str, js_dir: Path = JS_DIR) -> str:
    """The ES module `entry` (a file in `js_dir`) with all its relative imports inlined.

    Dependencies come first, each once, in the order they are first needed;
    the entry module keeps its own exports (including `export default`).
    Raises ValueError for a missing module, an import cycle or syntax outside
    the supported subset.
    """
    order: list[str] = []
    bodies: dict[str, str] = {}

    def visit(name: str, stack: tuple[str, ...]) -> None:
        if name in stack:
            raise ValueError(f"import cycle: {' -> '.join(stack + (name,))}")
        if name in bodies:
            return
        body, deps = _resolve_imports(_read(name, js_dir), name)
        for dep in deps:
            visit(dep, stack + (name,))
        bodies[name] = body
        order.append(name)

    visit(entry, ())
    parts = [_as_dependency(bodies[name], name) for name in order[:-1]]
    parts.append(f"// --- {entry}\n{bodies[entry]}")
    return "\n".join(parts)
