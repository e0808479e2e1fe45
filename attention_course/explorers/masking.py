"""Explorer 3, masks: causal and padding masks on a short padded sentence (book/masks.ipynb).

The browser module is `js/masking.js`. The sentence is the worked example's,
padded with two "<pad>" tokens as in a batch of sentences of unequal length.
"""

from __future__ import annotations

import numpy as np
import traitlets as t

from ..core.attention import attention_weights
from ..core.masks import causal_mask, padding_mask
from ..chapters.worked_example import BANK_BOT, BANK_BOT_QUERIES, WorkedExample
from .widget import Explorer

PAD = "<pad>"
"""The padding token's label."""


def padded_example(example: WorkedExample = BANK_BOT, n_pad: int = 2, queries=None) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The example's sentence plus `n_pad` padding tokens, with a query and a key per token.

    `queries` (n_k, d_k) gives every real token its query; by default, for the
    bank-bot example, the masks chapter's `BANK_BOT_QUERIES` (the example's query
    of "blocked", invented ones for the other tokens). Padding tokens have zero
    vectors (their scores are 0, so unmasked they would still take weight).

    Returns:
        (tokens (n,), queries (n, d_k), keys (n, d_k)) with n = n_k + n_pad.
    """
    if isinstance(n_pad, bool) or not isinstance(n_pad, int) or n_pad < 0:
        raise ValueError(f"n_pad must be a non-negative integer; got {n_pad!r}")
    if queries is None:
        if example is not BANK_BOT:
            raise ValueError("queries must be given, one row per token, for an example other than BANK_BOT")
        queries = BANK_BOT_QUERIES
    queries = np.array(queries, dtype=np.float64)  # (n_k, d_k)
    if queries.shape != example.keys.shape:
        raise ValueError(f"queries must have shape {example.keys.shape} (n_k, d_k), one per token; got {queries.shape}")
    if not np.array_equal(queries[example.position], example.query):
        raise ValueError(f"queries' row {example.position} must be the example's query of {example.query_token!r}")
    pads = np.zeros((n_pad, example.d_k))  # (n_pad, d_k)
    tokens = [*example.tokens, *([PAD] * n_pad)]
    return tokens, np.concatenate([queries, pads]), np.concatenate([example.keys, pads])  # (n, d_k) each


def explorer_mask(n: int, n_real: int, causal: bool, padding: bool) -> np.ndarray | None:
    """(n, n) bool mask from the switches (True = may attend), or None if both are off."""
    mask = None
    if causal:
        mask = causal_mask(n)  # (n, n)
    if padding:
        pad = padding_mask([n_real], n)[0]  # (1, 1, n) -> (1, n): broadcasts over the queries
        mask = pad if mask is None else mask & pad  # (n, n)
    return None if mask is None else np.broadcast_to(mask, (n, n))


def compute_masks(state: dict) -> tuple[np.ndarray, np.ndarray]:
    """(allowed (n, n) bool, weights (n, n)) for `state`, computed by the package.

    The Python twin of `computeMasks` in js/masking.js: scores Q K^T / sqrt(d_k),
    masked ones set to -inf, softmax over each row.
    """
    queries = np.array(state["query_vectors"])  # (n, d_k)
    keys = np.array(state["key_vectors"])  # (n, d_k)
    n = keys.shape[0]
    mask = explorer_mask(n, state["n_real"], state["causal"], state["padding"])
    allowed = np.ones((n, n), dtype=bool) if mask is None else mask
    return allowed, attention_weights(queries, keys, attn_mask=mask)


class MaskExplorer(Explorer):
    """Causal and padding masks as switches, and the attention weights they leave.

    The queries are the masks chapter's (`BANK_BOT_QUERIES`), so the explorer's
    rows are the chapter's rows. State: `tokens` (n,), `n_real` (tokens after the first n_real are padding),
    `query_vectors` and `key_vectors` (n, d_k), the switches `causal` and
    `padding`, and `selected`, the query whose row of weights is drawn as bars.
    Masked keys get weight exactly 0 (their score is -inf before the softmax).
    """

    _module = "masking.js"

    tokens = t.List(t.Unicode()).tag(sync=True)
    n_real = t.Int().tag(sync=True)
    query_vectors = t.List(t.List(t.Float())).tag(sync=True)
    key_vectors = t.List(t.List(t.Float())).tag(sync=True)
    causal = t.Bool(True).tag(sync=True)
    padding = t.Bool(True).tag(sync=True)
    selected = t.Int(1).tag(sync=True)

    def __init__(self, example: WorkedExample = BANK_BOT, *, queries=None, n_pad: int = 2, causal: bool = True,
                 padding: bool = True, selected: str | int = "card", **kwargs) -> None:
        tokens, queries, keys = padded_example(example, n_pad, queries)
        if isinstance(selected, str):
            if selected not in tokens:
                raise ValueError(f"selected must be one of the tokens {tokens} or an index; got {selected!r}")
            selected = tokens.index(selected)
        super().__init__(tokens=tokens, n_real=len(example.tokens), query_vectors=queries.tolist(),
                         key_vectors=keys.tolist(), causal=causal, padding=padding, selected=selected, **kwargs)

    @t.validate("selected")
    def _check_selected(self, proposal):
        i = proposal["value"]
        if not 0 <= i < len(self.tokens):
            raise t.TraitError(f"selected must be a token index in 0..{len(self.tokens) - 1}; got {i}")
        return i

    def mask(self) -> np.ndarray | None:
        """(n, n) bool, True where query i may attend to key j; None if both switches are off."""
        return explorer_mask(len(self.tokens), self.n_real, self.causal, self.padding)

    def weights(self) -> np.ndarray:
        """(n, n) attention weights under the current masks, computed by the package."""
        return compute_masks(self.state())[1]

    def summary(self) -> str:
        row = self.weights()[self.selected]
        masks = [name for name, on in (("causal", self.causal), ("padding", self.padding)) if on] or ["no"]
        cells = ", ".join(f"{tok} {'0' if w == 0 else f'{w:.3f}'}" for tok, w in zip(self.tokens, row))
        return f"Masks ({' and '.join(masks)} mask): weights of “{self.tokens[self.selected]}”: {cells}"
