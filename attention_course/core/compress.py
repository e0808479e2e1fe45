"""Compressed keys: a window of m tokens pooled into one key by a learned, per-coordinate softmax gate.

DeepSeek-V4 keeps, beside a sliding window of its tokens' keys, one
*compressed* entry for every m tokens. Each token t of a window gives a
candidate vector c_t (d,) and a gate z_t (d,); a learned bias b_j (d,) per
place j in the window is added to the gate, and the entry is the softmax
average of the candidates, taken separately in each coordinate i:

    entry[i] = sum_j softmax_j(z_j[i] + b_j[i]) * c_j[i]        j = 0 .. m-1

So each coordinate picks its own mix of the window's tokens (a token can
dominate coordinate 3 and be ignored in coordinate 5), and the entry stays in
the convex hull of its candidates.

`gated_pool` pools non-overlapping windows (DeepSeek-V4's heavily compressed
attention, m = 128). `overlapping_gated_pool` pools windows of 2m that
overlap by m (its compressed sparse attention, m = 4): each token gives two
candidates and two gates, one half for the window it sits in and one for the
next, so entry w mixes window w - 1's "next" halves with window w's own.
Neither rotates nor normalises: the model does that to the entries after
(`decoder/v4_attention.py`).
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, positive_int, require_ndim
from .softmax import softmax

__all__ = ["gated_pool", "overlapping_gated_pool"]


def _check(kv, gate, ratio, position_bias, width_factor: int):
    c = as_float_array(kv, "kv")
    z = as_float_array(gate, "gate")
    b = as_float_array(position_bias, "position_bias")
    require_ndim(c, "kv", 2, "(n, d)")
    if z.shape != c.shape:
        raise ValueError(f"gate must have the shape of kv {c.shape}; got shape {z.shape}")
    m = positive_int(ratio, "ratio")
    n, width = c.shape[-2:]
    if n % m:
        raise ValueError(f"kv must hold whole windows: n = {n} is not a multiple of ratio = {m} (shape {c.shape})")
    if width % width_factor:
        raise ValueError(f"kv's last axis must split in {width_factor} halves; got shape {c.shape}")
    if b.shape != (m, width):
        raise ValueError(f"position_bias must have shape (ratio, width) = ({m}, {width}); got shape {b.shape}")
    return c, z, b, m


def gated_pool(kv, gate, ratio: int, position_bias) -> np.ndarray:
    """Pool each window of `ratio` consecutive tokens into one entry, a per-coordinate softmax average.

        entry_w[i] = sum_j softmax_j(gate[w m + j, i] + position_bias[j, i]) * kv[w m + j, i]

    Args:
        kv: (..., n, d) each token's candidate vector, n a multiple of ratio.
        gate: (..., n, d) each token's gate logits, per coordinate.
        ratio: m, the tokens per window.
        position_bias: (m, d) added to the gates of the window's j-th token.

    Returns:
        (..., n / m, d) one entry per window; the softmax is computed in
        float32 at least.
    """
    c, z, b, m = _check(kv, gate, ratio, position_bias, 1)
    n, d = c.shape[-2:]
    windows = c.reshape(c.shape[:-2] + (n // m, m, d))  # (..., n, d) -> (..., n/m, m, d)
    logits = z.reshape(windows.shape) + b  # (..., n/m, m, d): the gates with their place's bias
    weights = softmax(logits.astype(np.result_type(logits.dtype, np.float32)), axis=-2)  # over the window's m tokens
    return (windows * weights.astype(c.dtype)).sum(axis=-2)  # (..., n/m, m, d) -> (..., n/m, d)


def overlapping_gated_pool(kv, gate, ratio: int, position_bias, previous=None) -> np.ndarray:
    """Pool windows of 2 m tokens that overlap by m: entry w reads window w - 1 and window w.

    Each token gives 2 d values: its first half a (the candidate it offers the
    *next* window's entry) and its second half b (for its own window's). Entry w
    is `gated_pool`'s softmax over the 2 m slots [a of window w - 1, b of window w]:

        entry_w[i] = sum over the 2m slots s of softmax_s(z_s[i]) * c_s[i]

    with each slot's gate z = gate + position_bias of its place in its own window.

    Args:
        kv: (n, 2 d) candidates [a | b], n a multiple of ratio.
        gate: (n, 2 d) gate logits [a | b].
        ratio: m, the stride between entries (the windows are 2 m wide).
        position_bias: (m, 2 d) added to the gates by place in the window.
        previous: None, or (kv_a, gate_a), each (m, d): the a halves of the
            window before kv's first one (its gates with their bias already
            added), kept from an earlier call. None: entry 0 has no earlier
            window, its first m slots get weight 0.

    Returns:
        (n / m, d) one entry per window.
    """
    c, z, b, m = _check(kv, gate, ratio, position_bias, 2)
    if c.ndim != 2:
        raise ValueError(f"kv must have shape (n, 2 d), one sequence; got shape {c.shape}")
    n, width = c.shape
    d = width // 2
    windows = c.reshape(n // m, m, width)  # (n, 2d) -> (n/m, m, 2d)
    logits = z.reshape(windows.shape) + b  # (n/m, m, 2d)
    slots = np.zeros((n // m, 2 * m, d), dtype=c.dtype)  # (n/m, 2m, d): [a of window w-1, b of window w]
    slot_logits = np.full((n // m, 2 * m, d), -np.inf, dtype=np.result_type(logits.dtype, np.float32))
    slots[:, m:], slot_logits[:, m:] = windows[..., d:], logits[..., d:]  # b halves: the window's own
    slots[1:, :m], slot_logits[1:, :m] = windows[:-1, :, :d], logits[:-1, :, :d]  # a halves of the window before
    if previous is not None:
        prev_kv, prev_gate = (as_float_array(p, name) for p, name in zip(previous, ("previous kv", "previous gate")))
        if prev_kv.shape != (m, d) or prev_gate.shape != (m, d):
            raise ValueError(f"previous must be two arrays of shape (ratio, d) = ({m}, {d}); got shapes "
                             f"{prev_kv.shape} and {prev_gate.shape}")
        slots[0, :m], slot_logits[0, :m] = prev_kv, prev_gate
    weights = softmax(slot_logits, axis=-2)  # (n/m, 2m, d): over the 2m slots, per coordinate
    return (slots * weights.astype(c.dtype)).sum(axis=-2)  # (n/m, 2m, d) -> (n/m, d)
