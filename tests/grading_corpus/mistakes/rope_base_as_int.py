"""apply_rope that reads the base as a whole number (int(base))."""
CHECK = "apply_rope"
MISTAKE = None
MESSAGE = "expected"
MARKS = "17/18"

import math

import numpy as np


def apply_rope(x, positions, base):
    d = x.shape[-1]
    half = d // 2
    theta = int(base) ** (-2 * np.arange(half) / d)
    angles = np.asarray(positions)[:, None] * theta
    cos = np.cos(angles).astype(x.dtype)
    sin = np.sin(angles).astype(x.dtype)
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)
