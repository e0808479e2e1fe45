"""apply_rope with rotate_half (x2, -x1) but the sin subtracted: correct? no -- uses minus sin with (x2,-x1) => same as correct."""
CHECK = "apply_rope"
MISTAKE = 'rotates_backwards'
MARKS = "0/18"

import numpy as np
def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (np.arange(0, d, 2) / d)
    emb = np.concatenate([np.outer(positions, inv_freq)] * 2, axis=-1)
    x1, x2 = x[..., :d // 2], x[..., d // 2:]
    rot = np.concatenate([-x2, x1], axis=-1)
    return (x * np.cos(emb) - rot * np.sin(emb)).astype(x.dtype)
