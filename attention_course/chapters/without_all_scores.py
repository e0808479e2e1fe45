"""Attention that scores fewer keys, or none: what the chapter measures (book/without_all_scores.ipynb).

- `BANK_BOT_INDEXER`: a two-head lightning indexer for the bank-bot example,
  small enough to follow by hand.
- `attention_sequence`, `projected_indexer` and `top_k_loss`: what top-k
  selection drops (weight mass, output) on a longer sequence.
- `recall_error`: how well a delta-rule state and a softmax over a cache
  return the values of stored key/value pairs.
- `first_token_weight`: the weight a zero-valued first token must take for a
  head to pass only a fraction of its output, and the output gate that does
  it instead.
- `FRONTIER_CONFIGS`, `LayerMemory` and `layer_memories`: numbers each layer
  kind keeps and reads per decoded token, from published configurations.
- `COST_MODELS`, `LayerKindCost` and `layer_kind_costs`: the bytes each layer
  kind of the published configurations caches per token or keeps as a state.
- `sparse_decode_step` and `time_decode_steps`: one decoding step of a full,
  a sparse and a delta-rule layer, timed (benchmarks/bench_frontier.py prints
  the same measurement at larger sizes).

The formulas themselves live in `core/sparse.py` and `core/delta_rule.py`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ..core._checks import as_float_array, frozen_array, positive_int, require_ndim
from ..core.attention import attention_weights, scaled_dot_product_attention
from ..core.delta_rule import delta_rule_step, gated_delta_rule, l2_normalize
from ..core.sparse import indexer_scores, top_k_mask
from ..decoder.cache import itemsize
from ..decoder.published import published_entry


@dataclass(frozen=True)
class SmallIndexer:
    """A lightning indexer's inputs for one query (`core.sparse.indexer_scores`)."""

    q_index: np.ndarray
    """(h_I, n_q, d_I) the indexer's queries, one per indexer head."""
    k_index: np.ndarray
    """(n_k, d_I) the indexer's keys, one per token."""
    head_weights: np.ndarray
    """(n_q, h_I) the weight of each head's vote."""
    scale: float
    """Multiplies each head's dot products before the relu."""

    def scores(self) -> np.ndarray:
        """(n_q, n_k) the indexer's scores."""
        return indexer_scores(self.q_index, self.k_index, self.head_weights, scale=self.scale)


BANK_BOT_INDEXER = SmallIndexer(
    # Each token's indexer key is two of its key's four coordinates (the 2nd and the 4th): k_I = K[:, [1, 3]].
    k_index=frozen_array([[0, 0], [2, 1], [0, 0.4], [0, 1]]),
    # Head 1 looks along the first of them, head 2 for the second without the first.
    q_index=frozen_array([[[2, 0]], [[-1, 1]]]),
    head_weights=frozen_array([[1, 1]]),
    scale=1.0,
)
"""A two-head indexer (d_I = 2) for the query of "blocked" over "my card was blocked".

Its keys are the 2nd and 4th coordinates of the example's keys; head 1's
query (2, 0) looks along the first, head 2's (-1, 1) along the second against
the first; both heads count once (w = 1, 1) and the scale is 1.
"""


def attention_sequence(rng: np.random.Generator, n_k: int, d_k: int, d_v: int, n_q: int = 1, *,
                       relevant: int = 0, boost: float = 0.0):
    """Random queries (n_q, d_k), keys (n_k, d_k) and values (n_k, d_v); each query's `relevant` planted keys.

    Entries are standard normal, so with the scale 1/sqrt(d_k) a score is
    about N(0, 1). With `relevant` > 0, each query gets that many earlier keys
    (among the first n_k - n_q, which every query sees) moved along its own
    direction so that its scores of them rise by exactly `boost` (a key
    planted for one query moves the others' scores a little too): a query
    with a few keys that matter, as trained heads have. The queries are the last n_q
    tokens (lower-right causal alignment).
    """
    n_k, d_k, d_v, n_q = (positive_int(x, name) for x, name in ((n_k, "n_k"), (d_k, "d_k"), (d_v, "d_v"),
                                                                   (n_q, "n_q")))
    if n_q > n_k:
        raise ValueError(f"n_q must be at most n_k; got n_q = {n_q}, n_k = {n_k}")
    if relevant < 0 or relevant > n_k - n_q:
        raise ValueError(f"relevant must lie in 0 .. n_k - n_q = {n_k - n_q}; got {relevant}")
    query = rng.standard_normal((n_q, d_k))
    key = rng.standard_normal((n_k, d_k))
    value = rng.standard_normal((n_k, d_v))
    for t in range(n_q):
        chosen = rng.choice(n_k - n_q, size=relevant, replace=False)
        # adding c q to a key adds c |q|^2 / sqrt(d_k) to its score: c = boost sqrt(d_k) / |q|^2 adds boost
        key[chosen] += boost * np.sqrt(d_k) / (query[t] @ query[t]) * query[t]
    return query, key, value


