"""What a decoder weighs, counted from its configuration: parameters, bytes, and the work of one token.

Every count comes from `layout.checkpoint_shapes`, the tensors a checkpoint
of the configuration stores, so it is the file's own count: a tied output
projection counts once, DeepSeek's multi-token-prediction layer not at all.
"""

from __future__ import annotations

from math import prod

from .cache import itemsize
from .config import DecoderConfig
from .layout import checkpoint_shapes


def parameter_count(config: DecoderConfig) -> int:
    """Numbers a checkpoint of `config` stores: every tensor's size, added up."""
    return sum(prod(shape) for shape in checkpoint_shapes(config).values())


def _expert_size(config: DecoderConfig) -> int:
    """Parameters of one routed expert (gate, up, down, and gpt-oss's biases)."""
    m = config.moe
    size = 3 * config.d_model * m.d_expert
    return size + (2 * m.d_expert + config.d_model if m.router == "softmax_top_k" else 0)


def active_parameter_count(config: DecoderConfig) -> int:
    """Parameters one token is multiplied by: all but the routed experts it is not sent to, and the embeddings.

    A token reads one row of the embedding matrix and multiplies by none of
    it, so an untied embedding matrix is left out (tied, it is the output
    projection too and counts). This is how gpt-oss's model card counts its
    5.1 billion active parameters.
    """
    c = config
    active = parameter_count(c) - (0 if c.tie_word_embeddings else c.vocab_size * c.d_model)
    if c.v4 is not None:  # DeepSeek-V4: experts in every layer, top_k of n_experts used (its hash tables count too)
        return active - c.n_layers * (c.v4.n_experts - c.v4.top_k) * 3 * c.d_model * c.v4.d_expert
    if c.moe is None:
        return active
    moe_layers = sum(c.is_moe_layer(i) for i in range(c.n_layers))
    return active - moe_layers * (c.moe.n_experts - c.moe.top_k) * _expert_size(c)


def weight_bytes(config: DecoderConfig, dtype=None) -> int:
    """Bytes of every parameter in `dtype` (default config.dtype, what the file stores them in)."""
    return parameter_count(config) * itemsize(config.dtype if dtype is None else dtype)


def decode_flops_per_token(config: DecoderConfig) -> int:
    """Multiply-add FLOPs (2 per product) of the projections for one new token: each active parameter used once.

    Attention's products with the cached keys and values (about 4 x heads x
    head size per cached token and layer) and elementwise work come on top.
    """
    return 2 * active_parameter_count(config)
