"""A Llama-architecture decoder run in NumPy with the course's own attention (book/decoding.ipynb).

    x_0 = embed[ids]
    x_l = x'  + SwiGLU(RMSNorm(x'))  with  x' = x_{l-1} + Attention(RMSNorm(x_{l-1}))   for l = 1..L
    logits = RMSNorm(x_L) @ lm_head

Attention is grouped-query attention with RoPE: h_q query heads, h_kv <= h_q
key/value heads (query head i reads key/value head i // (h_q / h_kv)), queries
and keys rotated by their positions, a causal mask aligned lower-right (the new
tokens are the last ones) and, on sliding-window layers, only the window's keys.
With a `KVCache`, each call appends its tokens' keys and values and attends
over everything cached, so generating a token needs one query row per head.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..core.attention import _mix, attention_weights
from ..core.masks import causal_mask, sliding_window_mask
from ..core.multi_head import merge_heads, split_heads
from ..core.positions import apply_rope
from .cache import KVCache, LayerCache
from .config import DecoderConfig
from .weights import DecoderLayer, DecoderWeights, decoder_weights, read_checkpoint


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """(..., d) -> (..., d): divide each vector by its root mean square, then scale by `weight`.

    No mean is subtracted and there is no bias (unlike LayerNorm). Computed in
    float32 at least, as transformers does, then cast back to x's dtype.
    """
    work = x.astype(np.result_type(x.dtype, np.float32), copy=False)
    ms = np.mean(work * work, axis=-1, keepdims=True)  # (..., 1) mean of squares
    return weight * (work / np.sqrt(ms + eps)).astype(x.dtype, copy=False)


def silu(x: np.ndarray) -> np.ndarray:
    """x * sigmoid(x), elementwise, without overflow for large |x|."""
    return x * (0.5 * (1.0 + np.tanh(0.5 * x)))  # sigmoid(x) = (1 + tanh(x/2)) / 2, finite everywhere


def _project(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    y = x @ w  # (n, d_in) x (d_in, d_out) -> (n, d_out)
    return y if b is None else y + b


def swiglu(layer: DecoderLayer, x: np.ndarray) -> np.ndarray:
    """(n, d_model) -> (n, d_model): down(silu(gate(x)) * up(x))."""
    hidden = silu(_project(x, layer.w_gate, layer.b_gate)) * _project(x, layer.w_up, layer.b_up)  # (n, d_ff)
    return _project(hidden, layer.w_down, layer.b_down)  # (n, d_ff) x (d_ff, d_model) -> (n, d_model)


@dataclass(frozen=True)
class DecoderOutput:
    """What one forward call returns."""

    logits: np.ndarray
    """(n, vocab_size) next-token scores after each of the n input tokens."""
    attentions: np.ndarray | None
    """(L, h_q, n, n_k) attention weights, n_k = tokens cached before the call + n; keys a sliding
    window hides (or a sliding-window cache no longer keeps) have weight 0. None if not asked for."""
    hidden_states: np.ndarray
    """(L + 1, n, d_model): the embeddings (index 0), then the residual stream after each layer."""


class DecoderModel:
    """A Llama / Mistral / Qwen2 decoder whose attention is the course's `attention_weights`.

    Built by `load_decoder` (a checkpoint folder) or `random_decoder`.
    """

    def __init__(self, weights: DecoderWeights, tokenizer=None, name: str = "decoder"):
        self.weights = weights
        self.tokenizer = tokenizer
        self.name = name

    @property
    def config(self) -> DecoderConfig:
        """Sizes and options: n_layers, n_heads, n_kv_heads, head_dim, windows, ..."""
        return self.weights.config

    # --- text -------------------------------------------------------------------------------

    def _require_tokenizer(self):
        if self.tokenizer is None:
            raise ValueError(f"{self.name} has no tokenizer (no tokenizer.json in its folder): pass token ids")
        return self.tokenizer

    def encode(self, text: str) -> np.ndarray:
        """(n,) int64 token ids of `text`, with the special tokens tokenizer.json adds (a BOS, for some models)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str; got {type(text).__name__}")
        ids = self._require_tokenizer().encode(text).ids
        if not ids:
            raise ValueError(f"text must give at least one token; got {text!r}")
        return np.array(ids, dtype=np.int64)

    def decode(self, ids) -> str:
        """The text of token ids, special tokens left out."""
        return self._require_tokenizer().decode([int(i) for i in np.asarray(ids).ravel()], skip_special_tokens=True)

    def _ids(self, ids) -> np.ndarray:
        if isinstance(ids, str):
            return self.encode(ids)
        arr = np.asarray(ids)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"ids must be integer token ids (or a str, with a tokenizer); got dtype {arr.dtype}")
        if arr.ndim != 1 or arr.shape[0] == 0:
            raise ValueError(f"ids must have shape (n,) with n >= 1; got shape {arr.shape}")
        if arr.min() < 0 or arr.max() >= self.config.vocab_size:
            raise ValueError(f"ids must be in 0..{self.config.vocab_size - 1}; got values from {arr.min()} to {arr.max()}")
        return arr.astype(np.int64, copy=False)

    # --- the forward pass ---------------------------------------------------------------------

    def new_cache(self, keep_window: bool = False) -> KVCache:
        """An empty KVCache for this model; with keep_window, sliding-window layers keep only what their window needs."""
        return KVCache(self.config.n_layers, window=self.config.windows if keep_window else None)

    def qkv(self, layer: int, x: np.ndarray, positions: np.ndarray, rotate: bool = True):
        """The queries, keys and values `layer` computes from the residual stream `x`.

        Args:
            layer: 0-based layer index.
            x: (n, d_model) the layer's input (hidden_states[layer] of a forward call).
            positions: (n,) the tokens' positions in the sequence.
            rotate: apply RoPE to q and k (as attention uses them); False
                returns them as the projections give them.

        Returns:
            q (h_q, n, d), k (h_kv, n, d) (rotated by their positions, with
            rotate) and v (h_kv, n, d).
        """
        if not 0 <= layer < self.config.n_layers:
            raise ValueError(f"layer must be in 0..{self.config.n_layers - 1}; got {layer}")
        c, p = self.config, self.weights.layers[layer]
        h = rms_norm(x, p.attn_norm, c.rms_norm_eps)  # (n, d_model)
        q = split_heads(_project(h, p.w_q, p.b_q), c.n_heads)  # (n, h_q*d) -> (h_q, n, d)
        k = split_heads(_project(h, p.w_k, p.b_k), c.n_kv_heads)  # (n, h_kv*d) -> (h_kv, n, d)
        v = split_heads(_project(h, p.w_v, p.b_v), c.n_kv_heads)  # (h_kv, n, d)
        if not rotate:
            return q, k, v
        q = apply_rope(q, positions, base=c.rope_theta)  # rotated by position; same shape
        k = apply_rope(k, positions, base=c.rope_theta)  # the cache keeps keys rotated
        return q, k, v

    def _attention(self, layer: int, x: np.ndarray, positions: np.ndarray, cache: KVCache | None):
        """One layer's attention: (output (n, d_model), weights (h_q, n, n_k))."""
        c, p = self.config, self.weights.layers[layer]
        q, k, v = self.qkv(layer, x, positions)  # (h_q, n, d), (h_kv, n, d), (h_kv, n, d)
        if cache is not None:
            k, v = cache.update(layer, k, v)  # (h_kv, n_k, d): what was cached, then the new tokens
        n, n_k = q.shape[-2], k.shape[-2]
        window = c.windows[layer]
        if window is None:
            mask = causal_mask(n, n_k, lower_right=True)  # the n queries are the last n of the n_k positions
        else:
            mask = sliding_window_mask(n, n_k, window, lower_right=True)
        weights = attention_weights(q, k, attn_mask=mask, enable_gqa=True)  # (h_q, n, n_k)
        heads = _mix(weights, v, enable_gqa=True)  # (h_q, n, n_k) x (h_kv, n_k, d) -> (h_q, n, d), shared heads
        return _project(merge_heads(heads), p.w_o, p.b_o), weights  # (n, h_q*d) x (h_q*d, d_model)

    def forward(self, ids, cache: KVCache | None = None, need_weights: bool = True) -> DecoderOutput:
        """Run the decoder on `ids`, after what `cache` holds (if given), and append to the cache.

        Args:
            ids: (n,) token ids, or a str (with a tokenizer).
            cache: None (the ids are the whole sequence, at positions 0..n-1),
                or a KVCache (or a Paged, Reserved or Quantized one) of earlier tokens: the ids then sit at positions
                len(cache) .. len(cache) + n - 1, and their keys and values
                are appended to it.
            need_weights: also return every layer's attention weights.

        Returns:
            DecoderOutput: logits (n, vocab_size), attentions (L, h_q, n, n_k)
            or None, hidden_states (L + 1, n, d_model).
        """
        c, w = self.config, self.weights
        ids = self._ids(ids)
        if cache is not None and not isinstance(cache, LayerCache):
            raise TypeError(f"cache must be a KVCache (model.new_cache()), a PagedKVCache, a ReservedKVCache, a QuantizedKVCache "
                            f"or None (anything with update, keys, values, seen, kept, nbytes and len); got {type(cache).__name__}")
        if cache is not None and cache.n_layers != c.n_layers:
            raise ValueError(f"cache has {cache.n_layers} layers; the model has {c.n_layers}")
        past = 0 if cache is None else len(cache)
        positions = past + np.arange(ids.shape[0])  # (n,) where the new tokens sit
        x = w.embeddings[ids]  # (n,) -> (n, d_model)
        hidden, attentions = [x], []
        for i, p in enumerate(w.layers):
            attended, weights = self._attention(i, x, positions, cache)  # (n, d_model), (h_q, n, n_k)
            x = x + attended  # residual
            x = x + swiglu(p, rms_norm(x, p.mlp_norm, c.rms_norm_eps))  # residual
            hidden.append(x)
            if need_weights:
                attentions.append(_all_keys(weights, past + ids.shape[0]))
        logits = rms_norm(x, w.final_norm, c.rms_norm_eps) @ w.lm_head  # (n, d_model) x (d_model, vocab)
        return DecoderOutput(logits=logits, attentions=np.stack(attentions) if need_weights else None,
                             hidden_states=np.stack(hidden))

    __call__ = forward

    def generate(self, ids, max_new_tokens: int, use_cache: bool = True, stop_at_eos: bool = True):
        """Greedy generation: append the most likely next token, `max_new_tokens` times.

        Args:
            ids: (n,) prompt token ids, or a str (with a tokenizer).
            max_new_tokens: how many tokens to add at most.
            use_cache: keep a KVCache, so each step runs one token through
                the model; False runs the whole sequence again at every step
                (the same tokens, much more work).
            stop_at_eos: stop after a token of config.eos_token_ids.

        Returns:
            (n + new,) the prompt's ids followed by the new ones; for a str
            prompt, the prompt followed by the generated text.
        """
        if isinstance(max_new_tokens, (bool, np.bool_)) or not isinstance(max_new_tokens, (int, np.integer)) or max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be a non-negative integer; got {max_new_tokens!r}")
        prompt = self._ids(ids)
        tokens = [int(t) for t in prompt]
        cache = self.new_cache() if use_cache else None
        step_input = prompt
        for _ in range(int(max_new_tokens)):
            if cache is not None:
                logits = self.forward(step_input, cache, need_weights=False).logits  # only the new token(s)
            else:
                logits = self.forward(np.array(tokens), need_weights=False).logits  # the whole sequence again
            token = int(np.argmax(logits[-1]))  # the first of equal maxima, as torch's argmax
            tokens.append(token)
            step_input = np.array([token])
            if stop_at_eos and token in self.config.eos_token_ids:
                break
        out = np.array(tokens, dtype=np.int64)
        if isinstance(ids, str):
            return _continue_text(ids, self.decode(prompt), self.decode(out))
        return out

    def __repr__(self) -> str:
        c = self.config
        windows = sorted({w for w in c.windows if w is not None})
        sliding = f", sliding window {windows}" if windows else ""
        return (f"DecoderModel({self.name!r}: {c.model_type}, {c.n_layers} layers, {c.n_heads} query heads sharing "
                f"{c.n_kv_heads} key/value heads of d = {c.head_dim}, d_model = {c.d_model}{sliding})")


