"""A decoder run in NumPy with the course's own attention: today's open models, checkpoint in, logits out (book/decoding.ipynb).

    x_0 = embed[ids]                           (Gemma: times sqrt(d_model))
    x_l = x' + MLP(Norm(x'))  with  x' = x_{l-1} + Attention(Norm(x_{l-1}))   for l = 1..L
    logits = Norm(x_L) @ lm_head               (Gemma 2: soft-capped)

Attention is `attention.grouped_query_attention` (h_q query heads reading
h_kv <= h_q key/value heads; QK-norm, RoPE per layer, soft-capping, sinks,
sliding windows and chunks as the config asks) or, for DeepSeek-V3, `latent.latent_attention`;
DeepSeek-V3.2 and GLM-5 first let `indexer.select_keys` choose the keys each
query reads (DeepSeek Sparse Attention), and the latent attention's softmax
runs over those alone.
The MLP is `mlp.feed_forward`: a gated MLP or a mixture of experts. Gemma
norms the attention's and the MLP's outputs too before adding them. With a
`KVCache`, each call appends its tokens' keys and values and attends over
everything cached, so generating a token needs one query row per head.

The hybrid decoders (Qwen3-Next, Qwen3.5, OLMo hybrid, Kimi Linear) replace
attention in most layers by a Gated DeltaNet (`delta.delta_rule_mixer`): no
scores, a state per head that each token updates. Their cache (`HybridCache`) keeps
that state beside the softmax layers' keys and values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.norms import rms_norm
from ..core.softcap import softcap
from .attention import grouped_query_attention, qkv as _qkv
from .cache import KVCache, LatentCache, LayerCache
from .config import DecoderConfig
from .delta import delta_rule_mixer
from .hybrid_cache import HybridCache
from .indexer import IndexedLatentCache, select_keys
from .latent import latent_attention, latent_qkv
from .mlp import feed_forward, silu, swiglu
from .weights import DecoderWeights

__all__ = ["DecoderModel", "DecoderOutput", "rms_norm", "silu", "swiglu"]


@dataclass(frozen=True)
class DecoderOutput:
    """What one forward call returns."""

    logits: np.ndarray
    """(n, vocab_size) next-token scores after each of the n input tokens."""
    attentions: np.ndarray | None
    """(L, h_q, n, n_k) attention weights, n_k = tokens cached before the call + n; keys a sliding
    window or a chunk hides (or a cache no longer keeps) have weight 0, and so have, with DeepSeek Sparse
    Attention (DeepSeek-V3.2, GLM-5), the keys the indexer did not choose; with sinks (gpt-oss) each row
    sums to less than 1. A delta-rule layer (hybrid decoders) weighs no keys: its entries are all 0.
    DeepSeek-V4: (L, h_q, n, n_k + T), the keys axis holding the n_k tokens, then the compressed entries (T = the
    most any layer has so far; entries a layer lacks, that a query may not see yet or that its indexer did not pick
    weigh 0). None if not asked for."""
    hidden_states: np.ndarray
    """(L + 1, n, d_model): the embeddings (index 0), then the residual stream after each layer. Gemma 3n:
    (L + 1, A, n, d_model), AltUp's A copies; DeepSeek-V4: (L + 1, hc_mult, n, d_model), its residual streams."""


