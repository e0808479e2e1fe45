"""Attention masks: which keys each query may attend to (book/masks.ipynb).

One convention throughout, the PyTorch one: a boolean mask is True where a
query *may* attend to a key. Before the softmax, the scores at False positions
are set to -inf, so exp(-inf) = 0 gives them exactly zero weight. A float mask
is added to the scores instead (0 keeps a score, -inf removes it).

`causal_mask` aligns its triangle top-left (torch's `is_causal`) or, with
`lower_right=True`, bottom-right (torch's `causal_lower_right`), which is
what new queries scored against a cache of earlier keys need;
`sliding_window_mask` also hides keys more than a window back
(book/decoding.ipynb); `chunked_causal_mask` cuts the sequence into chunks
and lets a query see only the earlier keys of its own chunk (Llama 4).
"""

from __future__ import annotations

import numpy as np

from ._checks import is_float_dtype, positive_int


def causal_mask(n_q: int, n_k: int | None = None, lower_right: bool = False) -> np.ndarray:
    """Boolean causal mask: query i may attend to keys 0..i (top-left) or 0..i + n_k - n_q (lower-right).

    With the default `lower_right=False` the lower triangle is aligned
    top-left, like torch's `is_causal=True` (`torch.ones(n_q, n_k).tril()`):
    with n_q < n_k the last keys are hidden from every query; with n_q > n_k
    the last queries see every key.

    With `lower_right=True` the triangle is aligned to the bottom-right
    corner, like torch's `causal_lower_right`: the queries are the *last* n_q
    positions of the n_k keys, as when new tokens are scored against a cache
    that already holds their keys. The last query then sees every key; with
    n_q > n_k the first n_q - n_k queries see none.

    Args:
        n_q: number of queries.
        n_k: number of keys; defaults to `n_q` (then both alignments agree).
        lower_right: align the diagonal to the bottom-right corner.

    Returns:
        bool array of shape (n_q, n_k), True where query i may attend to key j.
    """
    n_q = positive_int(n_q, "n_q")
    n_k = n_q if n_k is None else positive_int(n_k, "n_k")
    lower_right = _check_flag(lower_right, "lower_right")
    offset = n_k - n_q if lower_right else 0  # query i sits at key position i + offset
    return np.tri(n_q, n_k, k=offset, dtype=bool)  # (n_q, n_k), True where j <= i + offset


def sliding_window_mask(n_q: int, n_k: int | None, window: int, lower_right: bool = True) -> np.ndarray:
    """Boolean sliding-window causal mask: each query sees itself and the window - 1 keys before it.

    Query i, at key position p = i + n_k - n_q (lower-right, the default) or
    p = i (top-left), may attend to keys j with p - window < j <= p: at most
    `window` keys, itself included. This is Mistral's `sliding_window` (and
    Hugging Face's): with window >= n_k it is the causal mask.

    Args:
        n_q: number of queries.
        n_k: number of keys; None for `n_q`.
        window: how many positions each query sees, itself included (>= 1).
        lower_right: align the queries with the last n_q keys (new tokens
            against a cache); False aligns them with the first n_q, as
            `causal_mask`'s default does.

    Returns:
        bool array of shape (n_q, n_k).
    """
    n_q = positive_int(n_q, "n_q")
    n_k = n_q if n_k is None else positive_int(n_k, "n_k")
    window = positive_int(window, "window")
    causal = causal_mask(n_q, n_k, lower_right=lower_right)  # (n_q, n_k), j <= p
    offset = n_k - n_q if _check_flag(lower_right, "lower_right") else 0
    too_old = np.tri(n_q, n_k, k=offset - window, dtype=bool)  # (n_q, n_k), j <= p - window
    return causal & ~too_old


