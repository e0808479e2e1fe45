"""Explorer, head view: every head of the pretrained model on a sentence (legal-summariser chapter).

The browser module is `js/head_view.js`. It draws one head at a time as lines
from a query token to the keys, like the chapter's `head_view` figure, and
lists where the chosen query looks. The weights are computed here, by the
NumPy forward pass of `attention_course.pretrained`, and sent to the page in
thousandths (integers 0..1000), so a page of three passages stays small.

In Jupyter the explorer is live: type a sentence and the kernel runs the model
and adds it. In the static book, the passages computed when the page was built
are browsable without a kernel.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import traitlets as t

from .widget import Explorer

SCALE = 1000
"""Weights are sent as round(weight * SCALE)."""


def encode_passage(run) -> dict:
    """A ModelRun as the JSON the page reads: text, pieces and (L, h, n, n) weights in thousandths."""
    weights = np.rint(np.asarray(run.attentions, dtype=np.float64) * SCALE).astype(np.int64)  # (L, h, n, n)
    return {"text": run.tokens.text, "tokens": list(run.tokens.pieces), "weights": weights.ravel().tolist()}


def decode_weights(passage: dict, n_layers: int, n_heads: int) -> np.ndarray:
    """The inverse of `encode_passage` for the weights: (L, h, n, n) floats, to 1/SCALE."""
    n = len(passage["tokens"])
    return np.asarray(passage["weights"], dtype=np.float64).reshape(n_layers, n_heads, n, n) / SCALE


class HeadViewExplorer(Explorer):
    """Browse the heads of the pretrained model on a few sentences, or type your own (live).

    State (synced with the page): `passages`, one dict per sentence with `text`,
    `tokens` (n word pieces) and `weights` (L*h*n*n integers, thousandths, in
    (layer, head, query, key) order); `passage`, `layer`, `head` and `query`
    (a piece position, -1 for all queries) choose what is drawn; `text` is a
    sentence typed in the page, which the kernel runs and appends to
    `passages`; `error` says why it could not.
    """

    _module = "head_view.js"

    n_layers = t.Int().tag(sync=True)
    n_heads = t.Int().tag(sync=True)
    passages = t.List(t.Dict()).tag(sync=True)
    passage = t.Int(0).tag(sync=True)
    layer = t.Int(0).tag(sync=True)
    head = t.Int(0).tag(sync=True)
    query = t.Int(-1).tag(sync=True)
    text = t.Unicode("").tag(sync=True)
    error = t.Unicode("").tag(sync=True)

    def __init__(self, model, sentences: Sequence[str], *, layer: int = 0, head: int = 0,
                 query: int = -1, **kwargs) -> None:
        if isinstance(sentences, str) or not sentences:
            raise ValueError("sentences must be a non-empty list of strings")
        self._model = model  # not synced: the kernel side runs it for typed sentences
        passages = [encode_passage(model(s)) for s in sentences]
        super().__init__(n_layers=model.config.n_layers, n_heads=model.config.n_heads,
                         passages=passages, layer=layer, head=head, query=query, **kwargs)

    @t.validate("layer")
    def _check_layer(self, proposal):
        return _in_range(proposal["value"], self.n_layers, "layer")

    @t.validate("head")
    def _check_head(self, proposal):
        return _in_range(proposal["value"], self.n_heads, "head")

    @t.validate("passage")
    def _check_passage(self, proposal):
        return _in_range(proposal["value"], len(self.passages), "passage")

    @t.validate("query")
    def _check_query(self, proposal):
        n = len(self.passages[self.passage]["tokens"]) if self.passages else 0
        value = proposal["value"]
        if value != -1:
            _in_range(value, n, "query")
        return value

    @t.observe("passage")
    def _forget_the_query(self, change) -> None:
        self.query = -1  # a position in the old sentence means nothing in the new one

    @t.observe("text")
    def _run_typed_text(self, change) -> None:
        text = change["new"]
        if not text:
            return
        try:
            run = self._model(text)
        except (ValueError, TypeError) as err:  # empty or too long: say so in the page
            self.error = str(err)
        else:
            self.error = ""
            with self.hold_trait_notifications():
                self.passages = [*self.passages, encode_passage(run)]
                self.passage = len(self.passages) - 1
                self.query = -1
        finally:
            self.text = ""  # ready for the next sentence, even the same one again

    def weights(self) -> np.ndarray:
        """(n, n) the weights drawn now (to 1/1000), rows are queries."""
        return decode_weights(self.passages[self.passage], self.n_layers, self.n_heads)[self.layer, self.head]

    def summary(self) -> str:
        p = self.passages[self.passage]
        w = self.weights()
        tokens = p["tokens"]
        rows = range(len(tokens)) if self.query == -1 else [self.query]
        strongest = max(((w[i, j], i, j) for i in rows for j in range(len(tokens))))
        return (f"Head view of “{p['text']}”: layer {self.layer}, head {self.head}; strongest link "
                f"{strongest[1]}:{tokens[strongest[1]]} → {strongest[2]}:{tokens[strongest[2]]} ({strongest[0]:.3f})")


def _in_range(value: int, size: int, name: str) -> int:
    if not 0 <= value < size:
        raise t.TraitError(f"{name} must be in 0..{size - 1}; got {value}")
    return value
