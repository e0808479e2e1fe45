"""apply_rope pairing neighbouring coordinates (0, 1), (2, 3), ...: the GPT-J convention, not the halves."""
CHECK = "apply_rope"
MISTAKE = "interleaved_pairs"
MARKS = "2/18"

import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)  # (d/2,)
    angles = np.asarray(positions)[:, None] * theta  # (n, d/2)
    cos, sin = np.cos(angles), np.sin(angles)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = odd * cos + even * sin
    return out
