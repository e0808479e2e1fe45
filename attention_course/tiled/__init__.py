"""Attention tile by tile with an online softmax, the idea behind FlashAttention (book/cost.ipynb).

- `online_softmax`: one step of the online softmax, the readable tiled loop
  and a trace of its state after every tile (what the book walks through and
  the tiled exercise is graded against).
- `flash`: `flash_attention`, which runs that loop or, with the `[fast]`
  extra installed, the compiled accelerator in `_compiled`.

`unshifted_exp_limit` is the bound under which the accelerator sums exp(score)
without a running max (book/cost.ipynb, section 4).
"""

from ._compiled.driver import unshifted_exp_limit
from .flash import BACKENDS, DEFAULT_BLOCK_SIZE, available_backends, default_backend, flash_attention
from .online_softmax import OnlineSoftmaxState, online_softmax_update, tiled_attention, trace_online_softmax

__all__ = [
    "BACKENDS",
    "DEFAULT_BLOCK_SIZE",
    "OnlineSoftmaxState",
    "available_backends",
    "default_backend",
    "flash_attention",
    "online_softmax_update",
    "tiled_attention",
    "trace_online_softmax",
    "unshifted_exp_limit",
]
