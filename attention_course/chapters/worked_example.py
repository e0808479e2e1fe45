"""The bank-bot example as data, and a step-by-step trace (book/worked_example.ipynb).

A bank bot reads "my card was blocked"; we follow the query of "blocked" as it
attends to all four tokens with d_k = 4. The projected vectors below are the
only place the book's inputs are typed in; every number derived from them
(scores, weights, output) is computed by `trace_attention`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._tables import html_table, text_table
from ..core._checks import as_float_array, check_scale, require_same
from ..core.softmax import softmax


def _frozen(values) -> np.ndarray:
    arr = np.array(values, dtype=np.float64)
    arr.flags.writeable = False  # shared module data: nobody may change it by accident
    return arr


@dataclass(frozen=True)
class WorkedExample:
    """One query attending over a few tokens."""

    tokens: tuple[str, ...]
    """The n_k tokens of the sentence, in order."""
    query_token: str
    """The token whose query vector we follow."""
    query: np.ndarray
    """(d_k,) the query vector of `query_token`."""
    keys: np.ndarray
    """(n_k, d_k) one key vector per token."""
    values: np.ndarray
    """(n_k, d_v) one value vector per token."""

    @property
    def d_k(self) -> int:
        """Size of the query and key vectors."""
        return self.query.shape[-1]

    @property
    def position(self) -> int:
        """Index of `query_token` in `tokens`."""
        return self.tokens.index(self.query_token)

    def trace(self, attn_mask=None, scale=None) -> "AttentionTrace":
        """`trace_attention` of this example's query over its keys and values."""
        return trace_attention(self.query, self.keys, self.values, self.tokens, attn_mask=attn_mask, scale=scale)


BANK_BOT = WorkedExample(
    tokens=("my", "card", "was", "blocked"),
    query_token="blocked",
    query=_frozen([1, 2, 0, 1]),
    keys=_frozen([[1, 0, 0, 0], [1, 2, 1, 1], [0, 0, 1, 0.4], [1, 0, 1, 1]]),
    values=_frozen([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [1.0, 1.0]]),
)
"""The bank-bot example: "my card was blocked", following the query of "blocked"."""

BANK_BOT_QUERIES = _frozen([[1, 0, 0, 0], [0, 1, 0, 1], [0, 0, 1, 0], BANK_BOT.query])
"""(n_k, d_k) a query for every token of the bank-bot sentence (book/masks.ipynb).

The example gives only the query of "blocked" (the last row); the queries of
"my", "card" and "was" are invented, chosen to be easy. The masks chapter and
its explorer both use these rows.
"""


@dataclass(frozen=True)
class AttentionTrace:
    """The five steps of attention for one query, every intermediate kept."""

    tokens: tuple[str, ...]
    """(n_k,) labels of the keys."""
    d_k: int
    """Size of the query and key vectors."""
    scale: float
    """Factor applied to the scores, 1/sqrt(d_k) by default."""
    scores: np.ndarray
    """(n_k,) step 2: the dot products q . k_j."""
    scaled_scores: np.ndarray
    """(n_k,) step 3: scores * scale (-inf where masked)."""
    exponentials: np.ndarray
    """(n_k,) step 4a: exp(scaled score), unshifted, as the book's table shows it (0 where masked)."""
    weights: np.ndarray
    """(n_k,) step 4b: softmax of the scaled scores, computed stably; sums to 1."""
    output: np.ndarray
    """(d_v,) step 5: sum_j weights_j * value_j."""
    mask: np.ndarray | None = field(default=None)
    """(n_k,) bool, True where the query may attend; None if nothing was masked."""

    @property
    def exp_sum(self) -> float:
        """The softmax's denominator: the sum of the exponentials."""
        return float(self.exponentials.sum())

    def rows(self, decimals: int = 3) -> list[tuple[str, ...]]:
        """The table as strings: token, score, scaled, exp, weight; a masked key's exp and weight print "0"."""
        def fmt(x: float) -> str:
            return "-inf" if x == -np.inf else f"{x:.{decimals}f}"

        def exact(x: float, masked: bool) -> str:
            return "0" if masked else fmt(x)  # e^-inf is exactly 0, not a rounded 0.000

        masked = np.zeros(len(self.tokens), dtype=bool) if self.mask is None else ~self.mask
        body = [
            (tok, fmt(s), fmt(z), exact(e, m), exact(w, m))
            for tok, s, z, e, w, m in zip(self.tokens, self.scores, self.scaled_scores, self.exponentials,
                                          self.weights, masked)
        ]
        body.append(("sum", "", "", fmt(self.exp_sum), fmt(float(self.weights.sum()))))
        return body

    _HEADER = ("token", "q·k", "scaled", "exp", "weight")

    def caption(self) -> str:
        """The line under the table: d_k, the scale and the output."""
        out = ", ".join(f"{x:.3f}" for x in self.output)
        return f"d_k = {self.d_k}, scale = {self.scale:.4g}; output = [{out}]"

    def __str__(self) -> str:
        return text_table(self._HEADER, self.rows(), left_columns=1) + "\n" + self.caption()

    def __repr__(self) -> str:
        return f"AttentionTrace(\n{self}\n)"

    def _repr_html_(self) -> str:
        return html_table(self._HEADER, self.rows(), self.caption(), "attention-trace")


