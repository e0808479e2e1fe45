"""The HTML pages (the feedback files, the class summary) from their templates in `templates/`, with Jinja2.

Every value is escaped unless it is marked safe (`Markup`): the only markup
handed in is the check results' own HTML (`CheckResult._repr_html_`), which
escapes what it shows itself.
"""

from __future__ import annotations

from functools import lru_cache

import jinja2
from markupsafe import Markup

__all__ = ["Markup", "render"]


@lru_cache(maxsize=None)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader(__package__, "templates"), autoescape=True,
                              undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


def render(template: str, **context) -> str:
    """The page `templates/<template>` filled in with `context`."""
    return _environment().get_template(template).render(**context)
