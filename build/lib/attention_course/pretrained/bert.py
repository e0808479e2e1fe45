"""A BERT encoder forward pass in NumPy, attention by `multi_head_attention` (legal-summariser chapter).

    x_0     = LayerNorm(word_emb[ids] + pos_emb[0..n-1] + type_emb[type_ids])
    a_l     = LayerNorm(x_{l-1} + MultiHead(x_{l-1}))            for l = 1..L
    x_l     = LayerNorm(a_l + GELU(a_l W_1 + b_1) W_2 + b_2)

BERT is "post-LN": the layer norm comes after each residual sum, so the input
of layer l's attention is exactly the hidden state x_{l-1}. The learned
matrices are stored as torch `Linear` weights of shape (out, in); we transpose
them once when loading so that, as everywhere in this course, a projection is
the row-vector product `x @ w`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.multi_head import multi_head_attention


@dataclass(frozen=True)
class BertConfig:
    """The sizes of a BERT encoder, read from the model's config.json."""

    vocab_size: int
    """Number of word pieces in the vocabulary."""
    d_model: int
    """Width of every hidden state (config: hidden_size)."""
    n_layers: int
    """L, the number of encoder layers."""
    n_heads: int
    """h, attention heads per layer."""
    d_ff: int
    """Width of the feed-forward layer (config: intermediate_size)."""
    max_positions: int
    """Number of learned position embeddings: the longest input, [CLS] and [SEP] included."""
    type_vocab_size: int
    """Number of segment (token type) embeddings."""
    layer_norm_eps: float
    """The epsilon inside every layer norm."""

    @property
    def d_head(self) -> int:
        """d_k = d_v = d_model / h, the width of one head."""
        return self.d_model // self.n_heads

    @classmethod
    def from_json(cls, path: str | os.PathLike) -> "BertConfig":
        """Read a Hugging Face BERT config.json; refuse what this forward pass does not implement."""
        cfg = json.loads(Path(path).read_text())
        if cfg.get("model_type") != "bert" or cfg.get("hidden_act") != "gelu":
            raise ValueError(f"{path}: expected a BERT model with hidden_act 'gelu'; got "
                             f"{cfg.get('model_type')!r} with {cfg.get('hidden_act')!r}")
        if cfg.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"{path}: only absolute position embeddings are implemented")
        return cls(
            vocab_size=cfg["vocab_size"], d_model=cfg["hidden_size"], n_layers=cfg["num_hidden_layers"],
            n_heads=cfg["num_attention_heads"], d_ff=cfg["intermediate_size"],
            max_positions=cfg["max_position_embeddings"], type_vocab_size=cfg["type_vocab_size"],
            layer_norm_eps=cfg["layer_norm_eps"],
        )


@dataclass(frozen=True)
class BertLayer:
    """The learned parameters of one encoder layer (row-vector convention: y = x @ w + b)."""

    w_q: np.ndarray
    """(d_model, h * d_k) query projection; head i uses columns i*d_k:(i+1)*d_k."""
    b_q: np.ndarray
    """(h * d_k,)"""
    w_k: np.ndarray
    """(d_model, h * d_k) key projection."""
    b_k: np.ndarray
    """(h * d_k,)"""
    w_v: np.ndarray
    """(d_model, h * d_v) value projection."""
    b_v: np.ndarray
    """(h * d_v,)"""
    w_o: np.ndarray
    """(h * d_v, d_model) output projection that mixes the heads."""
    b_o: np.ndarray
    """(d_model,)"""
    ln_attn: tuple[np.ndarray, np.ndarray]
    """(gamma, beta), each (d_model,): the layer norm after attention + residual."""
    w_ff1: np.ndarray
    """(d_model, d_ff) feed-forward expansion."""
    b_ff1: np.ndarray
    """(d_ff,)"""
    w_ff2: np.ndarray
    """(d_ff, d_model) feed-forward contraction."""
    b_ff2: np.ndarray
    """(d_model,)"""
    ln_ff: tuple[np.ndarray, np.ndarray]
    """(gamma, beta), each (d_model,): the layer norm after feed-forward + residual."""


@dataclass(frozen=True)
class BertWeights:
    """Every learned parameter of a BERT encoder (the pooler is not used)."""

    config: BertConfig
    """Sizes."""
    word_embeddings: np.ndarray
    """(vocab_size, d_model) one row per word piece."""
    position_embeddings: np.ndarray
    """(max_positions, d_model) one row per position."""
    type_embeddings: np.ndarray
    """(type_vocab_size, d_model) one row per segment."""
    ln_embeddings: tuple[np.ndarray, np.ndarray]
    """(gamma, beta), each (d_model,): the layer norm of the summed embeddings."""
    layers: tuple[BertLayer, ...]
    """The L encoder layers, first to last."""


