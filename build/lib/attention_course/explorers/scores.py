"""Explorer 1, scores to weights: edit q, the scores or d_k and watch each step (book/worked_example.ipynb).

The browser module is `js/scores.js`; this class only holds the state and
computes, with the package, what the page should show for it.
"""

from __future__ import annotations

import numpy as np
import traitlets as t

from ..core.softmax import softmax
from ..chapters.worked_example import BANK_BOT, AttentionTrace, WorkedExample, trace_attention
from .widget import Explorer


def compute_scores(state: dict) -> AttentionTrace:
    """Every number the explorer shows for `state` (its traits), computed by the package.

    The Python twin of `computeScores` in js/scores.js. With `source` "query"
    the scores are K q (`trace_attention`); with "scores" they are the typed
    `scores`, and steps 3 to 5 follow from them. The scale is 1/sqrt(d_k).
    """
    values = np.array(state["value_vectors"])  # (n_k, d_v)
    scale = 1.0 / np.sqrt(state["d_k"])
    if state["source"] == "query":
        with np.errstate(over="ignore"):  # the unshifted exponentials may overflow; the weights do not
            return trace_attention(state["query"], state["key_vectors"], values, tokens=state["tokens"], scale=scale)
    scores = np.array(state["scores"], dtype=np.float64)  # (n_k,) typed by hand
    scaled = scores * scale
    weights = softmax(scaled)
    with np.errstate(over="ignore"):
        exponentials = np.exp(scaled)
    return AttentionTrace(
        tokens=tuple(state["tokens"]), d_k=state["d_k"], scale=scale, scores=scores, scaled_scores=scaled,
        exponentials=exponentials, weights=weights, output=weights @ values,  # (n_k,) x (n_k, d_v) -> (d_v,)
    )


class ScoresExplorer(Explorer):
    """The worked example's tokens with editable query vector, raw scores q·k and d_k.

    State (synced with the page): `query` (d,), `key_vectors` (n_k, d),
    `value_vectors` (n_k, d_v), `scores` (n_k,) raw q·k, `source` ("query" if the scores are
    K q, "scores" if they were typed by hand) and `d_k`, the size whose square
    root divides the scores. With `BANK_BOT` and d_k = 4 it shows the bank-bot
    example's numbers: weights 0.064, 0.782, 0.048, 0.106 and output [0.19, 0.91].
    """

    _module = "scores.js"

    tokens = t.List(t.Unicode()).tag(sync=True)
    query_token = t.Unicode().tag(sync=True)
    query = t.List(t.Float()).tag(sync=True)
    key_vectors = t.List(t.List(t.Float())).tag(sync=True)  # `keys` is taken by ipywidgets
    value_vectors = t.List(t.List(t.Float())).tag(sync=True)
    scores = t.List(t.Float()).tag(sync=True)
    source = t.Enum(("query", "scores"), default_value="query").tag(sync=True)
    d_k = t.Int(4).tag(sync=True)

    def __init__(self, example: WorkedExample = BANK_BOT, d_k: int | None = None, **kwargs) -> None:
        trace = trace_attention(example.query, example.keys, example.values, tokens=example.tokens)
        super().__init__(
            tokens=list(example.tokens), query_token=example.query_token,
            query=example.query.tolist(), key_vectors=example.keys.tolist(), value_vectors=example.values.tolist(),
            scores=trace.scores.tolist(), source="query",
            d_k=example.d_k if d_k is None else d_k, **kwargs,
        )

    @t.validate("d_k")
    def _check_d_k(self, proposal):
        d_k = proposal["value"]
        if d_k < 1:
            raise t.TraitError(f"d_k must be a positive integer; got {d_k}")
        return d_k

    @t.validate("query")
    def _check_query(self, proposal):
        query = proposal["value"]
        if self.key_vectors and len(query) != len(self.key_vectors[0]):
            raise t.TraitError(f"query must have shape (d,) = ({len(self.key_vectors[0])},); got ({len(query)},)")
        return query

    @t.validate("scores")
    def _check_scores(self, proposal):
        scores = proposal["value"]
        if self.tokens and len(scores) != len(self.tokens):
            raise t.TraitError(f"scores must have shape (n_k,) = ({len(self.tokens)},); got ({len(scores)},)")
        return scores

    def trace(self) -> AttentionTrace:
        """What the explorer shows now, every step computed by the package."""
        return compute_scores(self.state())

    def summary(self) -> str:
        trace = self.trace()
        weights = ", ".join(f"{tok} {w:.3f}" for tok, w in zip(trace.tokens, trace.weights))
        output = ", ".join(f"{x:.2f}" for x in trace.output)
        return f"Scores to weights (d_k = {self.d_k}): weights {weights}; output [{output}]"
