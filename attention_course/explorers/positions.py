"""Explorer 5, positions: a query at m and a key at n, with RoPE or ALiBi (book/positions.ipynb).

The browser module is `js/positions.js`. The two vectors are the bank-bot
example's query of "blocked" and key of "card"; the reader moves m and n (or
both together) and watches the rotated pairs of coordinates and the score,
which depends on m - n only.
"""

from __future__ import annotations

import numpy as np
import traitlets as t

from ..core.positions import _check_base, alibi_bias, alibi_slopes, apply_rope, rope_frequencies
from ..chapters.worked_example import BANK_BOT, WorkedExample
from .widget import Explorer

METHODS = ("rope", "alibi")
"""How position enters the score: rotate q and k (RoPE), or add -slope x distance (ALiBi)."""


def compute_positions(state: dict) -> dict:
    """Every number the explorer shows for `state`, computed by the package.

    The Python twin of `computePositions` in js/positions.js. Returns a dict:
    "distance" m - n; "raw" q·k of the vectors as given; per pair i,
    "query_angles" m theta_i and "key_angles" n theta_i (radians); "q_rot" and
    "k_rot" (d,), the vectors `apply_rope` gives at m and n; "rope_score"
    q_rot·k_rot; "slope" and "bias" -slope |m - n| of the chosen ALiBi head;
    and "score", what the softmax sees with the chosen method: q_rot·k_rot / sqrt(d)
    (RoPE) or q·k / sqrt(d) + bias (ALiBi).
    """
    q = np.array(state["query"], dtype=np.float64)  # (d,)
    k = np.array(state["key"], dtype=np.float64)  # (d,)
    m, n, base = state["m"], state["n"], state["base"]
    d = q.shape[0]
    frequencies = rope_frequencies(d, base)  # (d/2,)
    q_rot = apply_rope(q[None, :], [m], base)[0]  # (d,)
    k_rot = apply_rope(k[None, :], [n], base)[0]
    last = max(m, n) + 1  # positions 0..max(m, n): row m, column n of the bias matrix
    bias = alibi_bias(state["n_heads"], last)[state["head"], m, n]
    raw = float(q @ k)
    rope_score = float(q_rot @ k_rot)
    scale = 1.0 / np.sqrt(d)
    score = rope_score * scale if state["method"] == "rope" else raw * scale + bias
    return {
        "distance": m - n, "raw": raw, "query_angles": m * frequencies, "key_angles": n * frequencies,
        "q_rot": q_rot, "k_rot": k_rot, "rope_score": rope_score,
        "slope": float(alibi_slopes(state["n_heads"])[state["head"]]), "bias": float(bias), "score": float(score),
    }


class PositionsExplorer(Explorer):
    """Two tokens at positions m and n; RoPE rotates them, ALiBi adds a bias to their score.

    State: `tokens` (the query's and the key's labels), `query` and `key` (d,),
    `m` and `n` in 0..`max_position`, `together` (a move of one slider moves
    the other by as much, keeping m - n), `method` ("rope" or "alibi"),
    `base` (RoPE's rope_theta), `n_heads` and `head` (whose ALiBi slope is used).
    """

    _module = "positions.js"

    tokens = t.List(t.Unicode()).tag(sync=True)
    query = t.List(t.Float()).tag(sync=True)
    key = t.List(t.Float()).tag(sync=True)
    m = t.Int(3).tag(sync=True)
    n = t.Int(1).tag(sync=True)
    max_position = t.Int(100).tag(sync=True)
    together = t.Bool(False).tag(sync=True)
    method = t.Enum(METHODS, default_value="rope").tag(sync=True)
    base = t.Float(10000.0).tag(sync=True)
    n_heads = t.Int(8).tag(sync=True)
    head = t.Int(0).tag(sync=True)

    def __init__(self, example: WorkedExample = BANK_BOT, key_token: str = "card", *, m: int | None = None,
                 n: int | None = None, **kwargs) -> None:
        if key_token not in example.tokens:
            raise ValueError(f"key_token must be one of the tokens {list(example.tokens)}; got {key_token!r}")
        if example.d_k % 2:
            raise ValueError(f"RoPE needs an even d_k; the example has d_k = {example.d_k}")
        key_index = example.tokens.index(key_token)
        super().__init__(
            tokens=[example.query_token, key_token], query=example.query.tolist(), key=example.keys[key_index].tolist(),
            m=example.position if m is None else m, n=key_index if n is None else n, **kwargs,
        )

    @t.validate("m", "n")
    def _check_position(self, proposal):
        value, name = proposal["value"], proposal["trait"].name
        if not 0 <= value <= self.max_position:
            raise t.TraitError(f"{name} must be a position in 0..max_position={self.max_position}; got {value}")
        return value

    @t.validate("base")
    def _check_rope_base(self, proposal):
        try:
            return _check_base(proposal["value"])
        except (TypeError, ValueError) as err:
            raise t.TraitError(str(err)) from None

    @t.validate("head")
    def _check_head(self, proposal):
        head = proposal["value"]
        if not 0 <= head < self.n_heads:
            raise t.TraitError(f"head must be in 0..n_heads - 1 = {self.n_heads - 1}; got {head}")
        return head

    @t.validate("key")
    def _check_key(self, proposal):
        key = proposal["value"]
        if self.query and len(key) != len(self.query):
            raise t.TraitError(f"key must have shape (d,) = ({len(self.query)},); got ({len(key)},)")
        return key

    def numbers(self) -> dict:
        """`compute_positions` of the current state."""
        return compute_positions(self.state())

    def summary(self) -> str:
        s = self.numbers()
        q_token, k_token = self.tokens
        where = f"“{q_token}” at m = {self.m}, “{k_token}” at n = {self.n} (m − n = {s['distance']})"
        if self.method == "rope":
            return f"Positions, RoPE (base {self.base:g}): {where}: q·k {s['raw']:.3f}, rotated {s['rope_score']:.3f}"
        return (f"Positions, ALiBi (head {self.head + 1}, slope {s['slope']:.4g}): {where}: "
                f"q·k / √d {s['raw'] / np.sqrt(len(self.query)):.3f}, bias {s['bias']:.3f}, score {s['score']:.3f}")
