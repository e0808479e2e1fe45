"""Reading a model's heads: from word pieces to words, and searching for a head.

Attention is computed between word pieces, but we ask questions about words
("does 'indemnity' look at 'indemnify'?"). The usual convention (Clark et al.,
"What does BERT look at?", 2019) turns piece weights into word weights:
the weight *to* a word is the sum over its pieces (the row still sums to 1),
the weight *from* a word is the mean over its pieces.
"""

from __future__ import annotations

import numpy as np

from .tokenizer import Tokens


def _positions(where, n: int, name: str) -> np.ndarray:
    pos = np.atleast_1d(np.asarray(where))
    if pos.dtype.kind not in "iu" or pos.ndim != 1 or pos.size == 0:
        raise TypeError(f"{name} must be a position or a non-empty list of positions; got {where!r}")
    if pos.min() < 0 or pos.max() >= n:
        raise ValueError(f"{name} must be positions in 0..{n - 1}; got {pos.tolist()}")
    return pos


def link_strength(attentions: np.ndarray, src, dst) -> np.ndarray:
    """How much the word at `src` attends to the word at `dst`, in every head.

    Args:
        attentions: (..., n, n) weights, e.g. (L, h, n, n) from a ModelRun.
        src: the query word's piece positions (an int or a list).
        dst: the key word's piece positions.

    Returns:
        (...,) the mean over src pieces of the summed weight on dst pieces; in [0, 1].
    """
    n = attentions.shape[-1]
    src, dst = _positions(src, n, "src"), _positions(dst, n, "dst")
    rows = attentions[..., src, :]  # (..., n, n) -> (..., len(src), n)
    return rows[..., dst].sum(axis=-1).mean(axis=-1)  # (..., len(src), len(dst)) -> (...,)


def top_heads(strength: np.ndarray, k: int = 5) -> list[tuple[int, int, float]]:
    """The k largest entries of a (L, h) table as (layer, head, value), largest first."""
    if strength.ndim != 2:
        raise ValueError(f"strength must have shape (L, h); got shape {strength.shape}")
    order = np.argsort(strength, axis=None)[::-1][:k]  # flat indices, descending
    return [(int(l), int(h), float(strength[l, h])) for l, h in zip(*np.unravel_index(order, strength.shape))]


def word_groups(tokens: Tokens) -> list[tuple[str, list[int]]]:
    """[(label, piece positions)] for each word, and for [CLS] and [SEP] on their own."""
    groups: list[tuple[str, list[int]]] = []
    last = object()
    for i, (piece, w) in enumerate(zip(tokens.pieces, tokens.word_ids)):
        if w is not None and w == last:
            groups[-1][1].append(i)
        else:
            groups.append((piece, [i]))
        last = w
    return [
        (label if len(ps) == 1 and tokens.word_ids[ps[0]] is None
         else tokens.text[tokens.offsets[ps[0]][0]:tokens.offsets[ps[-1]][1]], ps)
        for label, ps in groups
    ]


def word_attention(attention: np.ndarray, tokens: Tokens) -> tuple[list[str], np.ndarray]:
    """(..., n, n) piece weights -> (labels, (..., W, W) word weights); rows still sum to 1."""
    groups = word_groups(tokens)
    n = len(tokens)
    if attention.shape[-2:] != (n, n):
        raise ValueError(f"attention must have shape (..., {n}, {n}) for these tokens; got {attention.shape}")
    to_words = np.zeros((n, len(groups)), dtype=attention.dtype)  # (n, W): 1 where piece j is in word w
    from_words = np.zeros((len(groups), n), dtype=attention.dtype)  # (W, n): 1/len(word) on its pieces
    for w, (_, ps) in enumerate(groups):
        to_words[ps, w] = 1.0
        from_words[w, ps] = 1.0 / len(ps)
    words = from_words @ attention @ to_words  # (W, n) x (..., n, n) x (n, W) -> (..., W, W)
    return [label for label, _ in groups], words