def _all_keys(weights: np.ndarray, n_total: int) -> np.ndarray:
    """(h, n, n_k) -> (h, n, n_total): weights over every position, zeros for keys a cache no longer keeps."""
    missing = n_total - weights.shape[-1]
    if missing == 0:
        return weights
    out = np.zeros(weights.shape[:-1] + (n_total,), dtype=weights.dtype)
    out[..., missing:] = weights  # the kept keys are the most recent ones
    return out


def _continue_text(prompt: str, prompt_decoded: str, all_decoded: str) -> str:
    """The prompt as typed, followed by the text the new tokens add."""
    if all_decoded.startswith(prompt_decoded):
        return prompt + all_decoded[len(prompt_decoded):]
    return all_decoded


def load_decoder(folder: str | os.PathLike, dtype=np.float32) -> DecoderModel:
    """Read a Hugging Face Llama, Mistral or Qwen2 checkpoint folder and run it in NumPy.

    The folder holds config.json and model.safetensors (or its shards and
    model.safetensors.index.json), and optionally tokenizer.json for text in
    and out. `dtype` is float32 (transformers' default) or float64 for a
    reference run. Raises UnsupportedConfigError, naming the key, for an
    option this forward pass does not implement.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder; load_decoder needs a checkpoint folder with config.json")
    if np.dtype(dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"dtype must be float32 or float64; got {np.dtype(dtype)}")
    config = DecoderConfig.from_json(folder / "config.json")
    weights = decoder_weights(read_checkpoint(folder), config, dtype, source=str(folder))
    tokenizer = None
    if (folder / "tokenizer.json").is_file():
        try:
            from tokenizers import Tokenizer  # imported here: only text in and out needs it
        except ImportError:
            raise ImportError(f'{folder / "tokenizer.json"} needs tokenizers: pip install "attention-course[book]"') from None

        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.no_truncation()
    return DecoderModel(weights, tokenizer, name=folder.name)


def random_decoder(rng: np.random.Generator, *, vocab_size: int = 64, d_model: int = 32, n_layers: int = 2,
                   n_heads: int = 4, n_kv_heads: int = 2, head_dim: int | None = None, d_ff: int | None = None,
                   window: int | None = None, rope_theta: float = 10000.0, dtype=np.float64) -> DecoderModel:
    """A decoder with random weights (normal, scaled by 1/sqrt(fan-in)), for examples and measurements.

    Every layer uses `window` (None: full causal attention). The weights come
    from `rng`, so the same seed gives the same model.
    """
    head_dim = head_dim or d_model // n_heads
    d_ff = d_ff or 2 * d_model
    cfg = {"model_type": "llama", "vocab_size": vocab_size, "hidden_size": d_model, "num_hidden_layers": n_layers,
           "num_attention_heads": n_heads, "num_key_value_heads": n_kv_heads, "head_dim": head_dim,
           "intermediate_size": d_ff, "rms_norm_eps": 1e-6, "rope_theta": rope_theta}
    config = replace(DecoderConfig.from_dict(cfg, "random_decoder"), windows=(window,) * n_layers)

    def linear(d_in, d_out):  # stored (out, in), as a checkpoint stores it
        return rng.standard_normal((d_out, d_in)) / np.sqrt(d_in)

    tensors = {"model.embed_tokens.weight": rng.standard_normal((vocab_size, d_model)),
               "model.norm.weight": np.ones(d_model), "lm_head.weight": linear(d_model, vocab_size)}
    for i in range(n_layers):
        p = f"model.layers.{i}."
        for name, d_in, d_out in (("self_attn.q_proj", d_model, n_heads * head_dim),
                                  ("self_attn.k_proj", d_model, n_kv_heads * head_dim),
                                  ("self_attn.v_proj", d_model, n_kv_heads * head_dim),
                                  ("self_attn.o_proj", n_heads * head_dim, d_model),
                                  ("mlp.gate_proj", d_model, d_ff), ("mlp.up_proj", d_model, d_ff),
                                  ("mlp.down_proj", d_ff, d_model)):
            tensors[p + name + ".weight"] = linear(d_in, d_out)
        tensors[p + "input_layernorm.weight"] = np.ones(d_model)
        tensors[p + "post_attention_layernorm.weight"] = np.ones(d_model)
    return DecoderModel(decoder_weights(tensors, config, dtype, source="random_decoder"), name="random decoder")