def projected_indexer(rng: np.random.Generator, query, key, d_index: int) -> np.ndarray:
    """(n_q, n_k) scores of a one-head indexer that sees q and k through a random d_k x d_I projection.

    k_I = K P and q_I = Q P with P of standard normal entries / sqrt(d_I), so
    q_I . k_I is about q . k (Johnson-Lindenstrauss); the relu and the scale
    1/sqrt(d_k) are `indexer_scores`'. A cheap ranking, less exact as d_I shrinks.
    """
    q = as_float_array(query, "query")
    k = as_float_array(key, "key")
    require_ndim(q, "query", 2, "(n_q, d_k)")
    require_ndim(k, "key", 2, "(n_k, d_k)")
    d_index = positive_int(d_index, "d_index")
    proj = rng.standard_normal((q.shape[-1], d_index)) / np.sqrt(d_index)  # (d_k, d_I)
    q_index = (q @ proj)[None]  # (n_q, d_k) x (d_k, d_I) -> (1, n_q, d_I)
    k_index = k @ proj  # (n_k, d_k) x (d_k, d_I) -> (n_k, d_I)
    return indexer_scores(q_index, k_index, np.ones((q.shape[0], 1)), scale=1 / np.sqrt(q.shape[-1]))


@dataclass(frozen=True)
class TopKLoss:
    """What keeping each query's k best keys loses, for several k."""

    ks: tuple[int, ...]
    """The k tried."""
    dropped_mass: np.ndarray
    """(len(ks),) the full softmax's weight on the keys not kept, averaged over the queries."""
    output_error: np.ndarray
    """(len(ks),) |o_sparse - o_full| / the values' root-mean-square norm, averaged over the queries
    (1: an output as far off as a whole value is long)."""


def top_k_loss(query, key, value, index_scores, ks) -> TopKLoss:
    """The weight mass and the output lost by top-k selection (causal, queries aligned lower-right).

    Args:
        query: (n_q, d_k); key: (n_k, d_k); value: (n_k, d_v).
        index_scores: (n_q, n_k) the ranking (the scores themselves for an exact indexer).
        ks: the k to try (positive ints).
    """
    q = as_float_array(query, "query")
    k = as_float_array(key, "key")
    v = as_float_array(value, "value")
    s = as_float_array(index_scores, "index_scores")
    if s.shape != (q.shape[0], k.shape[0]):
        raise ValueError(f"index_scores must have shape (n_q, n_k) = {(q.shape[0], k.shape[0])}; got {s.shape}")
    n_q, n_k = s.shape
    full = attention_weights(q, k, attn_mask=top_k_mask(s, n_k))  # (n_q, n_k): every visible key kept
    full_out = full @ v  # (n_q, n_k) x (n_k, d_v) -> (n_q, d_v)
    value_size = np.sqrt(np.mean(np.sum(v * v, axis=-1)))  # root-mean-square |v|
    ks = tuple(positive_int(x, "ks") for x in ks)
    dropped, errors = [], []
    for top in ks:
        keep = top_k_mask(s, top)  # (n_q, n_k)
        sparse = attention_weights(q, k, attn_mask=keep)  # (n_q, n_k)
        out = sparse @ v  # (n_q, n_k) x (n_k, d_v) -> (n_q, d_v)
        dropped.append(float(np.mean(np.where(keep, 0.0, full).sum(-1))))
        errors.append(float(np.mean(np.linalg.norm(out - full_out, axis=-1)) / value_size))
    return TopKLoss(ks, np.array(dropped), np.array(errors))


