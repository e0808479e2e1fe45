"""pytest configuration for the whole repository (the notebooks run by nbval).

Every notebook nbval runs starts a Jupyter kernel. jupyter_client picks the
kernel's TCP ports before the kernel binds them, so when two pytest-xdist
workers start kernels at the same moment, one kernel can find its port taken
("Address already in use") and die before it answers; nbval then reports every
cell of that notebook as an error ("Kernel died before replying to
kernel_info"), although nothing in the notebook is wrong. Starting the kernel
again with fresh ports is the fix: it is what a person would do.
"""

from __future__ import annotations

import functools
import logging

import nbval.kernel

KERNEL_START_ATTEMPTS = 3

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
