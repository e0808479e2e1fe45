"""apply_rope turning neighbouring pairs (0, 1), (2, 3) instead of the halves."""
CHECK = "apply_rope"
MISTAKE = 'interleaved_pairs'
MARKS = "2/18"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def apply_rope(x, positions, base):
    d = x.shape[-1]; half = d // 2
    theta = base ** (-2 * np.arange(half) / d)
    ang = np.asarray(positions)[:, None] * theta
    cos = np.cos(ang).astype(x.dtype); sin = np.sin(ang).astype(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = b * cos + a * sin
    return out
