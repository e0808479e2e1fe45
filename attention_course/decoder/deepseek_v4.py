"""DeepSeek-V4 run in NumPy: hyper-connected residual streams, compressed attention, hashed experts (book/decoding.ipynb).

    X_0 = hc_mult copies of embed[ids]                        (n, N, d_model)
    per layer, twice (the attention, then the mixture of experts):
        pre, post, comb = hyper-connection weights of X        (n, N), (n, N), (n, N, N)
        y   = Block(RMSNorm(sum_j pre_j X_j))                  (n, d_model)
        X   = post_k y + sum_j comb_jk X_j                     (n, N, d_model), per stream k
    logits = RMSNorm(sum_j pre_j X_j) @ head                   (the head's own pre weights)

The hyper-connection weights come from the streams themselves: the N streams
are flattened, divided by their root mean square and projected (fn, base,
scale) to pre = sigmoid(.) + eps, post = 2 sigmoid(.) and comb = softmax(.) +
eps, made nearly doubly stochastic by Sinkhorn-Knopp iterations (rows and
columns divided by their sums in turn, `sinkhorn`).

The attention is `v4_attention.v4_attention`; the mixture of experts scores
every expert by sqrt(softplus(x . e)) (scoring_func), takes the top k of
score + bias ("moe" layers) or those a table gives for the token id
("hash_moe"), renormalises their scores, times routed_scaling_factor, and adds
one shared expert; every expert's gate and up projections are clipped to
swiglu_limit before SiLU(gate) * up.

`load_decoder` returns a `DeepseekV4Model` for model_type "deepseek_v4"; the
checkpoint is read in DeepSeek's tensor names (as published, and as
transformers saves it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.norms import rms_norm
from ..core.softmax import softmax
from . import checkpoint_v4
from .config import DecoderConfig
from .mlp import silu
from .model import DecoderModel, DecoderOutput
from .options import UnsupportedConfigError
from .v4_attention import V4Cache, v4_attention

__all__ = ["DeepseekV4Model", "V4Cache", "hyper_weights", "sinkhorn"]


@dataclass(frozen=True)
class V4Layer:
    """One layer's tensors (torch's (out, in) layout); the c_ and i_ ones only in compressed layers."""

    attn_norm: np.ndarray
    ffn_norm: np.ndarray
    hc_attn: tuple[np.ndarray, np.ndarray, np.ndarray]
    """(fn ((2+N)N, N d_model), base ((2+N)N,), scale (3,))."""
    hc_ffn: tuple[np.ndarray, np.ndarray, np.ndarray]
    sinks: np.ndarray
    wq_a: np.ndarray
    q_norm: np.ndarray
    wq_b: np.ndarray
    wkv: np.ndarray
    kv_norm: np.ndarray
    wo_a: np.ndarray
    wo_b: np.ndarray
    gate: np.ndarray
    """(E, d_model) the router."""
    gate_bias: np.ndarray | None
    """(E,) added to the scores to choose ("moe" layers)."""
    tid2eid: np.ndarray | None
    """(vocab, k) int: the experts of each token id ("hash_moe" layers)."""
    experts: tuple[np.ndarray, np.ndarray, np.ndarray]
    """(w1 gate (E, d_e, d_model), w3 up (E, d_e, d_model), w2 down (E, d_model, d_e))."""
    shared: tuple[np.ndarray, np.ndarray, np.ndarray]
    shared_bias: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    """(gate, up, down) biases of the shared expert (mlp_bias), or None."""
    c_wkv: np.ndarray | None = None
    c_wgate: np.ndarray | None = None
    c_ape: np.ndarray | None = None
    c_norm: np.ndarray | None = None
    i_wkv: np.ndarray | None = None
    i_wgate: np.ndarray | None = None
    i_ape: np.ndarray | None = None
    i_norm: np.ndarray | None = None
    i_wq_b: np.ndarray | None = None
    i_weights: np.ndarray | None = None


@dataclass(frozen=True)
class V4Weights:
    config: DecoderConfig
    embeddings: np.ndarray
    head: np.ndarray
    """(vocab, d_model)."""
    final_norm: np.ndarray
    hc_head: tuple[np.ndarray, np.ndarray, np.ndarray]
    """(fn (N, N d_model), base (N,), scale (1,))."""
    layers: tuple[V4Layer, ...]


_PUBLISHED_NAMES = {"model.embed_tokens.weight": "embed.weight", "model.hc_head.hc_fn": "hc_head_fn",
                    "model.hc_head.hc_base": "hc_head_base", "model.hc_head.hc_scale": "hc_head_scale"}
"""The names published files give the tensors transformers saves under another."""


def _taker(tensors: dict[str, np.ndarray], config: DecoderConfig, dtype, source: str):
    """take(name): the tensor `checkpoint_v4.shapes` calls name, found under any of its names, its shape checked."""
    expected = checkpoint_v4.shapes(config)
    names = {}  # the file's name of each expected tensor
    for name in expected:
        for alias in (name, name.removeprefix("model."), _PUBLISHED_NAMES.get(name)):
            if alias is not None and alias in tensors:
                names[name] = alias
                break
        else:
            raise UnsupportedConfigError(f"{source}: the tensor {name!r} is missing")
    unknown = sorted(set(tensors) - set(names.values()))
    unknown = [n for n in unknown if not n.removeprefix("model.").startswith("mtp.")]  # multi-token prediction
    if unknown:
        raise UnsupportedConfigError(f"{source}: tensors this forward pass does not use: {', '.join(unknown[:5])}")

    def take(name: str, integer: bool = False) -> np.ndarray:
        arr = np.asarray(tensors[names[name]])
        if arr.shape != expected[name]:
            raise UnsupportedConfigError(f"{source}: {names[name]} has shape {arr.shape}; config.json implies "
                                         f"{expected[name]}")
        return arr.astype(np.int64 if integer else dtype)
    return take


def read_v4_weights(tensors: dict[str, np.ndarray], config: DecoderConfig, dtype, source: str) -> V4Weights:
    """A DeepSeek-V4 checkpoint's tensors (`checkpoint_v4.shapes`: DeepSeek's names, with or without the
    model. prefix; multi-token-prediction tensors, mtp.*, skipped) as `V4Weights`."""
    o, take = config.v4, _taker(tensors, config, dtype, source)
    layers = []
    for i in range(config.n_layers):
        a, f = f"model.layers.{i}.attn.", f"model.layers.{i}.ffn."
        hash_layer = o.mlp_layer_types[i] == "hash_moe"
        extra = {}
        if o.ratios[i]:
            extra = dict(c_wkv=take(a + "compressor.wkv.weight"), c_wgate=take(a + "compressor.wgate.weight"),
                         c_ape=take(a + "compressor.ape"), c_norm=take(a + "compressor.norm.weight"))
            if o.layer_types[i] == "compressed_sparse_attention":
                ic = a + "indexer.compressor."
                extra.update(i_wkv=take(ic + "wkv.weight"), i_wgate=take(ic + "wgate.weight"), i_ape=take(ic + "ape"),
                             i_norm=take(ic + "norm.weight"), i_wq_b=take(a + "indexer.wq_b.weight"),
                             i_weights=take(a + "indexer.weights_proj.weight"))
        experts = tuple(np.stack([take(f"{f}experts.{e}.{w}.weight") for e in range(o.n_experts)])
                        for w in ("w1", "w3", "w2"))
        layers.append(V4Layer(
            attn_norm=take(f"model.layers.{i}.attn_norm.weight"), ffn_norm=take(f"model.layers.{i}.ffn_norm.weight"),
            hc_attn=tuple(take(f"model.layers.{i}.hc_attn_{k}") for k in ("fn", "base", "scale")),
            hc_ffn=tuple(take(f"model.layers.{i}.hc_ffn_{k}") for k in ("fn", "base", "scale")),
            sinks=take(a + "attn_sink"), wq_a=take(a + "wq_a.weight"), q_norm=take(a + "q_norm.weight"),
            wq_b=take(a + "wq_b.weight"), wkv=take(a + "wkv.weight"), kv_norm=take(a + "norm.weight"),
            wo_a=take(a + "wo_a.weight"), wo_b=take(a + "wo_b.weight"), gate=take(f + "gate.weight"),
            gate_bias=None if hash_layer else take(f + "gate.bias"),
            tid2eid=take(f + "gate.tid2eid", integer=True) if hash_layer else None, experts=experts,
            shared=tuple(take(f"{f}shared_experts.{w}.weight") for w in ("w1", "w3", "w2")),
            shared_bias=tuple(take(f"{f}shared_experts.{w}.bias") for w in ("w1", "w3", "w2")) if config.mlp_bias
            else None, **extra))
    embeddings = take("model.embed_tokens.weight")
    head = embeddings if config.tie_word_embeddings else take("head.weight")
    return V4Weights(config=config, embeddings=embeddings, head=head, final_norm=take("model.norm.weight"),
                     hc_head=tuple(take(f"model.hc_head.hc_{k}") for k in ("fn", "base", "scale")),
                     layers=tuple(layers))


def sinkhorn(comb: np.ndarray, iterations: int, eps: float) -> np.ndarray:
    """(..., N, N) positive -> nearly doubly stochastic: columns divided by their sums, then rows and columns in turn.

    As transformers' DeepseekV4HyperConnection: one column pass, then
    iterations - 1 passes of rows then columns, each sum plus eps.
    """
    comb = comb / (comb.sum(axis=-2, keepdims=True) + eps)  # columns
    for _ in range(iterations - 1):
        comb = comb / (comb.sum(axis=-1, keepdims=True) + eps)  # rows
        comb = comb / (comb.sum(axis=-2, keepdims=True) + eps)  # columns
    return comb


def _flat_rms(streams: np.ndarray, eps: float) -> np.ndarray:
    flat = streams.reshape(streams.shape[0], -1)  # (n, N, d_model) -> (n, N*d_model)
    return rms_norm(flat, np.ones((), dtype=flat.dtype), eps)  # no gain


def hyper_weights(streams: np.ndarray, fn: np.ndarray, base: np.ndarray, scale: np.ndarray, n_iters: int,
                  rms_eps: float, hc_eps: float):
    """A hyper-connection's weights from the streams (n, N, d_model): pre (n, N), post (n, N), comb (n, N, N)."""
    n, hc = streams.shape[:2]
    mixes = _flat_rms(streams, rms_eps) @ fn.T  # (n, N*d_model) x (N*d_model, (2+N)N) -> (n, (2+N)N)
    pre_w, post_w, comb_w = mixes[:, :hc], mixes[:, hc:2 * hc], mixes[:, 2 * hc:].reshape(n, hc, hc)
    pre = 1.0 / (1.0 + np.exp(-(pre_w * scale[0] + base[:hc]))) + hc_eps  # (n, N)
    post = 2.0 / (1.0 + np.exp(-(post_w * scale[1] + base[hc:2 * hc])))  # (n, N)
    comb = softmax(comb_w * scale[2] + base[2 * hc:].reshape(hc, hc), axis=-1) + hc_eps  # (n, N, N)
    return pre, post, sinkhorn(comb, n_iters, hc_eps)


