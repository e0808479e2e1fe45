"""apply_rope that puts the position into the exponent: base^(-2i p / d)."""
CHECK = "apply_rope"
MISTAKE = "position_times_exponent"
MARKS = "0/18"

import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    angles = base ** (-np.arange(0, d, 2)[None, :] * np.asarray(positions, dtype=float)[:, None] / d)  # (n, d/2)
    cos = np.concatenate([np.cos(angles)] * 2, axis=-1).astype(x.dtype)
    sin = np.concatenate([np.sin(angles)] * 2, axis=-1).astype(x.dtype)
    rotated = np.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
    return x * cos + rotated * sin