@dataclass(frozen=True)
class BertOutput:
    """What a forward pass returns: every hidden state and every attention weight."""

    hidden_states: np.ndarray
    """(L + 1, ..., n, d_model): the embeddings (index 0), then the output of each layer."""
    attentions: np.ndarray
    """(L, ..., h, n, n): attentions[l, ..., i, q, k] is the weight that query q of head i
    in layer l gives key k; each row sums to 1."""

    @property
    def last_hidden_state(self) -> np.ndarray:
        """(..., n, d_model) the output of the last layer."""
        return self.hidden_states[-1]


def _frozen(arr: np.ndarray, dtype) -> np.ndarray:
    out = np.ascontiguousarray(arr, dtype=dtype)
    out.flags.writeable = False  # shared model parameters: nobody may change them by accident
    return out


def load_bert_weights(model_dir: str | os.PathLike, dtype=np.float32) -> BertWeights:
    """Read config.json and model.safetensors (a Hugging Face BertModel) from `model_dir`.

    Linear weights, stored (out, in), are transposed to (in, out). `dtype` is
    float32 as stored, or float64 for a reference computation.
    """
    from safetensors.numpy import load_file  # imported here: only the model needs it

    model_dir = Path(model_dir)
    config = BertConfig.from_json(model_dir / "config.json")
    t = load_file(str(model_dir / "model.safetensors"))
    t = {k.removeprefix("bert."): v for k, v in t.items()}  # some checkpoints prefix every name

    def vec(name):
        return _frozen(t[name], dtype)

    def linear(name):
        return _frozen(t[name + ".weight"].T, dtype), vec(name + ".bias")  # (out, in) -> (in, out)

    def norm(name):
        return vec(name + ".weight"), vec(name + ".bias")

    layers = []
    for i in range(config.n_layers):
        p = f"encoder.layer.{i}."
        (w_q, b_q), (w_k, b_k), (w_v, b_v) = (linear(p + "attention.self." + n) for n in ("query", "key", "value"))
        w_o, b_o = linear(p + "attention.output.dense")
        w_ff1, b_ff1 = linear(p + "intermediate.dense")
        w_ff2, b_ff2 = linear(p + "output.dense")
        layers.append(BertLayer(
            w_q=w_q, b_q=b_q, w_k=w_k, b_k=b_k, w_v=w_v, b_v=b_v, w_o=w_o, b_o=b_o,
            ln_attn=norm(p + "attention.output.LayerNorm"),
            w_ff1=w_ff1, b_ff1=b_ff1, w_ff2=w_ff2, b_ff2=b_ff2,
            ln_ff=norm(p + "output.LayerNorm"),
        ))
    return BertWeights(
        config=config,
        word_embeddings=vec("embeddings.word_embeddings.weight"),
        position_embeddings=vec("embeddings.position_embeddings.weight"),
        type_embeddings=vec("embeddings.token_type_embeddings.weight"),
        ln_embeddings=norm("embeddings.LayerNorm"),
        layers=tuple(layers),
    )


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    """(..., d) -> (..., d): normalise each vector to mean 0, variance 1, then scale and shift."""
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # (..., 1), the biased variance, as torch
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


# Chebyshev fit of erfc(z) for z >= 0 with relative error below 1.2e-7
# (Press et al., Numerical Recipes, "erfcc"): float32 accuracy without SciPy.
_ERFC_COEFFS = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
                0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277)


def _erfc(z: np.ndarray) -> np.ndarray:
    """The complementary error function, elementwise, relative error < 1.2e-7."""
    a = np.abs(z)
    t = 1.0 / (1.0 + 0.5 * a)
    poly = np.zeros_like(t)
    for c in reversed(_ERFC_COEFFS):  # Horner's rule
        poly = poly * t + c
    y = t * np.exp(-a * a + poly)  # erfc(|z|)
    return np.where(z >= 0, y, 2.0 - y)


def gelu(x: np.ndarray) -> np.ndarray:
    """The exact GELU of BERT, x * Phi(x) = x/2 * erfc(-x/sqrt 2), to float32 accuracy."""
    return 0.5 * x * _erfc(-x / np.sqrt(2.0).astype(x.dtype)).astype(x.dtype, copy=False)


def embed(weights: BertWeights, ids: np.ndarray, token_type_ids: np.ndarray | None = None) -> np.ndarray:
    """(..., n) piece ids -> (..., n, d_model): word + position + segment embedding, layer-normed."""
    n = ids.shape[-1]
    types = np.zeros_like(ids) if token_type_ids is None else token_type_ids
    x = (weights.word_embeddings[ids]  # (..., n) -> (..., n, d_model)
         + weights.position_embeddings[:n]  # (n, d_model), broadcast over the batch
         + weights.type_embeddings[types])  # (..., n) -> (..., n, d_model)
    return layer_norm(x, *weights.ln_embeddings, weights.config.layer_norm_eps)


