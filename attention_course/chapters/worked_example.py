"""The bank-bot example as data, and a step-by-step trace (book/worked_example.ipynb).

A bank bot reads "my card was blocked"; we follow the query of "blocked" as it
attends to all four tokens with d_k = 4. The projected vectors below are the
only place the book's inputs are typed in; every number derived from them
(scores, weights, output) is computed by `trace_attention`.

`draw_worked_example` draws another example of the same kind from a generator,
small enough to work by hand: exercise 0 gives each student one of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .._tables import html_table, text_table
from ..core._checks import as_float_array, check_scale, frozen_array, require_same
from ..core.softmax import softmax


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
    query=frozen_array([1, 2, 0, 1]),
    keys=frozen_array([[1, 0, 0, 0], [1, 2, 1, 1], [0, 0, 1, 0.4], [1, 0, 1, 1]]),
    values=frozen_array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5], [1.0, 1.0]]),
)
"""The bank-bot example: "my card was blocked", following the query of "blocked"."""

BANK_BOT_QUERIES = frozen_array([[1, 0, 0, 0], [0, 1, 0, 1], [0, 0, 1, 0], BANK_BOT.query])
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


SENTENCES = (
    "check my balance", "cancel my subscription", "the river flooded", "freeze my card",
    "she paid the bill", "my loan was approved", "the train left early", "please reset my password",
    "the parcel arrived late", "he lost his phone", "the app keeps crashing", "rain stopped the match",
    "my flight was cancelled", "our order never came", "birds sing at dawn", "the printer is jammed",
    "I forgot my PIN", "the soup tasted salty", "she won the race", "the bridge was closed",
    "my bag went missing", "transfer fifty euros now", "the kettle is boiling", "my refund is late",
    "the light turned green", "snow covered the road", "the baby fell asleep", "he fixed the bike",
    "the milk went sour", "my screen is cracked", "the shop opens soon", "interest rates rose again",
    "she answered the call", "the key was stolen", "the dog chased the ball", "the bank closed my account",
    "the meeting moved to Friday", "my card was charged twice", "the cat sat on the mat", "we missed the last bus",
)
"""Short sentences, of 3 to 5 tokens (one a word), that a drawn example follows."""

ROOTS_OF_D_K = (2, 3, 4)
"""sqrt(d_k) of a drawn example: d_k is 4, 9 or 16, so that the scale is a whole number."""

D_V = 2
"""The size of a drawn example's values, as in the bank-bot example."""

_ONE_DECIMAL = (0.2, 0.4, 0.5, 1.5, -0.5)
"""The numbers with one decimal a query or key entry may be, now and then."""


def _entries(rng: np.random.Generator, shape: tuple[int, ...], d_k: int) -> np.ndarray:
    """Small integers, mostly 0 and 1 (more zeros for a larger d_k), a few with one decimal."""
    zeros = {4: 0.3, 9: 0.45, 16: 0.55}[d_k]
    rest = (1 - zeros) / 10
    whole = rng.choice([-1.0, 0.0, 1.0, 2.0], size=shape, p=[2 * rest, zeros, 6 * rest, 2 * rest])
    decimal = rng.choice(_ONE_DECIMAL, size=shape)
    return np.where((whole != 0) & (rng.random(shape) < 0.12), decimal, whole)


def _candidate(rng: np.random.Generator) -> WorkedExample:
    tokens = tuple(SENTENCES[rng.integers(len(SENTENCES))].split())
    n_k, d_k = len(tokens), int(rng.choice(ROOTS_OF_D_K)) ** 2
    query = _entries(rng, (d_k,), d_k)  # (d_k,)
    keys = _entries(rng, (n_k, d_k), d_k)  # (n_k, d_k)
    values = rng.choice([-1.0, 0.0, 0.5, 1.0, 2.0], size=(n_k, D_V), p=[0.1, 0.3, 0.15, 0.35, 0.1])  # (n_k, d_v)
    return WorkedExample(tokens, tokens[-1], frozen_array(query), frozen_array(keys), frozen_array(values))


def _on_a_rounding_edge(x: np.ndarray, decimals: int) -> bool:
    """True if some entry, to `decimals` decimals, could fairly round either way (its next digit is about 5)."""
    shifted = np.abs(np.asarray(x, dtype=np.float64)) * 10.0**decimals
    return bool(np.any(np.abs(shifted - np.floor(shifted) - 0.5) < 0.05))


def fair_by_hand(example: WorkedExample) -> bool:
    """Whether an example can be worked by hand without doubt about any step's rounded numbers.

    Its scaled scores lie between -2.5 and 3.5 (exponentials from 0.08 to 33);
    no two weights tie to 3 decimals (they differ by 0.003 or more), none is
    below 0.01 or above 0.9, and the largest leads the next by 0.05; the
    values differ from token to token; and no scaled score, exponential or
    their sum (to 2 decimals), weight (to 3) or output (to 2) lies where
    rounding could go either way.
    """
    trace = example.trace()
    w = np.sort(trace.weights)
    steps = ((trace.scaled_scores, 2), (trace.exponentials, 2), (np.array([trace.exp_sum]), 2), (trace.weights, 3),
             (trace.output, 2))
    return bool(
        np.all((trace.scaled_scores >= -2.5) & (trace.scaled_scores <= 3.5))
        and np.all(np.diff(np.round(w, 3)) >= 0.003) and w[0] >= 0.01 and w[-1] <= 0.9 and w[-1] - w[-2] >= 0.05
        and len({tuple(v) for v in example.values}) == len(example.tokens)
        and not any(_on_a_rounding_edge(x, d) for x, d in steps)
    )


def draw_worked_example(rng: np.random.Generator, accept: Callable[[WorkedExample], bool] | None = None,
                        *, attempts: int = 10_000) -> WorkedExample:
    """An example to work by hand, drawn from `rng`: a sentence of `SENTENCES`, the query of its last token.

    d_k is 4, 9 or 16; query and keys hold small integers and now and then a
    number with one decimal; the values have D_V = 2 entries. A draw that is
    not `fair_by_hand`, or that `accept` (the caller's further conditions)
    refuses, is drawn again from the same `rng`, so one generator state always
    gives one example. RuntimeError if `attempts` draws give none.
    """
    for _ in range(attempts):
        example = _candidate(rng)
        if fair_by_hand(example) and (accept is None or accept(example)):
            return example
    raise RuntimeError(f"no example fair to work by hand in {attempts} draws; relax `accept`")
