"""apply_rope cutting the positions to x's first axis, taken as the tokens."""
CHECK = "apply_rope"
MISTAKE = None
MARKS = "13/18"
HINT = 'The line that failed, `return np.concate'
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def apply_rope(x, positions, base):
    d = x.shape[-1]; half = d // 2
    theta = base ** (-2 * np.arange(half) / d)
    angles = np.asarray(positions)[:x.shape[0], None] * theta
    cos = np.cos(angles).astype(x.dtype); sin = np.sin(angles).astype(x.dtype)
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)
