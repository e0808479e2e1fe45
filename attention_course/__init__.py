"""attention_course: how attention scores are computed, to the last decimal.

The primitives follow torch.nn.functional.scaled_dot_product_attention:

>>> from attention_course import BANK_BOT, scaled_dot_product_attention
>>> q, K, V = BANK_BOT.query[None, :], BANK_BOT.keys, BANK_BOT.values
>>> scaled_dot_product_attention(q, K, V).round(2)
array([[0.19, 0.91]])
"""

from .attention import attention_weights, scaled_dot_product_attention
from .flash import flash_attention
from .masks import causal_mask, padding_mask
from .multi_head import merge_heads, multi_head_attention, split_heads
from .softmax import softmax
from .worked_example import BANK_BOT, AttentionTrace, WorkedExample, trace_attention

__version__ = "0.1.0"

__all__ = [
    "BANK_BOT",
    "AttentionTrace",
    "WorkedExample",
    "attention_weights",
    "causal_mask",
    "flash_attention",
    "merge_heads",
    "multi_head_attention",
    "padding_mask",
    "scaled_dot_product_attention",
    "softmax",
    "split_heads",
    "trace_attention",
]
