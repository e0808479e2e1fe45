"""Where position enters the scores: sinusoidal positions, RoPE and ALiBi (book/positions.ipynb).

Attention by itself cannot tell word order: shuffle the tokens and every score
moves with its token. Models put position back in one of three ways:

- `sinusoidal_positions`: the original transformer's table of sines and
  cosines, added to the token vectors before the projections.
- `rope_frequencies`, `apply_rope`: rotary position embeddings (RoPE). Each
  query and key is rotated, pair of coordinates by pair, by angles
  proportional to its position, so the score of a query at m and a key at n
  depends on m - n only. Llama, Mistral, Qwen2, Gemma and GPT-NeoX use it;
  models extended to longer contexts rescale its frequencies (`rope_scaling`).
- `alibi_slopes`, `alibi_bias`: ALiBi, a bias of -slope x distance added to the
  scores as a float mask (book/masks.ipynb). BLOOM and MPT use it.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, positive_int, require_ndim


def _check_base(base) -> float:
    """`base` as a float; TypeError if it is not a real number, ValueError unless it is positive and finite."""
    if isinstance(base, (bool, np.bool_)) or not isinstance(base, (int, float, np.integer, np.floating)):
        raise TypeError(f"base must be a positive number such as 10000.0; got {base!r}")
    value = float(base)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"base must be a positive finite number such as 10000.0; got {base!r}")
    return value


def _check_even(d, name: str) -> int:
    d = positive_int(d, name)
    if d % 2:
        raise ValueError(f"{name} must be even (RoPE rotates pairs of coordinates); got {d}")
    return d


def sinusoidal_positions(n: int, d: int, base: float = 10000.0) -> np.ndarray:
    """The original transformer's position table, added to the token vectors.

    PE[p, 2i] = sin(p / base^(2i/d)) and PE[p, 2i+1] = cos(p / base^(2i/d)):
    column pair i turns at the frequency base^(-2i/d), from 1 radian per token
    (i = 0) down to about 1/base.

    Args:
        n: number of positions, 0..n-1.
        d: width of the token vectors (d_model); an odd d ends with a sine column.
        base: 10000 in "Attention Is All You Need".

    Returns:
        (n, d) float64 table; row p is added to the vector of the token at position p.
    """
    n = positive_int(n, "n")
    d = positive_int(d, "d")
    base = _check_base(base)
    pair = np.arange(d) // 2  # (d,) the frequency index of each column: 0, 0, 1, 1, 2, ...
    frequency = base ** (-2.0 * pair / d)  # (d,)
    angles = np.arange(n)[:, None] * frequency[None, :]  # (n, 1) x (1, d) -> (n, d)
    return np.where(np.arange(d) % 2 == 0, np.sin(angles), np.cos(angles))  # even columns sin, odd cos


def rope_frequencies(d: int, base: float = 10000.0) -> np.ndarray:
    """The angle per position of each of RoPE's d/2 pairs: theta_i = base^(-2i/d), i = 0..d/2-1.

    Pair 0 turns by 1 radian per token, the last pair by base^(-(d-2)/d), almost
    1/base. Hugging Face calls this `inv_freq` and `base` `rope_theta`.

    Args:
        d: the head size d_k; must be even.
        base: rope_theta (10000 in RoFormer and Llama 2, 500000 in Llama 3).

    Returns:
        (d // 2,) float64, decreasing from 1.
    """
    d = _check_even(d, "d")
    base = _check_base(base)
    return 1.0 / base ** (np.arange(0, d, 2, dtype=np.float64) / d)  # (d/2,), Hugging Face's inv_freq


def _check_positions(positions, x_shape: tuple) -> np.ndarray:
    """`positions` as int64 of shape (..., n) broadcastable to x's (..., n); default 0..n-1."""
    n = x_shape[-2]
    if positions is None:
        return np.arange(n)
    pos = np.asarray(positions)
    if pos.dtype == bool or pos.dtype.kind not in "iu":
        raise TypeError(
            f"positions must be integers (the index of each token in its sequence); got dtype {pos.dtype}"
        )
    if pos.ndim == 0 or pos.shape[-1] != n:
        raise ValueError(
            f"positions must have shape (n,) = ({n},), one position per token of x (shape {x_shape}); "
            f"got shape {pos.shape}"
        )
    try:
        fits = np.broadcast_shapes(pos.shape, x_shape[:-1]) == x_shape[:-1]
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"positions of shape {pos.shape} do not broadcast to x's leading axes {x_shape[:-1]}: pass (n,), "
            f"or (B, 1, n) for x of shape (B, h, n, d)"
        )
    return pos.astype(np.int64)


