"""pytest configuration for the whole repository (the notebooks run by nbval).

Every notebook nbval runs starts a Jupyter kernel. jupyter_client picks the
kernel's TCP ports before the kernel binds them, so when two pytest-xdist
workers start kernels at the same moment, one kernel can find its port taken
("Address already in use") and die before it answers; nbval then reports every
cell of that notebook as an error ("Kernel died before replying to
kernel_info"), although nothing in the notebook is wrong. Starting the kernel
again with fresh ports is the fix: it is what a person would do.

It also marks the slow parts (the markers are listed in pyproject.toml): every
notebook nbval runs is a `notebook` test, every test of a module that imports
torch or transformers a `transformers` test, and every test of a slow part (book,
browser, notebook, sandbox, transformers, compiled, corpus) is `slow` too, so that
`pytest -m "not slow"` (`make check`) leaves them all out.
"""

from __future__ import annotations

import functools
import logging
import types

import nbval.kernel
import pytest

KERNEL_START_ATTEMPTS = 3
SLOW_PARTS = ("book", "browser", "notebook", "sandbox", "transformers", "compiled", "corpus")

logger = logging.getLogger(__name__)


def _retrying(start_new_kernel):
    @functools.wraps(start_new_kernel)
    def start(*args, **kwargs):
        for attempt in range(1, KERNEL_START_ATTEMPTS + 1):
            try:
                return start_new_kernel(*args, **kwargs)
            except RuntimeError as error:  # "Kernel died before replying to kernel_info"
                if attempt == KERNEL_START_ATTEMPTS:
                    raise
                logger.warning("kernel start %d failed (%s); starting it again", attempt, error)

    return start


nbval.kernel.start_new_kernel = _retrying(nbval.kernel.start_new_kernel)


def _imports_torch(module) -> bool:
    """True if a test module holds torch or transformers at its top level (its cross-checks build their models)."""
    return any(isinstance(value, types.ModuleType) and value.__name__.split(".")[0] in ("torch", "transformers")
               for value in vars(module).values())


def pytest_collection_modifyitems(items):
    """Mark each notebook nbval runs `notebook`, each test of a module that imports torch `transformers`, and each
    test of a slow part `slow`."""
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.notebook)
        module = getattr(item, "module", None)
        if module is not None and _imports_torch(module):
            item.add_marker(pytest.mark.transformers)
        if any(item.get_closest_marker(part) for part in SLOW_PARTS):
            item.add_marker(pytest.mark.slow)
