"""apply_rope that turns every token by the frequencies themselves: the angles are never multiplied by the position."""
CHECK = "apply_rope"
MISTAKE = "angles_not_times_position"
MARKS = "0/18"

import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    h = d // 2
    angles = base ** (-2 * np.arange(h) / d)  # (d/2,): the same for every token
    c, s = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    a, b = x[..., :h], x[..., h:]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)