def _check_frequencies(frequencies, d: int) -> np.ndarray:
    """`frequencies` as float64 of shape (d/2,), finite."""
    theta = as_float_array(frequencies, "frequencies").astype(np.float64, copy=False)
    if theta.shape != (d // 2,):
        raise ValueError(f"frequencies must have shape (d/2,) = ({d // 2},), one per pair of x's last axis; "
                         f"got shape {theta.shape}")
    if not np.all(np.isfinite(theta)):
        raise ValueError("frequencies must be finite")
    return theta


def _rotate(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, interleaved: bool) -> np.ndarray:
    """Rotate each pair (a, b) of x's last axis to (a cos - b sin, b cos + a sin); cos, sin: (..., n, d/2)."""
    half = x.shape[-1] // 2
    if interleaved:
        a, b = x[..., 0::2], x[..., 1::2]  # pairs (0, 1), (2, 3), ...; each (..., n, d/2)
    else:
        a, b = x[..., :half], x[..., half:]  # pairs (0, d/2), (1, d/2 + 1), ...; each (..., n, d/2)
    a_rot = a * cos - b * sin  # (..., n, d/2)
    b_rot = b * cos + a * sin  # (..., n, d/2)
    if interleaved:
        out = np.stack([a_rot, b_rot], axis=-1)  # (..., n, d/2, 2)
        return out.reshape(out.shape[:-2] + (2 * half,))  # (..., n, d/2, 2) -> (..., n, d)
    return np.concatenate([a_rot, b_rot], axis=-1)  # (..., n, d/2) twice -> (..., n, d)


def apply_rope(x, positions=None, base: float = 10000.0, interleaved: bool = False, frequencies=None,
               rotary_dim: int | None = None) -> np.ndarray:
    """Rotary position embedding: rotate x's pairs of coordinates by position x frequency.

    The vector of the token at position p has its pair i rotated by the angle
    p * theta_i, theta_i = base^(-2i/d) (`rope_frequencies`). Apply it to the
    queries and to the keys (never to the values): a rotation keeps lengths, and
    the score of a query at m and a key at n becomes a function of m - n.

    Two conventions pair the coordinates differently; they give the same
    scores once the projections are permuted to match:

    - `interleaved=False` (the default) pairs coordinate i with i + d/2:
      Hugging Face's `q * cos + rotate_half(q) * sin` with cos = cat(cos, cos),
      used by Llama, Mistral, Qwen2, Gemma and GPT-NeoX.
    - `interleaved=True` pairs 2i with 2i + 1: RoFormer, GPT-J and Meta's
      original Llama code (Hugging Face's conversion of those weights permutes
      the rows of W_q and W_k to use the halves instead).

    Args:
        x: (..., n, d) queries or keys, d even, for example (B, h, n, d_k) or (n, d_k).
        positions: (n,) integer position of each of the n tokens, any offset and
            sign (a new token at position 300 after a cache of 300); (B, 1, n)
            gives each sequence of x (B, h, n, d) its own. Default 0..n-1.
        base: rope_theta, the base of the frequencies (10000 in Llama 2, 500000 in Llama 3).
        interleaved: which coordinates form a pair, see above.
        frequencies: (d/2,) the angle per position of each pair, for a
            rescaled RoPE (`core.rope_scaling`: Llama 3.1, YaRN, ...); when
            given, `base` is not used. Default `rope_frequencies(d, base)`.
            With rotary_dim, (rotary_dim/2,) and `rope_frequencies(rotary_dim, base)`.
        rotary_dim: partial RoPE: rotate only the first rotary_dim coordinates
            (even, 2 <= rotary_dim <= d) and pass the other d - rotary_dim
            through unchanged, as Qwen3-Next (a quarter of each head) and
            MiniMax-M2 (half) do; the pairs are formed inside those
            coordinates. Default d, the whole vector.

    Returns:
        (..., n, d) the rotated x, a new array with x's float dtype (float32
        stays float32; the angles are computed in float64 first). x is not modified.
    """
    x = as_float_array(x, "x")
    require_ndim(x, "x", 2, "(..., n, d)", hint="For one vector at position p, pass x[None, :] and positions=[p].")
    d = x.shape[-1]
    if d == 0 or d % 2:
        raise ValueError(f"x must have an even last axis d (RoPE rotates pairs of coordinates); got shape {x.shape}")
    if not isinstance(interleaved, (bool, np.bool_)):
        raise TypeError(f"interleaved must be True or False; got {interleaved!r}")
    r = d if rotary_dim is None else _check_rotary_dim(rotary_dim, d)
    pos = _check_positions(positions, x.shape)  # (..., n)
    theta = rope_frequencies(r, base) if frequencies is None else _check_frequencies(frequencies, r)
    angles = pos[..., None] * theta  # (..., n, 1) x (r/2,) -> (..., n, r/2), float64
    cos = np.cos(angles).astype(x.dtype, copy=False)  # (..., n, r/2)
    sin = np.sin(angles).astype(x.dtype, copy=False)
    if r == d:
        return _rotate(x, cos, sin, bool(interleaved))
    rotated = _rotate(x[..., :r], cos, sin, bool(interleaved))  # (..., n, r): the rotary part
    return np.concatenate([rotated, x[..., r:]], axis=-1)  # (..., n, r) and (..., n, d - r) -> (..., n, d)


def _check_rotary_dim(rotary_dim, d: int) -> int:
    """rotary_dim as an int: even, at least 2 and at most d."""
    if isinstance(rotary_dim, (bool, np.bool_)) or not isinstance(rotary_dim, (int, np.integer)):
        raise TypeError(f"rotary_dim must be an int; got {type(rotary_dim).__name__}")
    if rotary_dim < 2 or rotary_dim > d or rotary_dim % 2:
        raise ValueError(f"rotary_dim must be even and in 2..d = 2..{d} (RoPE rotates pairs of x's last axis); "
                         f"got {rotary_dim}")
    return int(rotary_dim)


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi's slope of each head, as in the ALiBi paper (Press et al., 2022) and BLOOM.

    For h a power of two the slopes are 2^(-8/h), 2^(-16/h), ..., 2^(-8): for 8
    heads 1/2, 1/4, ..., 1/256. For any other h, with m the largest power of
    two below h, the m slopes of m heads come first, followed by every other
    slope of 2m heads (the 1st, 3rd, 5th, ...) until there are h.

    Args:
        n_heads: h, the number of heads.

    Returns:
        (h,) float64 slopes, each in (0, 1).
    """
    h = positive_int(n_heads, "n_heads")

    def power_of_two(m: int) -> np.ndarray:  # m = 2^k heads: 2^(-8/m), 2^(-16/m), ..., 2^(-8)
        return 2.0 ** (-8.0 * np.arange(1, m + 1) / m)

    m = 1 << (h.bit_length() - 1)  # the largest power of two <= h
    slopes = power_of_two(m)
    if m < h:
        slopes = np.concatenate([slopes, power_of_two(2 * m)[0::2][: h - m]])
    return slopes


def alibi_bias(n_heads: int, n_q: int, n_k: int | None = None) -> np.ndarray:
    """ALiBi's bias -slope x distance for every head, a float mask to pass as `attn_mask`.

    bias[h, i, j] = -slope_h * |pos_i - j|, where the n_q queries are the last
    n_q of the n_k positions (pos_i = n_k - n_q + i, as for new tokens after a
    cache; with n_q = n_k, pos_i = i). A query's own key gets 0, a key t tokens
    away -t x slope. Within a row only differences matter to the softmax, so
    this gives the same weights as BLOOM's slope x j. Keys after the query get
    the same penalty by distance; a causal model masks them anyway (combine
    with the causal mask's -inf).

    Args:
        n_heads: h, the number of heads (slopes from `alibi_slopes`).
        n_q: number of queries.
        n_k: number of keys; defaults to n_q.

    Returns:
        (h, n_q, n_k) float64 bias, 0 on each query's own position, negative elsewhere.
    """
    slopes = alibi_slopes(n_heads)  # (h,)
    n_q = positive_int(n_q, "n_q")
    n_k = n_q if n_k is None else positive_int(n_k, "n_k")
    query_positions = np.arange(n_q) + (n_k - n_q)  # (n_q,): the last n_q positions
    distance = np.abs(query_positions[:, None] - np.arange(n_k)[None, :])  # (n_q, 1) - (1, n_k) -> (n_q, n_k)
    return 0.0 - slopes[:, None, None] * distance[None, :, :]  # (h, 1, 1) x (1, n_q, n_k) -> (h, n_q, n_k); 0.0, not -0.0
