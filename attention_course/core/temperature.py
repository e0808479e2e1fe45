"""Attention temperature tuning: queries scaled up with their position in layers without RoPE (Llama 4).

A layer with no positional encoding (NoPE) spreads its attention ever more
thinly as the context grows: with n keys of about equal score, each gets
about 1/n. Llama 4 multiplies each query of its NoPE layers by a factor that
grows slowly with the query's position p (0-based), sharpening the softmax
at long range (Nakanishi, "Scalable-Softmax Is Superior for Attention", 2025):

    temperature(p) = 1 + attn_scale * log(1 + floor((p + 1) / floor_scale))

It is exactly 1 for the first floor_scale - 1 positions (8191 with
transformers' default floor_scale = 8192), then steps up once every
floor_scale positions: from p + 1 = k * floor_scale on it is
1 + attn_scale * log(1 + k). Multiplying the query multiplies every score
of its row, so this is a per-row inverse temperature on the softmax.
"""

from __future__ import annotations

import numpy as np


def nope_temperature(positions, floor_scale: float, attn_scale: float) -> np.ndarray:
    """(n,) positions -> (n,) float32 factors 1 + attn_scale * log1p(floor((p + 1) / floor_scale)).

    Computed in float32, as transformers computes it, so that a float32 model
    multiplies its queries by the same numbers.

    Args:
        positions: (n,) non-negative integer positions of the queries.
        floor_scale: positions per step of the factor (config: floor_scale), > 0.
        attn_scale: how much each step adds (config: attn_scale).

    Returns:
        (n,) float32 array, one factor per query position.
    """
    p = np.asarray(positions)
    if p.ndim != 1 or p.dtype.kind not in "iu":
        raise ValueError(f"positions must be a 1-D integer array (n,); got shape {p.shape} and dtype {p.dtype}")
    if np.any(p < 0):
        raise ValueError(f"positions must be non-negative; got a minimum of {p.min()}")
    if not floor_scale > 0:
        raise ValueError(f"floor_scale must be positive; got {floor_scale!r}")
    steps = np.floor((p.astype(np.float32) + np.float32(1.0)) / np.float32(floor_scale))  # (n,) float32
    return (np.log1p(steps) * np.float32(attn_scale) + np.float32(1.0)).astype(np.float32)  # (n,)
