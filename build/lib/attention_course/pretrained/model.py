"""The pretrained model in one object: tokenizer + weights + forward pass.

>>> model = load_model()                      # reads the cache; see `fetch_model`
>>> run = model("Such indemnity survives.")
>>> run.attentions.shape                      # (L, h, n, n)
(6, 12, 8, 8)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .bert import BertConfig, BertWeights, bert_forward, head_projections, load_bert_weights
from .fetch import MINILM, ModelSource, require_model
from .tokenizer import Tokens, WordPieceTokenizer


@dataclass(frozen=True)
class ModelRun:
    """One sentence through the model: its pieces, hidden states and attention weights."""

    tokens: Tokens
    """The n word pieces, [CLS] and [SEP] included."""
    hidden_states: np.ndarray
    """(L + 1, n, d_model): the embeddings, then each layer's output."""
    attentions: np.ndarray
    """(L, h, n, n): attentions[l, i, q, k], weight of key k for query q in head i of layer l."""

    def attention(self, layer: int, head: int) -> np.ndarray:
        """(n, n) the weights of one head; rows are queries, columns keys."""
        return self.attentions[layer, head]

    def sentence_embedding(self) -> np.ndarray:
        """(d_model,) the mean of the last hidden states, scaled to length 1.

        This is how sentence-transformers pools all-MiniLM-L6-v2 into one
        vector per sentence; cosine similarity of two is their dot product.
        """
        mean = self.hidden_states[-1].astype(np.float64).mean(axis=0)  # (n, d_model) -> (d_model,)
        return mean / np.linalg.norm(mean)


class PretrainedModel:
    """A BERT encoder whose attention is `attention_course.multi_head_attention`.

    Call it on a sentence to get a `ModelRun`. Built by `load_model`.
    """

    def __init__(self, weights: BertWeights, tokenizer: WordPieceTokenizer, folder: Path, name: str):
        self.weights = weights
        self.tokenizer = tokenizer
        self.folder = folder
        self.name = name

    @property
    def config(self) -> BertConfig:
        """Sizes: d_model, n_layers, n_heads, d_head, ..."""
        return self.weights.config

    def tokenize(self, text: str, truncate: bool = False) -> Tokens:
        """The word pieces of `text`; see `WordPieceTokenizer`."""
        return self.tokenizer(text, truncate=truncate)

    def __call__(self, text: str, truncate: bool = False) -> ModelRun:
        """Tokenise `text` and run the encoder.

        Raises ValueError for an empty text, or one longer than the model's
        positions unless `truncate=True` (which cuts it with a warning).
        """
        tokens = self.tokenize(text, truncate=truncate)
        out = bert_forward(self.weights, tokens.ids)
        return ModelRun(tokens=tokens, hidden_states=out.hidden_states, attentions=out.attentions)

    def head_projections(self, run: ModelRun, layer: int, head: int):
        """(q, k, v), each (n, d_head): the vectors one head computes for `run`."""
        return head_projections(self.weights, run.hidden_states, layer, head)

    def __repr__(self) -> str:
        c = self.config
        return (f"PretrainedModel({self.name!r}: {c.n_layers} layers, {c.n_heads} heads of "
                f"d_k = {c.d_head}, d_model = {c.d_model}, {c.max_positions} positions)")


def load_model(cache: str | os.PathLike | None = None, *, source: ModelSource = MINILM,
               dtype=np.float32) -> PretrainedModel:
    """Load all-MiniLM-L6-v2 from the cache.

    Raises ModelNotFoundError, naming the command `attention-course fetch-model`,
    if the model has not been fetched. `dtype` float64 gives a reference run.
    """
    folder = require_model(source, cache)
    weights = load_bert_weights(folder, dtype=dtype)
    tokenizer = WordPieceTokenizer(folder / "tokenizer.json", weights.config.max_positions)
    return PretrainedModel(weights, tokenizer, folder, name="all-MiniLM-L6-v2")