def recall_error(rng: np.random.Generator, n_pairs: int, d_k: int, d_v: int, memory: str,
                 query_gain: float = 2.0) -> float:
    """Mean |read - v| / |v| over n_pairs stored pairs, each read back with its own key.

    Keys have entries +-1 (norm sqrt(d_k)), values are standard normal.

    - memory="delta": the pairs are written one after another into one
      d_k x d_v delta-rule state (keys L2-normalised, b = 1, no decay), then
      each key reads the final state: S^T k.
    - memory="least_squares": the best any d_k x d_v state S read as S^T k
      can do: S solves min sum |S^T k - v|^2 (normalised keys), exact for
      n_pairs <= d_k, not for more (the reads are linear in the key).
    - memory="softmax": a softmax over the cache of all pairs, queried with
      `query_gain` times the key and the scale 1/sqrt(d_k) (a query's own key
      then scores query_gain * sqrt(d_k), the others about N(0, query_gain^2)).
    """
    n_pairs, d_k, d_v = positive_int(n_pairs, "n_pairs"), positive_int(d_k, "d_k"), positive_int(d_v, "d_v")
    keys = rng.choice([-1.0, 1.0], size=(n_pairs, d_k))
    values = rng.standard_normal((n_pairs, d_v))
    if memory == "delta":
        unit = l2_normalize(keys)  # (n, d_k)
        # (h, n, d) = (1, n, d); the query does not matter for the final state
        _, state = gated_delta_rule(unit[None], unit[None], values[None], np.zeros((1, n_pairs)),
                                    np.ones((1, n_pairs)), scale=1.0)
        reads = unit @ state[0]  # (n, d_k) x (d_k, d_v) -> (n, d_v)
    elif memory == "least_squares":
        unit = l2_normalize(keys)  # (n, d_k)
        state = np.linalg.lstsq(unit, values, rcond=None)[0]  # (d_k, d_v)
        reads = unit @ state  # (n, d_k) x (d_k, d_v) -> (n, d_v)
    elif memory == "softmax":
        reads = scaled_dot_product_attention(query_gain * keys, keys, values)  # (n, d_v)
    else:
        raise ValueError(f"memory must be 'delta', 'least_squares' or 'softmax'; got {memory!r}")
    return float(np.mean(np.linalg.norm(reads - values, axis=-1) / np.linalg.norm(values, axis=-1)))


@dataclass(frozen=True)
class FirstTokenWeight:
    """How a head passes a fraction f of its output: with a zero-valued first token, or with an output gate."""

    fraction: float
    """f, the share of its usual output the head should pass."""
    first_score: float
    """The first token's score that makes its weight 1 - f (no gate)."""
    first_weight: float
    """That weight, 1 - f (the keys keep f of theirs)."""
    gate_logit: float
    """z with sigmoid(z) = f: the gate that does the same with the first token at weight 0."""


def first_token_weight(scores, fraction: float) -> FirstTokenWeight:
    """What a head without an output gate needs to scale its output by `fraction` (0 < f <= 1).

    Args:
        scores: (n_k,) the scaled scores of the keys that carry values.
        fraction: f. Joining a first token of value 0 and score s_0 multiplies
            the output by 1 - w_0; w_0 = 1 - f needs
            s_0 = log((1 - f) / f * sum_j exp(s_j)) (-inf for f = 1).
    """
    s = as_float_array(scores, "scores")
    require_ndim(s, "scores", 1, "(n_k,)")
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must lie in (0, 1]; got {fraction}")
    top = s.max()
    log_sum = top + np.log(np.exp(s - top).sum())  # log sum_j exp(s_j), stable
    first_score = -np.inf if fraction == 1 else float(np.log((1 - fraction) / fraction) + log_sum)
    gate_logit = np.inf if fraction == 1 else float(np.log(fraction / (1 - fraction)))
    return FirstTokenWeight(float(fraction), first_score, 1.0 - float(fraction), gate_logit)


def _deepseek_v32() -> MappingProxyType:
    """DeepSeek-V3.2-Exp's fields as `decoder.published.SPARSE_CONFIGS` keeps them, with their source."""
    entry = published_entry("deepseek-ai/DeepSeek-V3.2-Exp")
    names = ("num_hidden_layers", "num_attention_heads", "kv_lora_rank", "qk_rope_head_dim", "index_topk",
             "index_head_dim", "index_n_heads")
    return MappingProxyType(dict(source=entry.source, **{name: entry.fields[name] for name in names}))


def _qwen3_next() -> MappingProxyType:
    """Qwen3-Next 80B-A3B's fields as `decoder.published.DEFAULT_CONFIGS` keeps them, with their source; the interval
    of its full-attention layers counted from the layer types its configuration reads into."""
    entry = published_entry("Qwen/Qwen3-Next-80B-A3B-Instruct")
    names = ("num_hidden_layers", "num_key_value_heads", "head_dim", "linear_num_key_heads", "linear_num_value_heads",
             "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim")
    layer_types = entry.config.delta.layer_types
    interval = len(layer_types) // layer_types.count("full_attention")
    return MappingProxyType(dict(source=entry.source, full_attention_interval=interval,
                                 **{name: entry.fields[name] for name in names}))


