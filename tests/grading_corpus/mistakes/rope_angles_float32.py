"""apply_rope with the angle table computed in float32."""
CHECK = "apply_rope"
MISTAKE = 'observed_float32_digits'
MARKS = "2/18"

import numpy as np
def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    inv_freq = (1.0 / base ** (np.arange(0, d, 2) / d)).astype(np.float32)
    ang = np.outer(np.asarray(positions, dtype=np.float32), inv_freq)
    emb = np.concatenate([ang, ang], axis=-1)
    x1, x2 = x[..., :d // 2], x[..., d // 2:]
    rot = np.concatenate([-x2, x1], axis=-1)
    return x * np.cos(emb).astype(x.dtype) + rot * np.sin(emb).astype(x.dtype)