def encoder_layer(layer: BertLayer, x: np.ndarray, config: BertConfig, attn_mask=None):
    """One post-LN encoder layer; returns (output (..., n, d_model), weights (..., h, n, n))."""
    eps = config.layer_norm_eps
    attended, weights = multi_head_attention(
        x, layer.w_q, layer.w_k, layer.w_v, layer.w_o, config.n_heads, attn_mask,
        b_q=layer.b_q, b_k=layer.b_k, b_v=layer.b_v, b_o=layer.b_o, need_weights=True,
    )  # (..., n, d_model), (..., h, n, n)
    a = layer_norm(x + attended, *layer.ln_attn, eps)  # residual, then norm
    hidden = gelu(a @ layer.w_ff1 + layer.b_ff1)  # (..., n, d_model) x (d_model, d_ff) -> (..., n, d_ff)
    ff = hidden @ layer.w_ff2 + layer.b_ff2  # (..., n, d_ff) x (d_ff, d_model) -> (..., n, d_model)
    return layer_norm(a + ff, *layer.ln_ff, eps), weights


def bert_forward(weights: BertWeights, ids, attention_mask=None, token_type_ids=None) -> BertOutput:
    """Run the encoder on piece ids; keep every hidden state and attention weight.

    Args:
        weights: from `load_bert_weights`.
        ids: (..., n) int piece ids, [CLS] and [SEP] included (see `WordPieceTokenizer`).
        attention_mask: optional (..., n) bool or 0/1, True for real tokens and
            False for padding, as Hugging Face's; padding keys get weight 0.
        token_type_ids: optional (..., n) segment ids; zeros by default.

    Returns:
        BertOutput with hidden_states (L + 1, ..., n, d_model) and
        attentions (L, ..., h, n, n).
    """
    config = weights.config
    ids = _check_ids(ids, "ids", config.vocab_size)
    n = ids.shape[-1]
    if n > config.max_positions:
        raise ValueError(f"ids has shape {ids.shape}: {n} positions, but the model has only {config.max_positions}")
    if token_type_ids is not None:
        token_type_ids = _check_ids(token_type_ids, "token_type_ids", config.type_vocab_size, ids.shape)
    mask = None
    if attention_mask is not None:
        mask = np.asarray(attention_mask)
        if mask.shape != ids.shape or mask.dtype.kind not in "biu" or not np.isin(mask, (0, 1)).all():
            raise ValueError(f"attention_mask must be 0/1 or bool of the shape of ids {ids.shape}; "
                             f"got {mask.dtype} of shape {mask.shape}")
        mask = mask.astype(bool)[..., None, :]  # (..., n) -> (..., 1, n): every query, same keys
    x = embed(weights, ids, token_type_ids)  # (..., n, d_model)
    hidden_states, attentions = [x], []
    for layer in weights.layers:
        x, w = encoder_layer(layer, x, config, mask)  # (..., n, d_model), (..., h, n, n)
        hidden_states.append(x)
        attentions.append(w)
    return BertOutput(hidden_states=np.stack(hidden_states), attentions=np.stack(attentions))


def head_projections(weights: BertWeights, hidden_states: np.ndarray, layer: int, head: int):
    """The query, key and value vectors of one head: step 1 of the worked example, for real.

    Args:
        hidden_states: (L + 1, ..., n, d_model) from `bert_forward`.
        layer: 0-based layer index; its input is hidden_states[layer].
        head: 0-based head index.

    Returns:
        (q, k, v), each (..., n, d_head) = x @ W[:, cols] + b[cols] with
        cols = head*d_head : (head+1)*d_head.
    """
    config = weights.config
    if not 0 <= layer < config.n_layers or not 0 <= head < config.n_heads:
        raise ValueError(f"layer must be in 0..{config.n_layers - 1} and head in 0..{config.n_heads - 1}; "
                         f"got layer={layer}, head={head}")
    p = weights.layers[layer]
    x = hidden_states[layer]  # (..., n, d_model), the input of this layer's attention
    cols = slice(head * config.d_head, (head + 1) * config.d_head)
    return tuple(
        x @ w[:, cols] + b[cols]  # (..., n, d_model) x (d_model, d_head) -> (..., n, d_head)
        for w, b in ((p.w_q, p.b_q), (p.w_k, p.b_k), (p.w_v, p.b_v))
    )


def _check_ids(ids, name: str, limit: int, shape: tuple | None = None) -> np.ndarray:
    arr = np.asarray(ids)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers; got dtype {arr.dtype}")
    if arr.ndim < 1 or arr.shape[-1] == 0:
        raise ValueError(f"{name} must have shape (..., n) with n >= 1; got shape {arr.shape}")
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} must have the shape of ids {shape}; got shape {arr.shape}")
    if arr.min() < 0 or arr.max() >= limit:
        raise ValueError(f"{name} must be in 0..{limit - 1}; got values from {arr.min()} to {arr.max()}")
    return arr
