"""apply_rope that rotates the first half in place, then computes the second half from the already-rotated first."""
CHECK = "apply_rope"
MISTAKE = "second_half_from_rotated_first"
MARKS = "0/18"

import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    half = d // 2
    angles = np.asarray(positions, dtype=np.float64)[:, None] * base ** (-np.arange(0, d, 2) / d)  # (n, d/2)
    cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    out = np.array(x, copy=True)
    out[..., :half] = x[..., :half] * cos - x[..., half:] * sin
    out[..., half:] = x[..., half:] * cos + out[..., :half] * sin  # the first half already rotated
    return out
