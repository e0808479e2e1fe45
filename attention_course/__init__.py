"""attention_course: how attention scores are computed, to the last decimal.

The primitives follow torch.nn.functional.scaled_dot_product_attention:

>>> from attention_course import BANK_BOT, scaled_dot_product_attention
>>> q, K, V = BANK_BOT.query[None, :], BANK_BOT.keys, BANK_BOT.values
>>> scaled_dot_product_attention(q, K, V).round(2)
array([[0.19, 0.91]])
"""

from .attention import attention_weights, scaled_dot_product_attention
from .cost import attention_flops, loglog_slope, measure, score_matrix_bytes, tile_count
from .flash import flash_attention
from .masks import causal_mask, padding_mask
from .multi_head import merge_heads, multi_head_attention, split_heads
from .online_softmax import trace_online_softmax
from .scaling import jacobian_norm, max_weight, peakedness, score_std, softmax_entropy, softmax_jacobian
from .softmax import softmax
from .training import ToyTask, gradient_check, train
from .worked_example import BANK_BOT, AttentionTrace, WorkedExample, trace_attention

__version__ = "0.1.0"

__all__ = [
    "BANK_BOT",
    "AttentionTrace",
    "ToyTask",
    "WorkedExample",
    "attention_flops",
    "attention_weights",
    "causal_mask",
    "flash_attention",
    "gradient_check",
    "jacobian_norm",
    "loglog_slope",
    "max_weight",
    "measure",
    "merge_heads",
    "multi_head_attention",
    "padding_mask",
    "peakedness",
    "scaled_dot_product_attention",
    "score_matrix_bytes",
    "score_std",
    "softmax",
    "softmax_entropy",
    "softmax_jacobian",
    "split_heads",
    "tile_count",
    "trace_attention",
    "trace_online_softmax",
    "train",
]
