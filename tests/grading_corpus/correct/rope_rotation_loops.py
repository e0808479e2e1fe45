"""apply_rope rotating pair by pair with math.cos and math.sin."""
CHECK = "apply_rope"

import math

import numpy as np


def apply_rope(x, positions, base):
    d = x.shape[-1]; half = d // 2
    out = np.empty_like(x)
    for t, p in enumerate(positions):
        for i in range(half):
            ang = p * base ** (-2 * i / d)
            c, s = math.cos(ang), math.sin(ang)
            a, b = x[..., t, i], x[..., t, i + half]
            out[..., t, i] = a * c - b * s
            out[..., t, i + half] = a * s + b * c
    return out
