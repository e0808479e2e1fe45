"""Gemma 3n's text model run in NumPy with the course's attention (Gemma3nForCausalLM; config in config_gemma3n).

Attention is Gemma 3's with three changes: the values are RMS-normed too (no
gain), the scores are not scaled (score_scale 1: the norms already fix the
size of q and k), and the last layers attend over the keys and values of the
last earlier layer of their type (`Gemma3nOptions.kv_sources`), computing
none of their own. Around it, the residual stream is A copies (AltUp):

    H = [x_0, rescaled x_0 W_1, ...]                                (A, n, d) from the embeddings
    per layer:  P_k = H_k + sum_j c_kj H_j                           predict; c from a router on H_0
                a = P_0;  h = Norm(a)
                y = a + Norm(Attention(h));  y = (y + h + Norm(h L R)) / sqrt(2)      LAuReL beside attention
                y = y + Norm(MLP(Norm(y)))                           the gate keeps what is above a quantile
                H_k = P_k + (1 + e_k) (y - P_0)                       correct; e from the router on y
                H_1.. += Norm(gelu(H_0 s W_g) * u_l W_p)             the layer's per-token input u_l
    x = mean(H_0, rescaled H_k W'_k);  logits = softcap(Norm(x) E^T)

The per-layer input u_l mixes a per-layer embedding of the token with a
projection of its embedding. Every function here is what
transformers' modeling_gemma3n computes, step for step.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from ..core.multi_head import merge_heads, split_heads
from ..core.norms import rms_norm
from ..core.softcap import softcap
from .attention import attend, project, rotate
from .checkpoint_gemma3n import Gemma3nLayer
from .mlp import gelu_tanh
from .model import DecoderModel, DecoderOutput, _all_keys


def gaussian_top_k(gate: np.ndarray, sparsity: float) -> np.ndarray:
    """(n, w) -> (n, w): relu(gate - (mean + std * Phi^-1(sparsity))) per row, as if the gate were Gaussian.

    A fraction `sparsity` of a Gaussian row lies below the cutoff, so about
    that fraction of the activations become 0; the others are shifted down by
    the cutoff. Phi^-1 is the standard normal's quantile function; std is the
    population one.
    """
    z = np.float32(NormalDist().inv_cdf(sparsity))  # float32, as transformers computes it
    mean = gate.mean(axis=-1, keepdims=True)  # (n, 1)
    std = gate.std(axis=-1, keepdims=True)  # (n, 1), divided by w
    return np.maximum(gate - (mean + std * z), 0)


def _rescaled(x: np.ndarray, target: np.ndarray) -> np.ndarray:
    """(n, d) scaled row by row to the root mean square `target` (n, 1)."""
    rms = np.sqrt(np.maximum(np.mean(x * x, axis=-1, keepdims=True), 1e-5))  # (n, 1)
    return x * target / rms


def _router(e: Gemma3nLayer, x: np.ndarray, eps: float) -> np.ndarray:
    """(n, d) -> (n, A): AltUp's router, tanh of a projection of the normed and 1/d-scaled stream."""
    d = x.shape[-1]
    scaled = rms_norm(x, e.router_norm, eps) * np.float32(d ** -1.0)  # (n, d)
    return np.tanh(scaled @ e.modality_router)  # (n, d) x (d, A) -> (n, A)


