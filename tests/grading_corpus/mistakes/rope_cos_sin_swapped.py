"""apply_rope with cos and sin in each other's place."""
CHECK = "apply_rope"
MISTAKE = "cos_and_sin_swapped"
MARKS = "0/18"

import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    angles = np.asarray(positions)[:, None] * base ** (-np.arange(0, d, 2) / d)  # (n, d/2)
    cos = np.concatenate([np.cos(angles)] * 2, axis=-1).astype(x.dtype)
    sin = np.concatenate([np.sin(angles)] * 2, axis=-1).astype(x.dtype)
    rotated = np.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
    return x * sin + rotated * cos
