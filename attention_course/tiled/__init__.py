"""Attention tile by tile with an online softmax, the idea behind FlashAttention (book/cost.ipynb).

- `online_softmax`: one step of the online softmax, the readable tiled loop
  and a trace of its state after every tile (what the book walks through and
  the tiled exercise is graded against).
- `flash`: `flash_attention`, which runs that loop or, with the `[fast]`
  extra installed, the compiled accelerator in `_compiled`.
- `backward`: the tiled backward pass (book/backward.ipynb):
  `flash_attention_forward` keeps the output and one log-sum-exp per query,
  `flash_attention_backward` recomputes each tile's scores from them, and
  `backward_query_tile` is its loop over the key tiles of one tile of queries.

`unshifted_exp_limit` is the bound under which the accelerator sums exp(score)
without a running max (book/cost.ipynb, section 4).
"""

from ._compiled.driver import unshifted_exp_limit
from .backward import backward_query_tile, flash_attention_backward, flash_attention_forward
from .flash import BACKENDS, DEFAULT_BLOCK_SIZE, available_backends, default_backend, flash_attention
from .online_softmax import OnlineSoftmaxState, online_softmax_update, tiled_attention, trace_online_softmax

__all__ = [
    "BACKENDS",
    "DEFAULT_BLOCK_SIZE",
    "OnlineSoftmaxState",
    "available_backends",
    "backward_query_tile",
    "default_backend",
    "flash_attention",
    "flash_attention_backward",
    "flash_attention_forward",
    "online_softmax_update",
    "tiled_attention",
    "trace_online_softmax",
    "unshifted_exp_limit",
]