def _clipped_swiglu(x: np.ndarray, w_gate, w_up, w_down, limit: float, biases=None) -> np.ndarray:
    b_gate, b_up, b_down = biases or (0.0, 0.0, 0.0)
    gate = np.minimum(x @ w_gate.T + b_gate, limit)  # (n, d_model) x (d_model, d_e) -> (n, d_e)
    up = np.clip(x @ w_up.T + b_up, -limit, limit)
    return (silu(gate) * up) @ w_down.T + b_down  # (n, d_e) x (d_e, d_model) -> (n, d_model)


def v4_experts(config: DecoderConfig, p: V4Layer, x: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The mixture of experts of one layer on its normed input x (n, d_model) -> (n, d_model)."""
    o = config.v4
    logits = x @ p.gate.T  # (n, d_model) x (d_model, E) -> (n, E)
    if o.scoring_func == "sqrtsoftplus":
        scores = np.sqrt(np.logaddexp(0.0, logits))
    else:
        scores = 1.0 / (1.0 + np.exp(-logits))
    if p.tid2eid is not None:
        chosen = p.tid2eid[ids]  # (n, k): the token id's experts
    else:
        ranked = scores if p.gate_bias is None else scores + p.gate_bias
        chosen = np.argsort(-ranked, axis=-1, kind="stable")[:, :o.top_k]  # (n, k)
    weights = np.take_along_axis(scores, chosen, axis=-1)  # (n, k)
    weights = weights / (weights.sum(axis=-1, keepdims=True) + 1e-20) * x.dtype.type(o.routed_scaling_factor)
    out = np.zeros_like(x)
    w1, w3, w2 = p.experts
    for e in np.unique(chosen):
        rows, slots = np.nonzero(chosen == e)  # the tokens that chose expert e, and where
        y = _clipped_swiglu(x[rows], w1[e], w3[e], w2[e], o.swiglu_limit)  # (n_e, d_model)
        np.add.at(out, rows, y * weights[rows, slots][:, None])
    return out + _clipped_swiglu(x, *p.shared, o.swiglu_limit, p.shared_bias)


class DeepseekV4Model(DecoderModel):
    """DeepSeek-V4 (model_type deepseek_v4) run with the course's attention; built by `load_decoder`."""

    def new_cache(self, keep_window: bool = False) -> V4Cache:
        """An empty `V4Cache` (it always keeps only what the next tokens need; keep_window is not used)."""
        return V4Cache(self.config.n_layers)

    def qkv(self, layer, x, positions, rotate=True):
        raise NotImplementedError("DeepSeek-V4's keys are a window and compressed entries: see v4_attention")

    def _mix(self, streams: np.ndarray, hc, block, eps: float):
        o = self.config.v4
        pre, post, comb = hyper_weights(streams, *hc, o.hc_sinkhorn_iters, self.config.rms_norm_eps, o.hc_eps)
        collapsed = np.einsum("nj,njd->nd", pre, streams)  # (n, N) . (n, N, d_model) -> (n, d_model)
        y, extra = block(collapsed)
        mixed = np.einsum("njk,njd->nkd", comb, streams)  # comb^T @ X per token: (n, N, N), (n, N, d) -> (n, N, d)
        return post[:, :, None] * y[:, None, :] + mixed, extra  # (n, N, d_model)

    def head_input(self, streams: np.ndarray) -> np.ndarray:
        """(n, N, d_model) the last layer's streams -> (n, d_model): collapsed by the head's weights, normed.

        What transformers' DeepseekV4Model returns as its last hidden state.
        """
        c, w = self.config, self.weights
        fn, base, scale = w.hc_head
        pre = 1.0 / (1.0 + np.exp(-((_flat_rms(streams, c.rms_norm_eps) @ fn.T) * scale + base))) + c.v4.hc_eps
        return rms_norm(np.einsum("nj,njd->nd", pre, streams), w.final_norm, c.rms_norm_eps)  # (n, d_model)

    def forward(self, ids, cache: V4Cache | None = None, need_weights: bool = True) -> DecoderOutput:
        """Run DeepSeek-V4 on `ids`, after what `cache` holds (if given), and append to the cache.

        Returns:
            DecoderOutput: logits (n, vocab_size); attentions (L, h, n,
            n_total + T_max) or None, the keys axis holding the tokens first
            (n_total = tokens cached before the call + n; those a window no
            longer reaches have weight 0) then each layer's compressed entries
            in order (T_max = the most any layer has; a sliding-only layer
            has none, and entries a layer lacks, or that its query may not
            see or its indexer did not pick, weigh 0); hidden_states
            (L + 1, hc_mult, n, d_model), the residual streams.
        """
        c, w = self.config, self.weights
        ids = self._ids(ids)
        if cache is not None and not isinstance(cache, V4Cache):
            raise TypeError(f"cache must be a V4Cache (model.new_cache()) for deepseek_v4; got {type(cache).__name__}")
        if cache is not None and cache.n_layers != c.n_layers:
            raise ValueError(f"cache has {cache.n_layers} layers; the model has {c.n_layers}")
        work = V4Cache(c.n_layers) if cache is None else cache  # without a cache: a fresh one, dropped after
        past, n = work.seen, ids.shape[0]
        positions = past + np.arange(n)  # (n,)
        x = w.embeddings[ids]  # (n,) -> (n, d_model)
        streams = np.broadcast_to(x[:, None, :], (n, c.v4.hc_mult, c.d_model)).copy()  # (n, N, d_model): N copies
        hidden, per_layer = [streams], []
        for i, p in enumerate(w.layers):
            state = work.layers[i]
            streams, (tok_w, ent_w) = self._mix(
                streams, p.hc_attn,
                lambda h: self._attend(i, p, rms_norm(h, p.attn_norm, c.rms_norm_eps), positions, state), c.rms_norm_eps)
            streams, _ = self._mix(
                streams, p.hc_ffn,
                lambda h: (v4_experts(c, p, rms_norm(h, p.ffn_norm, c.rms_norm_eps), ids), None), c.rms_norm_eps)
            hidden.append(streams)
            if need_weights:
                per_layer.append((tok_w, ent_w))
        work.seen = past + n
        logits = self.head_input(streams) @ w.head.T  # (n, d_model) x (d_model, vocab)
        attentions = None
        if need_weights:
            t_max = max(e.shape[-1] for _, e in per_layer)
            attentions = np.zeros((c.n_layers, c.n_heads, n, past + n + t_max), dtype=logits.dtype)
            for i, (tok_w, ent_w) in enumerate(per_layer):
                attentions[i, :, :, past + n - tok_w.shape[-1]:past + n] = tok_w  # the kept tokens are the latest
                attentions[i, :, :, past + n:past + n + ent_w.shape[-1]] = ent_w
        return DecoderOutput(logits=logits, attentions=attentions,
                             hidden_states=np.stack(hidden).transpose(0, 2, 1, 3))  # (L+1, n, N, d) -> (L+1, N, n, d)

    __call__ = forward

    def _attend(self, i, p, h, positions, state):
        out, tok_w, ent_w = v4_attention(self.config, p, i, h, positions, state)
        return out, (tok_w, ent_w)

    def __repr__(self) -> str:
        c, o = self.config, self.config.v4
        kinds = {t: o.layer_types.count(t) for t in dict.fromkeys(o.layer_types)}
        return (f"DeepseekV4Model({self.name!r}: {c.n_layers} layers ({', '.join(f'{v} {k}' for k, v in kinds.items())}), "
                f"{c.n_heads} query heads sharing 1 key/value head of d = {c.head_dim}, window {o.window}, "
                f"{o.hc_mult} residual streams, {o.n_experts} experts (top {o.top_k}), d_model = {c.d_model})")
