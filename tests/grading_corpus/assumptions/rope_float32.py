"""apply_rope whose angles are computed in float32: it assumes positions stay small."""
CHECK = "apply_rope"
MESSAGE = 'about what float32 holds'
MARKS = "2/18"

import numpy as np


def apply_rope(x, positions, base):
    d = x.shape[-1]
    freqs = base ** (-np.arange(0, d, 2, dtype=np.float32) / np.float32(d))
    angles = np.asarray(positions, dtype=np.float32)[:, None] * freqs.astype(np.float32)  # (n, d/2) in float32
    cos = np.concatenate([np.cos(angles)] * 2, axis=-1).astype(x.dtype)
    sin = np.concatenate([np.sin(angles)] * 2, axis=-1).astype(x.dtype)
    half = d // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin
