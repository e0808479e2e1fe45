"""apply_rope whose rotate_half has its signs the wrong way round: every pair turns backwards."""
CHECK = "apply_rope"
MISTAKE = "rotates_backwards"
MARKS = "0/18"

import numpy as np


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([x[..., half:], -x[..., :half]], axis=-1)  # should be (-x2, x1)


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (np.arange(0, d, 2) / d)
    emb = np.concatenate([np.outer(positions, inv_freq)] * 2, axis=-1)  # (n, d)
    return x * np.cos(emb).astype(x.dtype) + rotate_half(x) * np.sin(emb).astype(x.dtype)
