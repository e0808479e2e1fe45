"""apply_rope whose frequencies are base^(-i/d) instead of base^(-2i/d)."""
CHECK = "apply_rope"
MISTAKE = "wrong_frequency_exponent"
MARKS = "2/18"

import numpy as np


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (np.arange(d // 2) / d)  # i / d: the 2 is missing
    freqs = np.outer(positions, inv_freq)  # (n, d/2)
    emb = np.concatenate([freqs, freqs], axis=-1)  # (n, d)
    return (x * np.cos(emb) + rotate_half(x) * np.sin(emb)).astype(x.dtype)
