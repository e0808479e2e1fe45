"""Explorer 9, attention without all the scores: the keys a lightning indexer keeps, and state against cache (book/without_all_scores.ipynb).

The browser module is `js/frontier.js`. The page receives the package's
numbers in its state: for each sequence, the indexer's score of every key
(`core.sparse.indexer_scores`) and the full softmax's weight on it
(`core.attention.attention_weights`); for each published configuration, its
layer kinds as `chapters.without_all_scores.layer_kind_costs` counts them
(bfloat16 bytes). The page keeps the k best keys (ties: the earlier key, as
`core.sparse.top_k_mask`) and adds up bytes as `decoder.cache.cache_bytes`
does, so nothing is computed twice in two ways.
"""

from __future__ import annotations

import numpy as np
import traitlets as t

from ..chapters.without_all_scores import (
    BANK_BOT_INDEXER, COST_MODELS, attention_sequence, layer_kind_costs, projected_indexer,
)
from ..chapters.worked_example import BANK_BOT
from ..core.attention import attention_weights
from ..core.sparse import top_k_mask
from ..decoder.cache import cache_bytes
from ..decoder.published import published_config
from .widget import Explorer

SEQ_LEN_MAX = 2**20
"""Longest context offered: every byte count stays below 2**53, exact in JavaScript."""

LONGER = dict(seed=0, n_k=24, d_k=16, d_v=4, relevant=3, boost=3.0, d_index=4)
"""The longer sequence: `attention_sequence(default_rng(seed), n_k, d_k, d_v, relevant=..., boost=...)`, one query
with a few keys that matter, ranked by `projected_indexer(rng, q, K, d_index)` (the same generator, after it)."""


def frontier_sequences() -> list[dict]:
    """The sequences the explorer offers: each key's label, indexer score and full softmax weight for one query.

    "bank-bot": the query of "blocked" over "my card was blocked", ranked by
    `BANK_BOT_INDEXER`; "longer": `LONGER`'s 24 keys, ranked by a one-head
    indexer that sees q and k through a random 16 x 4 projection.
    """
    bank_scores = BANK_BOT_INDEXER.scores()[0]  # (n_k,)
    bank_weights = attention_weights(BANK_BOT.query[None], BANK_BOT.keys)[0]  # (1, n_k) -> (n_k,)
    rng = np.random.default_rng(LONGER["seed"])
    query, key, _ = attention_sequence(rng, LONGER["n_k"], LONGER["d_k"], LONGER["d_v"],
                                       relevant=LONGER["relevant"], boost=LONGER["boost"])
    longer_scores = projected_indexer(rng, query, key, LONGER["d_index"])[0]  # (1, n_k) -> (n_k,)
    longer_weights = attention_weights(query, key)[0]  # (1, n_k) -> (n_k,)
    return [
        {"name": "bank-bot", "title": "the bank bot: \"blocked\" over \"my card was blocked\"",
         "tokens": list(BANK_BOT.tokens), "scores": bank_scores.tolist(), "weights": bank_weights.tolist()},
        {"name": "longer", "title": f"{LONGER['n_k']} random keys, {LONGER['relevant']} of them planted",
         "tokens": [f"t{i}" for i in range(LONGER["n_k"])], "scores": longer_scores.tolist(),
         "weights": longer_weights.tolist()},
    ]


def frontier_presets() -> list[dict]:
    """The published configurations of `COST_MODELS`: each layer kind's count, bytes per token and state (bfloat16)."""
    presets = []
    for label in COST_MODELS:
        rows = layer_kind_costs(label)
        presets.append({"name": label, "source": rows[0].source, "rows": [
            {"kind": r.kind, "layers": r.layers, "per_token": r.per_token, "state": r.state, "chunk": r.chunk or 0}
            for r in rows]})
    return presets