class Gemma3nModel(DecoderModel):
    """Gemma 3n's text model: `DecoderModel` with AltUp, LAuReL, per-layer inputs and KV sharing.

    `forward` returns hidden_states of shape (L + 1, A, n, d_model): every
    AltUp copy entering the first layer and leaving each layer, as
    transformers records them.
    """

    def qkv(self, layer: int, x: np.ndarray, positions: np.ndarray, rotate: bool = True):
        """Not offered for Gemma 3n: a layer's input is A copies, and the last layers compute no keys of their own."""
        raise NotImplementedError("qkv is not offered for Gemma 3n: its layers attend from AltUp's predicted copy, and "
                                  "its last layers read the keys and values of an earlier layer (config.gemma3n.kv_sources)")

    def per_layer_inputs(self, ids: np.ndarray, x0: np.ndarray) -> np.ndarray:
        """(n,) ids and their (n, d) embeddings -> (n, L, P): each layer's input for each token."""
        c, g, e = self.config, self.config.gemma3n, self.weights.gemma3n
        n, L, p_dim = ids.shape[0], c.n_layers, g.d_per_layer
        table = np.where(ids < g.vocab_per_layer, ids, 0)  # tokens past the table use token 0's row
        embedded = e.per_layer_embeddings[table] * x0.dtype.type(np.float32(p_dim ** 0.5))  # (n, L*P)
        projected = (x0 @ e.per_layer_model_projection) * x0.dtype.type(np.float32(c.d_model ** -0.5))  # (n, L*P)
        projected = rms_norm(projected.reshape(n, L, p_dim), e.per_layer_projection_norm, c.rms_norm_eps)  # (n, L, P)
        return (projected + embedded.reshape(n, L, p_dim)) * x0.dtype.type(1 / np.sqrt(np.float32(2.0)))

    def _attention(self, layer: int, h: np.ndarray, positions: np.ndarray, cache, shared: dict):
        """(output (n, d), weights (h_q, n, n_k)) of one layer on its normed active copy h (n, d)."""
        c, p = self.config, self.weights.layers[layer]
        rope, eps = c.ropes[layer], c.rms_norm_eps
        q = rms_norm(split_heads(project(h, p.w_q, p.b_q), c.n_heads), p.q_norm, eps)  # (h_q, n, d)
        q = rotate(q, positions, rope)
        source = c.gemma3n.kv_sources[layer]
        if source == layer:
            k = rms_norm(split_heads(project(h, p.w_k, p.b_k), c.n_kv_heads), p.k_norm, eps)  # (h_kv, n, d)
            k = rotate(k, positions, rope)
            v = split_heads(project(h, p.w_v, p.b_v), c.n_kv_heads)  # (h_kv, n, d)
            v = rms_norm(v, np.ones((), v.dtype), eps)  # the values normed too, without a gain
            if cache is not None:
                k, v = cache.update(layer, k, v)  # (h_kv, n_k, d)
            shared[layer] = (k, v)
        else:
            k, v = shared[source]  # the keys and values of the last earlier layer of this type
        first_position = int(positions[-1]) + 1 - k.shape[-2]
        heads, weights = attend(c, p, layer, q, k, v, first_position)  # (h_q, n, d), (h_q, n, n_k)
        return project(merge_heads(heads), p.w_o, p.b_o), weights  # (n, h_q*d) x (h_q*d, d) -> (n, d)

    def _mlp(self, layer: int, x: np.ndarray) -> np.ndarray:
        """(n, d) -> (n, d): the gated GELU MLP, its gate sparsified on the layers that ask for it."""
        p, sparsity = self.weights.layers[layer], self.config.gemma3n.sparsity[layer]
        gate = x @ p.w_gate  # (n, d) x (d, w) -> (n, w)
        if sparsity > 0:
            gate = gaussian_top_k(gate, sparsity)
        return (gelu_tanh(gate) * (x @ p.w_up)) @ p.w_down  # (n, w) x (w, d) -> (n, d)

    def _layer(self, layer: int, streams: np.ndarray, per_layer: np.ndarray, positions, cache, shared: dict):
        """(A, n, d) copies -> (A, n, d) copies, and the attention weights, through one layer."""
        c, p, e = self.config, self.weights.layers[layer], self.weights.gemma3n.layers[layer]
        g, eps = c.gemma3n, c.rms_norm_eps
        active_idx = g.altup_active_idx
        coefs = _router(e, streams[active_idx], eps) @ e.prediction_coefs  # (n, A) x (A, A*A) -> (n, A*A)
        coefs = coefs.reshape(coefs.shape[0], g.altup_num_inputs, g.altup_num_inputs)  # (n, A, A): [t, k, j]
        predictions = streams + np.einsum("tkj,jtd->ktd", coefs, streams)  # (A, n, d): P_k = H_k + sum_j c_kj H_j
        active = predictions[active_idx]  # (n, d)
        normed = rms_norm(active, p.attn_norm, eps)
        laurel = normed + rms_norm(normed @ e.laurel_left @ e.laurel_right, e.laurel_norm, eps)  # (n, d)
        attended, weights = self._attention(layer, normed, positions, cache, shared)
        y = active + rms_norm(attended, p.post_attn_norm, eps)  # (n, d)
        y = (y + laurel) / math.sqrt(2)
        y = y + rms_norm(self._mlp(layer, rms_norm(y, p.mlp_norm, eps)), p.post_mlp_norm, eps)  # (n, d)
        gains = _router(e, y, eps) @ e.correction_coefs + 1.0  # (n, A) x (A, A) -> (n, A)
        corrected = predictions + (y - active)[None] * gains.T[:, :, None]  # (A, n, d): each copy takes its share
        first = corrected[active_idx] * e.correct_output_scale if g.altup_correct_scale else corrected[active_idx]
        gated = gelu_tanh(first @ e.per_layer_gate) * per_layer  # (n, d) x (d, P) -> (n, P), times u_l
        update = rms_norm(gated @ e.per_layer_projection, e.per_layer_norm, eps)  # (n, P) x (P, d) -> (n, d)
        corrected[1:] = corrected[1:] + update  # every copy but the first
        return corrected, weights

    def forward(self, ids, cache=None, need_weights: bool = True) -> DecoderOutput:
        """`DecoderModel.forward` for Gemma 3n: logits (n, vocab), attentions (L, h_q, n, n_k) or None,
        hidden_states (L + 1, A, n, d_model)."""
        c, w, e = self.config, self.weights, self.weights.gemma3n
        ids, cache, past = self._inputs(ids, cache)
        positions = past + np.arange(ids.shape[0])  # (n,)
        x0 = self.embed(ids)  # (n, d), times sqrt(d)
        per_layer = self.per_layer_inputs(ids, x0)  # (n, L, P)
        target = np.sqrt(np.mean(x0 * x0, axis=-1, keepdims=True))  # (n, 1)
        streams = np.stack([x0, *(_rescaled(x0 @ m, target) for m in e.altup_projections)])  # (A, n, d)
        hidden, attentions, shared = [streams], [], {}
        for i in range(c.n_layers):
            streams, weights = self._layer(i, streams, per_layer[:, i], positions, cache, shared)
            hidden.append(streams)
            if need_weights:
                attentions.append(_all_keys(weights, past + ids.shape[0]))
        target = np.sqrt(np.mean(streams[0] * streams[0], axis=-1, keepdims=True))  # (n, 1)
        copies = [streams[0], *(_rescaled(s @ m, target) for s, m in zip(streams[1:], e.altup_unembed_projections))]
        x = np.mean(np.stack(copies), axis=0)  # (A, n, d) -> (n, d)
        logits = rms_norm(x, w.final_norm, c.rms_norm_eps) @ w.lm_head  # (n, d) x (d, vocab)
        if c.final_softcap is not None:
            logits = softcap(logits, c.final_softcap)
        return DecoderOutput(logits=logits, attentions=np.stack(attentions) if need_weights else None,
                             hidden_states=np.stack(hidden))

    __call__ = forward