FRONTIER_CONFIGS = MappingProxyType({
    "Qwen3-Next-80B-A3B": _qwen3_next(),
    "DeepSeek-V3.2-Exp": _deepseek_v32(),
})
"""Config fields of the hybrid and the sparse model, each with its source, read from `decoder.published`."""


COST_MODELS = MappingProxyType({
    "Qwen3-Next 80B-A3B": "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "Kimi Linear 48B": "moonshotai/Kimi-Linear-48B-A3B-Instruct",
    "DeepSeek-V3.2-Exp": "deepseek-ai/DeepSeek-V3.2-Exp",
    "GLM-5": "zai-org/GLM-5",
    "Llama 4 Scout": "meta-llama/Llama-4-Scout-17B-16E",
})
"""The published configurations the chapter's cost table covers: a short label and the Hub name of its entry in
`decoder.published`. Not among them, for want of a source on this machine: Qwen3.5 and MiniMax-M2 (see
`decoder.published.DEFAULT_CONFIGS`)."""


@dataclass(frozen=True)
class LayerKindCost:
    """What the layers of one kind keep, per layer, in one published configuration."""

    model: str
    """The configuration's label (a key of `COST_MODELS`)."""
    kind: str
    """What the layers are, in words."""
    layers: int
    """How many layers of the model are of this kind."""
    per_token: int
    """Bytes each such layer caches per token (0 for a delta-rule layer)."""
    state: int
    """Bytes each such layer keeps whatever the context length (a delta-rule layer's state and convolution inputs)."""
    chunk: int | None
    """Tokens a chunked layer keeps at most (the current chunk), None where every token stays."""
    source: str
    """Where the configuration's values come from."""


def layer_kind_costs(label: str, dtype="bfloat16") -> tuple[LayerKindCost, ...]:
    """The layer kinds of the configuration `COST_MODELS[label]`, in the order they first appear, counted from its
    config fields as `decoder.cache.cache_bytes` counts them, in bytes of `dtype`.

    A full-attention layer caches a key and a value per key/value head and token, h_kv (d + d_v) numbers; a latent
    layer its latent and shared RoPE key, kv_lora_rank + qk_rope_head_dim ("latent"), and, with its own lightning indexer, one
    indexer key of index_head_dim; a delta-rule layer nothing per token but n_v d_k d_v numbers of state and
    (w - 1)(2 n_k d_k + n_v d_v) convolution inputs. Summed over the layers, per_token x n + state is
    `cache_bytes(config, n, dtype)`.
    """
    if label not in COST_MODELS:
        raise ValueError(f"label must be one of {', '.join(map(repr, COST_MODELS))}; got {label!r}")
    entry = published_entry(COST_MODELS[label])
    c = entry.config
    size = itemsize(dtype)
    kinds: dict[tuple, int] = {}
    for i in range(c.n_layers):
        if c.delta is not None and c.delta.is_delta_layer(i):
            d = c.delta
            name = "Kimi delta attention" if d.per_channel_decay else "gated delta rule"
            state = d.n_v_heads * d.d_k * d.d_v + (d.conv_width - 1) * (2 * d.key_dim + d.value_dim)
            kinds[(name, 0, state * size, None)] = kinds.get((name, 0, state * size, None), 0) + 1
            continue
        if c.latent is not None:
            name, numbers = "latent", c.latent.kv_lora_rank + c.latent.qk_rope_head_dim
        else:
            name, numbers = "full attention", c.n_kv_heads * (c.head_dim + c.v_head_dim)
        if c.indexer is not None and not c.indexer.shared[i]:
            name, numbers = name + " + indexer key", numbers + c.indexer.head_dim
        elif c.indexer is not None:
            name += ", indexer shared"
        chunk = c.chunks[i]
        if chunk is not None:
            name = "chunked attention"
        key = (name, numbers * size, 0, chunk)
        kinds[key] = kinds.get(key, 0) + 1
    return tuple(LayerKindCost(label, name, n, per_token, state, chunk, entry.source)
                 for (name, per_token, state, chunk), n in kinds.items())