def compute_frontier(state: dict) -> dict:
    """What the explorer shows for `state`, by the package; the Python twin of `computeFrontier` in js/frontier.js.

    Returns:
        dict: "kept" (the kept keys' positions, in order), "dropped_mass" (the
        full softmax's weight on the others), "sparse_weights" (the softmax
        over the kept keys alone, 0 elsewhere), "rows" (per layer kind: the
        tokens each layer keeps and the bytes all of them keep at seq_len),
        "state_bytes", "cache_bytes" and "total" (`cache_bytes` of the
        configuration, chunked layers keeping their current chunk), and
        "crossover" (the context at which one delta-rule layer's state equals
        one attention layer's cache, or None for a model without both).
    """
    sequence = next(s for s in state["sequences"] if s["name"] == state["sequence"])
    scores, weights = np.array(sequence["scores"]), np.array(sequence["weights"])
    keep = top_k_mask(scores[None], state["k"], causal=False)[0]  # (n_k,)
    sparse = np.where(keep, weights, 0.0) / weights[keep].sum()  # the softmax renormalised over the kept keys
    preset = next(p for p in state["presets"] if p["name"] == state["preset"])
    n = state["seq_len"]
    rows = []
    for r in preset["rows"]:
        tokens = 0 if r["per_token"] == 0 else (n % r["chunk"] if r["chunk"] else n)
        rows.append({"tokens": tokens, "bytes": r["layers"] * (r["per_token"] * tokens + r["state"])})
    total = cache_bytes(published_config(COST_MODELS[preset["name"]]), n, "bfloat16", keep_window=True)
    state_bytes = sum(r["layers"] * r["state"] for r in preset["rows"])
    assert total == sum(r["bytes"] for r in rows)  # the rows add up to the package's count
    delta = [r for r in preset["rows"] if r["state"]]
    attention = [r for r in preset["rows"] if r["per_token"]]
    crossover = delta[0]["state"] / attention[0]["per_token"] if delta and attention else None
    return {"kept": np.flatnonzero(keep).tolist(), "dropped_mass": float(weights[~keep].sum()),
            "sparse_weights": sparse.tolist(), "rows": rows, "state_bytes": state_bytes,
            "cache_bytes": total - state_bytes, "total": total, "crossover": crossover}


class FrontierExplorer(Explorer):
    """A sequence and k in: the keys kept and the weight dropped; a published configuration and a context in: bytes.

    State: `sequence` (a name of `sequences`), `k` (keys kept, 1 to the
    sequence's length), `preset` (a label of `chapters.without_all_scores.COST_MODELS`),
    `seq_len` (tokens in the context), plus the package's numbers: `sequences`,
    `presets`, `seq_len_max`.
    """

    _module = "frontier.js"

    sequence = t.Unicode("bank-bot").tag(sync=True)
    k = t.Int(2).tag(sync=True)
    preset = t.Unicode("Qwen3-Next 80B-A3B").tag(sync=True)
    seq_len = t.Int(131072).tag(sync=True)
    sequences = t.List(t.Dict()).tag(sync=True)
    presets = t.List(t.Dict()).tag(sync=True)
    seq_len_max = t.Int(SEQ_LEN_MAX).tag(sync=True)

    def __init__(self, sequence: str = "bank-bot", k: int = 2, preset: str = "Qwen3-Next 80B-A3B",
                 seq_len: int = 131072, **kwargs) -> None:
        super().__init__(sequences=frontier_sequences(), presets=frontier_presets(), **kwargs)
        self.sequence, self.preset = sequence, preset
        self.k, self.seq_len = k, seq_len

    @t.validate("sequence")
    def _check_sequence(self, proposal):
        names = [s["name"] for s in self.sequences]
        if self.sequences and proposal["value"] not in names:
            raise t.TraitError(f"sequence must be one of {names}; got {proposal['value']!r}")
        return proposal["value"]

    @t.validate("preset")
    def _check_preset(self, proposal):
        names = [p["name"] for p in self.presets]
        if self.presets and proposal["value"] not in names:
            raise t.TraitError(f"preset must be one of {names}; got {proposal['value']!r}")
        return proposal["value"]

    @t.validate("k")
    def _check_k(self, proposal):
        n_k = len(next(s for s in self.sequences if s["name"] == self.sequence)["tokens"]) if self.sequences else 1
        if not 1 <= proposal["value"] <= n_k:
            raise t.TraitError(f"k must be between 1 and {n_k} (the keys of {self.sequence!r}); got {proposal['value']}")
        return proposal["value"]

    @t.validate("seq_len")
    def _check_seq_len(self, proposal):
        if not 1 <= proposal["value"] <= SEQ_LEN_MAX:
            raise t.TraitError(f"seq_len must be between 1 and {SEQ_LEN_MAX}; got {proposal['value']}")
        return proposal["value"]

    def summary_numbers(self) -> dict:
        """`compute_frontier` of the current state."""
        return compute_frontier(self.state())

    def summary(self) -> str:
        s = self.summary_numbers()
        tokens = next(q for q in self.sequences if q["name"] == self.sequence)["tokens"]
        kept = ", ".join(tokens[i] for i in s["kept"])
        return (f"Top-{self.k} of {self.sequence}: keeps {kept}; the dropped keys held {s['dropped_mass']:.3f} of the "
                f"weight. {self.preset} at {self.seq_len:,} tokens (bfloat16): {s['state_bytes']:,} bytes of state, "
                f"{s['cache_bytes']:,} bytes of cache")