def chunked_causal_mask(n_q: int, n_k: int | None, chunk_size: int, lower_right: bool = True,
                        first_position: int = 0) -> np.ndarray:
    """Boolean chunked causal mask: a query sees the keys of its own chunk up to itself, nothing before the chunk.

    Positions are cut into chunks of `chunk_size` from position 0 on: 0..C-1,
    C..2C-1, ... Query at position p may attend to key at position s when
    s <= p and s // C == p // C (Llama 4's chunked attention layers,
    `attention_chunk_size`). Unlike a sliding window, the first query of a
    chunk sees only itself, however many keys came before.

    Args:
        n_q: number of queries.
        n_k: number of keys; None for `n_q`.
        chunk_size: C, the positions in one chunk (>= 1).
        lower_right: the queries are the last n_q of the keys' positions (new
            tokens against a cache); False aligns them with the first n_q.
        first_position: the position of key 0 in the sequence (> 0 when a
            cache has dropped earlier keys): chunks are counted from the
            sequence's start, not from the first key kept.

    Returns:
        bool array of shape (n_q, n_k), True where query i may attend to key j.
    """
    n_q = positive_int(n_q, "n_q")
    n_k = n_q if n_k is None else positive_int(n_k, "n_k")
    chunk_size = positive_int(chunk_size, "chunk_size")
    if isinstance(first_position, (bool, np.bool_)) or not isinstance(first_position, (int, np.integer)) \
            or first_position < 0:
        raise ValueError(f"first_position must be a non-negative int; got {first_position!r}")
    causal = causal_mask(n_q, n_k, lower_right=lower_right)  # (n_q, n_k), s <= p
    offset = n_k - n_q if _check_flag(lower_right, "lower_right") else 0
    key_chunk = (first_position + np.arange(n_k)) // chunk_size  # (n_k,)
    query_chunk = (first_position + offset + np.arange(n_q)) // chunk_size  # (n_q,)
    return causal & (query_chunk[:, None] == key_chunk[None, :])  # (n_q, 1) == (1, n_k) -> (n_q, n_k)


def _check_flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def padding_mask(lengths, n_k: int) -> np.ndarray:
    """Boolean padding mask for a batch of sequences padded to `n_k` tokens.

    Args:
        lengths: (B,) number of real tokens in each sequence, each in 0..n_k.
        n_k: padded length (number of keys).

    Returns:
        bool array of shape (B, 1, n_k), True for real tokens and False for
        padding. The middle axis of size 1 broadcasts over the queries, so
        the mask can be passed as `attn_mask` for queries of shape (B, n_q, d_k).
    """
    n_k = positive_int(n_k, "n_k")
    lengths_arr = np.asarray(lengths)
    if lengths_arr.ndim != 1:
        raise ValueError(f"lengths must have shape (B,); got shape {lengths_arr.shape}")
    if lengths_arr.dtype.kind not in "iu":
        raise TypeError(f"lengths must be integers; got dtype {lengths_arr.dtype}")
    bad = (lengths_arr < 0) | (lengths_arr > n_k)
    if bad.any():
        raise ValueError(
            f"every length must be between 0 and n_k={n_k}; got {lengths_arr[bad].tolist()}"
        )
    positions = np.arange(n_k)  # (n_k,)
    return (positions[None, :] < lengths_arr[:, None])[:, None, :]  # (B, n_k) -> (B, 1, n_k)


def check_attn_mask(attn_mask, is_causal, n_q: int, n_k: int) -> np.ndarray | None:
    """Validate `attn_mask` and `is_causal` for n_q queries and n_k keys.

    Returns the mask as an array (bool or float), or None when `attn_mask` is
    None. Raises TypeError/ValueError naming what is wrong: both a mask and
    is_causal, a mask that does not broadcast to (..., n_q, n_k), or a dtype
    that is neither boolean nor float.
    """
    if not isinstance(is_causal, (bool, np.bool_)):
        raise TypeError(f"is_causal must be True or False; got {is_causal!r}")
    if is_causal and attn_mask is not None:
        raise ValueError(
            "pass either attn_mask or is_causal=True, not both (as torch's math backend does; "
            "its default CPU kernel ANDs them instead); "
            "to combine them, build one mask: causal_mask(n_q, n_k) & attn_mask"
        )
    if attn_mask is None:
        return None
    mask = np.asarray(attn_mask)
    if mask.dtype != bool and not is_float_dtype(mask.dtype):
        hint = " (for 0/1 integers, use attn_mask.astype(bool))" if mask.dtype.kind in "iu" else ""
        raise TypeError(
            "attn_mask must be boolean (True = may attend) or float (added to the scores); "
            f"got dtype {mask.dtype}{hint}"
        )
    if mask.ndim == 0 or not _broadcasts_to(mask.shape[-2:], (n_q, n_k)):
        raise ValueError(
            f"attn_mask must be broadcastable to (..., n_q, n_k) = (..., {n_q}, {n_k}); "
            f"got shape {mask.shape}"
        )
    return mask


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    """True if an array of `shape` broadcasts to exactly `target`."""
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def mask_to_bias(mask: np.ndarray, dtype) -> np.ndarray:
    """A checked mask (or a tile of one) as an additive bias of `dtype`.

    Boolean masks give 0 where attention is allowed and -inf where it is not;
    float masks are returned as they are (cast to `dtype`).
    """
    if mask.dtype == bool:
        return np.where(mask, 0.0, -np.inf).astype(dtype)  # True keeps the score, False -> -inf
    return mask.astype(dtype, copy=False)
