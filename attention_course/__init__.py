"""attention_course: how attention scores are computed, to the last decimal.

The package is laid out as the book is: `core` (softmax, masks, attention,
multi-head, positions: what the book teaches), `tiled` (attention tile by tile with an
online softmax, and its optional compiled accelerator), `chapters` (the data,
traces and measurements of one chapter each), `explorers` (the interactive
widgets), `pretrained` (a real model run with the course's own attention),
`decoder` (generating text: the KV cache and today's open checkpoints) and
`grading` (the exercises' checks, the sandboxed grader, release and
gradebooks). The names below are re-exported from them.

The primitives follow torch.nn.functional.scaled_dot_product_attention:

>>> from attention_course import BANK_BOT, scaled_dot_product_attention
>>> q, K, V = BANK_BOT.query[None, :], BANK_BOT.keys, BANK_BOT.values
>>> scaled_dot_product_attention(q, K, V).round(2)
array([[0.19, 0.91]])
"""

from .chapters.cost import attention_flops, backward_flops, loglog_slope, measure, score_matrix_bytes, tile_count
from .chapters.scaling import (
    jacobian_norm, max_weight, peakedness, projected_score_std, score_std, softmax_entropy, softmax_jacobian,
)
from .chapters.training import ToyTask, gradient_check, train
from .chapters.worked_example import BANK_BOT, BANK_BOT_QUERIES, AttentionTrace, WorkedExample, trace_attention
from .core.attention import attention_weights, repeat_kv, scaled_dot_product_attention
from .core.backward import attention_backward
from .core.masks import causal_mask, padding_mask, sliding_window_mask
from .core.multi_head import merge_heads, multi_head_attention, split_heads
from .core.positions import alibi_bias, alibi_slopes, apply_rope, rope_frequencies, sinusoidal_positions
from .core.softmax import softmax
from .decoder import KVCache, kv_cache_bytes, load_decoder, random_decoder
from .tiled.backward import flash_attention_backward, flash_attention_forward
from .tiled.flash import flash_attention
from .tiled.online_softmax import trace_online_softmax

__version__ = "0.1.0"


def __getattr__(name: str):
    """`attention_course.plots`, as the book's chapters first imported it: loaded (with matplotlib) on first use."""
    if name == "plots":
        from .chapters import plots

        return plots
    raise AttributeError(f"module 'attention_course' has no attribute {name!r}")

__all__ = [
    "AttentionTrace",
    "BANK_BOT",
    "BANK_BOT_QUERIES",
    "KVCache",
    "ToyTask",
    "WorkedExample",
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "attention_backward",
    "attention_flops",
    "attention_weights",
    "backward_flops",
    "causal_mask",
    "flash_attention",
    "flash_attention_backward",
    "flash_attention_forward",
    "gradient_check",
    "jacobian_norm",
    "kv_cache_bytes",
    "load_decoder",
    "loglog_slope",
    "max_weight",
    "measure",
    "merge_heads",
    "multi_head_attention",
    "padding_mask",
    "peakedness",
    "projected_score_std",
    "random_decoder",
    "repeat_kv",
    "rope_frequencies",
    "scaled_dot_product_attention",
    "score_matrix_bytes",
    "score_std",
    "sinusoidal_positions",
    "sliding_window_mask",
    "softmax",
    "softmax_entropy",
    "softmax_jacobian",
    "split_heads",
    "tile_count",
    "trace_attention",
    "trace_online_softmax",
    "train",
]