@dataclass(frozen=True)
class LayerMemory:
    """Numbers one layer keeps and reads for one sequence, as functions of the context length n."""

    kind: str
    """What the layer is, in words."""
    per_token: int
    """Numbers cached per token (0 for a state of fixed size)."""
    fixed: int
    """Numbers kept whatever n is (a recurrent state)."""
    read_per_token: int
    """Numbers read per cached token at each decoding step (all of them, for a full or an indexer scan)."""
    selected: int = 0
    """Numbers read per selected token (sparse attention: the k kept keys' entries)."""
    top_k: int = 0
    """Tokens selected per step (0: none)."""

    def cached(self, n) -> np.ndarray:
        """Numbers held after n tokens."""
        return self.fixed + self.per_token * np.asarray(n)

    def read(self, n) -> np.ndarray:
        """Numbers read by the decoding step after n tokens."""
        n = np.asarray(n)
        return self.fixed + self.read_per_token * n + self.selected * np.minimum(n, self.top_k)


def layer_memories() -> dict[str, LayerMemory]:
    """The layer kinds of `FRONTIER_CONFIGS`, counted in numbers (multiply by bytes per number)."""
    qwen = FRONTIER_CONFIGS["Qwen3-Next-80B-A3B"]
    kv = 2 * qwen["num_key_value_heads"] * qwen["head_dim"]  # a key and a value per key/value head
    state = qwen["linear_num_value_heads"] * qwen["linear_key_head_dim"] * qwen["linear_value_head_dim"]
    conv_channels = (2 * qwen["linear_num_key_heads"] * qwen["linear_key_head_dim"]
                     + qwen["linear_num_value_heads"] * qwen["linear_value_head_dim"])  # q, k and v convolved
    conv = conv_channels * (qwen["linear_conv_kernel_dim"] - 1)  # the last kernel - 1 inputs of each channel
    ds = FRONTIER_CONFIGS["DeepSeek-V3.2-Exp"]
    latent = ds["kv_lora_rank"] + ds["qk_rope_head_dim"]  # one latent and one RoPE key per token
    return {
        "qwen_full": LayerMemory("Qwen3-Next full attention", kv, 0, kv),
        "qwen_delta": LayerMemory("Qwen3-Next gated delta rule", 0, state + conv, 0),
        "ds_latent": LayerMemory("DeepSeek-V3.2 latent, all keys", latent, 0, latent),
        "ds_sparse": LayerMemory("DeepSeek-V3.2 latent, top-k", latent + ds["index_head_dim"], 0,
                                 ds["index_head_dim"], selected=latent, top_k=ds["index_topk"]),
    }


def sparse_decode_step(query, key, value, q_index, k_index, head_weights, k: int, scale=None):
    """One decoding step of sparse attention as an inference engine runs it: rank, gather the k best, attend.

    Args:
        query: (h, d_k) the new token's queries; key: (h, n_k, d_k), value: (h, n_k, d_v) the cache.
        q_index: (h_I, d_I); k_index: (n_k, d_I); head_weights: (h_I,): the indexer's.
        k: keys kept.

    Returns:
        (h, d_v): what `core.sparse.sparse_attention` gives for the last query
        (ties at the k-th place aside), reading only k keys and values.
    """
    n_k = key.shape[-2]
    scores = indexer_scores(q_index[:, None, :], k_index, head_weights[None, :])[0]  # (n_k,)
    if k < n_k:
        kept = np.argpartition(-scores, k - 1)[:k]  # (k,) the k best, in no order: O(n_k), no sort
    else:
        kept = np.arange(n_k)
    out = scaled_dot_product_attention(query[:, None, :], key[:, kept], value[:, kept], scale=scale)
    return out[:, 0]  # (h, 1, d_v) -> (h, d_v)


@dataclass(frozen=True)
class DecodeShape:
    """The sizes of the timed layers: h heads of d for all three kinds."""

    heads: int = 8
    """h: query, key/value and delta-rule heads."""
    head_dim: int = 64
    """d_k = d_v."""
    top_k: int = 256
    """Keys the sparse layer keeps."""
    index_heads: int = 4
    """h_I."""
    index_dim: int = 32
    """d_I."""

    def numbers_read(self, n: int) -> dict[str, int]:
        """Numbers each kind's decoding step reads after n tokens (what a memory-bound step's time follows)."""
        h, d = self.heads, self.head_dim
        return {"full": 2 * h * d * n,
                "sparse": self.index_dim * n + 2 * h * d * min(n, self.top_k),
                "delta": h * d * d}


def time_decode_steps(contexts, shape: DecodeShape = DecodeShape(), rounds: int = 5, repeat: int = 5,
                      seed: int = 0, blas_threads: int | None = 1) -> dict[str, np.ndarray]:
    """Seconds of one decoding step of each kind after each context length (float32, one BLAS thread).

    Returns {"full", "sparse", "delta"}: (len(contexts),) arrays, each the
    fastest of rounds x repeat timed calls: on a shared machine other
    processes only ever add time, so the fastest call is the one they
    disturbed least. Each round calls every kind at every length `repeat`
    times. The caches and the state are filled with random numbers once
    (their content does not change the work). `blas_threads`: the matrix
    products' threads (None: the library's default).
    """
    rng = np.random.default_rng(seed)
    h, d = shape.heads, shape.head_dim
    contexts = [positive_int(n, "contexts") for n in contexts]
    q = rng.standard_normal((h, d)).astype(np.float32)
    q_index = rng.standard_normal((shape.index_heads, shape.index_dim)).astype(np.float32)
    w = rng.standard_normal(shape.index_heads).astype(np.float32)
    state = rng.standard_normal((h, d, d)).astype(np.float32)
    k_new = l2_normalize(rng.standard_normal((h, d)).astype(np.float32))
    v_new = rng.standard_normal((h, d)).astype(np.float32)
    g, beta = np.full(h, -0.01, np.float32), np.full(h, 0.5, np.float32)
    steps = {}
    for n in contexts:
        key = rng.standard_normal((h, n, d)).astype(np.float32)
        value = rng.standard_normal((h, n, d)).astype(np.float32)
        k_index = rng.standard_normal((n, shape.index_dim)).astype(np.float32)
        steps[n] = {
            "full": lambda key=key, value=value: scaled_dot_product_attention(q[:, None, :], key, value),
            "sparse": lambda key=key, value=value, k_index=k_index: sparse_decode_step(
                q, key, value, q_index, k_index, w, shape.top_k),
            "delta": lambda: delta_rule_step(state, q, k_new, v_new, g, beta),
        }
    fastest = {kind: np.full(len(contexts), np.inf) for kind in ("full", "sparse", "delta")}
    from threadpoolctl import threadpool_limits  # imported here: `import attention_course` stays light

    with threadpool_limits(limits=blas_threads, user_api="blas"):  # a shared machine: threads would wait
        for fn in (f for row in steps.values() for f in row.values()):
            fn()  # warm up
        for _ in range(positive_int(rounds, "rounds")):
            for i, n in enumerate(contexts):
                for kind, fn in steps[n].items():
                    for _ in range(positive_int(repeat, "repeat")):
                        start = time.perf_counter()
                        fn()
                        fastest[kind][i] = min(fastest[kind][i], time.perf_counter() - start)
    return fastest


def line_fit(contexts, seconds) -> tuple[float, float]:
    """(intercept, slope): the least-squares line seconds = a + b n."""
    b, a = np.polyfit(np.asarray(contexts, dtype=float), np.asarray(seconds, dtype=float), 1)
    return float(a), float(b)


def measured_crossover(contexts, seconds_a, seconds_b) -> float | None:
    """The context length from which b's step is faster than a's, from measured times.

    The first measured length where b is faster, moved back to where the
    line through the two neighbouring log(time_b / time_a) crosses zero
    (log n on the x axis). The first length itself if b is already faster
    there, None if b is never faster at a measured length.
    """
    n = np.asarray(contexts, dtype=float)
    gap = np.log(np.asarray(seconds_b, dtype=float) / np.asarray(seconds_a, dtype=float))  # < 0: b is faster
    faster = np.flatnonzero(gap < 0)
    if faster.size == 0:
        return None
    i = int(faster[0])
    if i == 0:
        return float(n[0])
    x0, x1 = np.log(n[i - 1]), np.log(n[i])
    return float(np.exp(x0 + (x1 - x0) * gap[i - 1] / (gap[i - 1] - gap[i])))


def predicted_crossover(shape: DecodeShape, kind: str) -> float:
    """The context length from which `kind`'s step reads fewer numbers than the full layer's (`numbers_read`)."""
    h, d = shape.heads, shape.head_dim
    if kind == "delta":
        return h * d * d / (2 * h * d)  # h d^2 = 2 h d n
    if kind == "sparse":
        # beyond k: d_I n + 2 h d k = 2 h d n
        return 2 * h * d * shape.top_k / (2 * h * d - shape.index_dim)
    raise ValueError(f"kind must be 'sparse' or 'delta'; got {kind!r}")
