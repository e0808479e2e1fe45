"""apply_rope that splits the halves along axis 1 (right only for 2-D x)."""
CHECK = "apply_rope"
MISTAKE = None
MARKS = "9/18"
HINT = 'The line that failed, `x1, x2 = np.split(x, 2, axis=1)`, nam'

import numpy as np
def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (np.arange(0, d, 2) / d)
    emb = np.concatenate([np.outer(positions, inv_freq)] * 2, axis=-1)
    x1, x2 = np.split(x, 2, axis=1)
    rot = np.concatenate([-x2, x1], axis=1)
    return (x * np.cos(emb) + rot * np.sin(emb)).astype(x.dtype)