class DecoderModel:
    """A decoder (Llama, Mistral, Qwen2/3, Gemma 2/3, SmolLM3, gpt-oss, DeepSeek-V3/V3.2, GLM-5, MiniMax-M2, Llama 4,
    Qwen3-Next, Qwen3.5, OLMo hybrid, Kimi Linear; DeepSeek-V4 and Gemma 3n by their subclasses) run with the course's
    attention.

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
        """An empty cache for this model: a KVCache, a LatentCache for latent attention, an IndexedLatentCache
        (the indexer keys beside the latents) for DeepSeek Sparse Attention, a HybridCache for a decoder with
        delta-rule layers.

        With keep_window, sliding-window layers keep only what their window needs, chunked layers only their
        current chunk.
        """
        if self.config.delta is not None:
            return HybridCache(self.config.n_layers, [self.config.delta.is_delta_layer(i)
                                                      for i in range(self.config.n_layers)])
        windows = self.config.windows if keep_window else None
        if self.config.indexer is not None:
            return IndexedLatentCache(self.config.n_layers)  # the indexer keys beside the latents
        if self.config.latent is not None:
            return LatentCache(self.config.n_layers, window=windows)
        return KVCache(self.config.n_layers, window=windows, chunk=self.config.chunks if keep_window else None)

    def _layer_index(self, layer) -> int:
        if isinstance(layer, (bool, np.bool_)) or not isinstance(layer, (int, np.integer)) or \
                not 0 <= layer < self.config.n_layers:
            raise ValueError(f"layer must be in 0..{self.config.n_layers - 1}; got {layer}")
        return int(layer)

    def qkv(self, layer: int, x: np.ndarray, positions: np.ndarray, rotate: bool = True):
        """The queries, keys and values `layer` computes from the residual stream `x`.

        Args:
            layer: 0-based layer index.
            x: (n, d_model) the layer's input (hidden_states[layer] of a forward call).
            positions: (n,) the tokens' positions in the sequence.
            rotate: apply RoPE to q and k (as attention uses them); False
                returns them as the projections (and QK-norm) give them.

        Returns:
            q (h_q, n, d), k (h_kv, n, d) (QK-normed and rotated by their
            positions, with rotate) and v (h_kv, n, d_v). With latent
            attention, each head's key and value rebuilt from the latent:
            k (h, n, d_nope + d_rope), v (h, n, d_v).
        """
        layer = self._layer_index(layer)
        c, p = self.config, self.weights.layers[layer]
        if p.delta is not None:
            raise ValueError(f"layer {layer} is a delta-rule layer: it keeps a state, and has no scores of q and k")
        h = x if p.attn_norm is None else rms_norm(x, p.attn_norm, c.rms_norm_eps)  # (n, d_model)
        positions = np.asarray(positions)
        if c.latent is None:
            return _qkv(c, p, layer, h, positions, rotate_qk=rotate)
        q_nope, q_rope, latent, k_rope = latent_qkv(c, p.latent, layer, h, positions, rotate_qk=rotate)
        w_uk, w_uv = p.latent.absorbed(c.n_heads, c.latent.qk_nope_head_dim)  # (h, r, d_nope), (h, r, d_v)
        k_nope = latent[None] @ w_uk  # (1, n, r) x (h, r, d_nope) -> (h, n, d_nope)
        k = np.concatenate([k_nope, np.broadcast_to(k_rope, k_nope.shape[:-1] + k_rope.shape[-1:])], axis=-1)
        return np.concatenate([q_nope, q_rope], axis=-1), k, latent[None] @ w_uv  # v: (h, n, d_v)

    def _attention(self, layer: int, x: np.ndarray, positions: np.ndarray, cache: KVCache | None,
                   keep: np.ndarray | None = None):
        """One layer's attention on the residual stream x: (output (n, d_model), weights (h_q, n, n_k)).

        keep (n, n_k): the keys DeepSeek Sparse Attention's indexer chose, or None for every visible key.
        A delta-rule layer returns weights over no key, (h_q, n, 0).
        """
        c, p = self.config, self.weights.layers[layer]
        h = x if p.attn_norm is None else rms_norm(x, p.attn_norm, c.rms_norm_eps)  # (n, d_model); OLMo: none
        if p.delta is not None:  # a Gated DeltaNet: the state carried in the cache, no scores
            past = (None, None) if cache is None else cache.state(layer)
            out, carried = delta_rule_mixer(c.delta, p.delta, h, past)  # (n, d_model)
            if cache is not None:
                cache.set_state(layer, *carried, n_new=x.shape[0])
            weights = np.zeros((c.n_heads, x.shape[0], 0), dtype=out.dtype)  # (h_q, n, 0)
        elif c.latent is not None:
            out, weights = latent_attention(c, p, layer, h, positions, cache, keep=keep)
        else:
            out, weights = grouped_query_attention(c, p, layer, h, positions, cache)
        if p.post_attn_norm is not None:  # Gemma norms the attention's output before the residual
            out = rms_norm(out, p.post_attn_norm, c.rms_norm_eps)
        return out, weights

    def _feed_forward(self, layer: int, x: np.ndarray) -> np.ndarray:
        """One layer's MLP (or mixture of experts) on the residual stream x: (n, d_model)."""
        c, p = self.config, self.weights.layers[layer]
        h = x if p.mlp_norm is None else rms_norm(x, p.mlp_norm, c.rms_norm_eps)  # (n, d_model); OLMo: none
        out = feed_forward(c, p, h)  # (n, d_model)
        return out if p.post_mlp_norm is None else rms_norm(out, p.post_mlp_norm, c.rms_norm_eps)

    def embed(self, ids) -> np.ndarray:
        """(n,) ids -> (n, d_model): the embedding rows (Gemma: times sqrt(d_model), rounded to float32 first)."""
        x = self.weights.embeddings[self._ids(ids)]  # (n,) -> (n, d_model)
        if self.config.embed_scale is None:
            return x
        return x * x.dtype.type(np.float32(self.config.embed_scale))  # transformers keeps the scale in float32

    def forward(self, ids, cache: KVCache | None = None, need_weights: bool = True) -> DecoderOutput:
        """Run the decoder on `ids`, after what `cache` holds (if given), and append to the cache.

        Args:
            ids: (n,) token ids, or a str (with a tokenizer).
            cache: None (the ids are the whole sequence, at positions 0..n-1),
                or a cache of earlier tokens (`new_cache()`, or a Paged,
                Reserved or Quantized one): the ids then sit at positions
                len(cache) .. len(cache) + n - 1, and their keys and values
                (latents, for latent attention) are appended to it.
            need_weights: also return every layer's attention weights.

        Returns:
            DecoderOutput: logits (n, vocab_size), attentions (L, h_q, n, n_k)
            or None, hidden_states (L + 1, n, d_model).
        """
        c, w = self.config, self.weights
        ids, cache, past = self._inputs(ids, cache)
        positions = past + np.arange(ids.shape[0])  # (n,) where the new tokens sit
        x = self.embed(ids)  # (n, d_model)
        hidden, attentions = [x], []
        keep = None  # DeepSeek Sparse Attention: the keys the last indexer chose (GLM-5's shared layers reuse them)
        for i in range(c.n_layers):
            if c.indexer is not None:
                h = rms_norm(x, self.weights.layers[i].attn_norm, c.rms_norm_eps)  # (n, d_model), the indexer's input
                keep = select_keys(c, self.weights.layers[i], i, h, positions, cache, keep)  # (n, n_k)
            attended, weights = self._attention(i, x, positions, cache, keep)  # (n, d_model), (h_q, n, n_k)
            x = x + attended  # residual
            x = x + self._feed_forward(i, x)  # residual
            hidden.append(x)
            if need_weights:
                attentions.append(_all_keys(weights, past + ids.shape[0]))
        logits = rms_norm(x, w.final_norm, c.rms_norm_eps) @ w.lm_head  # (n, d_model) x (d_model, vocab)
        if c.final_softcap is not None:
            logits = softcap(logits, c.final_softcap)  # Gemma 2: logits squeezed into (-30, 30)
        return DecoderOutput(logits=logits, attentions=np.stack(attentions) if need_weights else None,
                             hidden_states=np.stack(hidden))

    __call__ = forward

    def _inputs(self, ids, cache):
        """(ids (n,) checked, cache checked, tokens the cache has seen) for a forward call."""
        ids = self._ids(ids)
        if cache is not None and not isinstance(cache, LayerCache):
            raise TypeError(f"cache must be a KVCache (model.new_cache()), a PagedKVCache, a ReservedKVCache, a QuantizedKVCache "
                            f"or None (anything with update, keys, values, seen, kept, nbytes and len); got {type(cache).__name__}")
        c = self.config
        if cache is not None and c.delta is not None and not isinstance(cache, HybridCache):
            raise TypeError(f"cache must be a HybridCache (model.new_cache()) for a model with delta-rule layers; "
                            f"got {type(cache).__name__}")
        if cache is not None and c.indexer is not None and not isinstance(cache, IndexedLatentCache):
            raise TypeError(f"{c.model_type} keeps its indexer keys in the cache: pass model.new_cache() (an "
                            f"IndexedLatentCache); got {type(cache).__name__}")
        if cache is not None and cache.n_layers != c.n_layers:
            raise ValueError(f"cache has {cache.n_layers} layers; the model has {c.n_layers}")
        return ids, cache, 0 if cache is None else len(cache)

    def generate(self, ids, max_new_tokens: int, use_cache: bool = True, stop_at_eos: bool = True):
        """Greedy generation: append the most likely next token, `max_new_tokens` times.

        Args:
            ids: (n,) prompt token ids, or a str (with a tokenizer).
            max_new_tokens: how many tokens to add at most.
            use_cache: keep a cache, so each step runs one token through
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
        cache = self.new_cache(keep_window=True) if use_cache else None  # what each layer can still attend to
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
        if c.latent is not None:
            heads = (f"{c.n_heads} heads of latent attention (latent {c.latent.kv_lora_rank}, RoPE key "
                     f"{c.latent.qk_rope_head_dim})")
        else:
            heads = f"{c.n_heads} query heads sharing {c.n_kv_heads} key/value heads of d = {c.head_dim}"
        experts = f", {c.moe.n_experts} experts (top {c.moe.top_k})" if c.moe is not None else ""
        if c.indexer is not None:  # DeepSeek Sparse Attention
            heads += f", each query reading the top {c.indexer.top_k} keys of {c.indexer.n_heads} indexer heads"
        if c.delta is not None:
            n_delta = sum(c.delta.is_delta_layer(i) for i in range(c.n_layers))
            heads = (f"{n_delta} delta-rule layers ({c.delta.n_v_heads} states of {c.delta.d_k} x {c.delta.d_v}) "
                     f"and {c.n_layers - n_delta} of " + heads)
        return f"DecoderModel({self.name!r}: {c.model_type}, {c.n_layers} layers, {heads}, d_model = {c.d_model}{sliding}{experts})"


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