def trace_attention(query, keys, values, tokens=None, attn_mask=None, scale=None) -> AttentionTrace:
    """Run the five steps of attention for one query and keep every step.

    Args:
        query: (d_k,) one query vector.
        keys: (n_k, d_k) key vectors.
        values: (n_k, d_v) value vectors.
        tokens: n_k labels; defaults to "0", "1", ...
        attn_mask: optional (n_k,) bool, True where the query may attend.
        scale: factor for the scores; defaults to 1/sqrt(d_k).

    Returns:
        An AttentionTrace whose text and HTML forms show the steps as a table.
    """
    q = as_float_array(query, "query")
    k = as_float_array(keys, "keys")
    v = as_float_array(values, "values")
    if q.ndim != 1:
        raise ValueError(f"query must be one vector of shape (d_k,); got shape {q.shape}")
    if k.ndim != 2 or v.ndim != 2:
        raise ValueError(f"keys must have shape (n_k, d_k) and values (n_k, d_v); got {k.shape} and {v.shape}")
    require_same(q.shape[0], k.shape[1], "d_k", ("query", q.shape), ("keys", k.shape))
    require_same(k.shape[0], v.shape[0], "n_k (the number of keys and of values)", ("keys", k.shape), ("values", v.shape))
    n_k, d_k = k.shape
    tokens = tuple(str(i) for i in range(n_k)) if tokens is None else tuple(tokens)
    if len(tokens) != n_k:
        raise ValueError(f"tokens must have one label per key ({n_k}); got {len(tokens)}")
    scale = check_scale(scale, d_k)
    mask = None
    if attn_mask is not None:
        mask = np.asarray(attn_mask)
        if mask.dtype != bool or mask.shape != (n_k,):
            raise ValueError(f"attn_mask must be a bool array of shape ({n_k},); got {mask.dtype} {mask.shape}")

    scores = k @ q  # (n_k, d_k) x (d_k,) -> (n_k,)   step 2: dot products
    scaled = scores * scale  # step 3
    if mask is not None:
        scaled = np.where(mask, scaled, -np.inf)  # masked keys: -inf before the softmax
    exponentials = np.exp(scaled)  # step 4a: exp(-inf) = 0
    weights = softmax(scaled)  # step 4b: the stable softmax gives exponentials / their sum
    output = weights @ v  # (n_k,) x (n_k, d_v) -> (d_v,)   step 5: mix the values
    return AttentionTrace(
        tokens=tokens, d_k=d_k, scale=scale, scores=scores, scaled_scores=scaled,
        exponentials=exponentials, weights=weights, output=output, mask=mask,
    )
