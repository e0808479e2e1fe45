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

import importlib

from .core.attention import attention_weights, repeat_kv, scaled_dot_product_attention
from .core.backward import attention_backward
from .core.masks import causal_mask, padding_mask, sliding_window_mask
from .core.multi_head import merge_heads, multi_head_attention, split_heads
from .core.positions import alibi_bias, alibi_slopes, apply_rope, rope_frequencies, sinusoidal_positions
from .core.softmax import softmax

__version__ = "0.1.0"

# What `import attention_course` loads is the core alone (NumPy its one dependency); the names below, the
# subpackages and `plots` are imported on first use, as NumPy and SciPy load theirs: a student's check, which
# needs a softmax, does not wait for the cost chapter's measurements, the decoders or matplotlib.
_LAZY_NAMES = {
    "chapters.cost": ("attention_flops", "backward_flops", "loglog_slope", "measure", "score_matrix_bytes",
                      "tile_count"),
    "chapters.scaling": ("jacobian_norm", "max_weight", "peakedness", "projected_score_std", "score_std",
                         "softmax_entropy", "softmax_jacobian"),
    "chapters.training": ("ToyTask", "gradient_check", "train"),
    "chapters.worked_example": ("BANK_BOT", "BANK_BOT_QUERIES", "AttentionTrace", "WorkedExample", "trace_attention"),
    "decoder": ("KVCache", "kv_cache_bytes", "load_decoder", "random_decoder"),
    "tiled.backward": ("flash_attention_backward", "flash_attention_forward"),
    "tiled.flash": ("flash_attention",),
    "tiled.online_softmax": ("trace_online_softmax",),
}
_LAZY_MODULES = {
    "chapters": "chapters", "core": "core", "decoder": "decoder", "explorers": "explorers", "grading": "grading",
    "pretrained": "pretrained", "tiled": "tiled",
    "plots": "chapters.plots",  # as the book's chapters first imported it (it needs matplotlib)
}
_MODULE_OF = {name: module for module, names in _LAZY_NAMES.items() for name in names}


def __getattr__(name: str):
    """A name of `__all__` or a subpackage not imported yet: imported now, and kept for the next lookup."""
    if name in _MODULE_OF:
        value = getattr(importlib.import_module(f".{_MODULE_OF[name]}", __name__), name)
    elif name in _LAZY_MODULES:
        value = importlib.import_module(f".{_LAZY_MODULES[name]}", __name__)
    else:
        raise AttributeError(f"module 'attention_course' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | set(_LAZY_MODULES))


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
