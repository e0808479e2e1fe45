"""apply_rope with base 10000 written in, whatever `base` says."""
CHECK = "apply_rope"
MISTAKE = 'base_ignored'
MARKS = "12/18"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def apply_rope(x, positions, base):
    d = x.shape[-1]; half = d // 2
    theta = 10000.0 ** (-2 * np.arange(half) / d)
    angles = np.asarray(positions)[:, None] * theta
    cos = np.cos(angles).astype(x.dtype); sin = np.sin(angles).astype(x.dtype)
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)
