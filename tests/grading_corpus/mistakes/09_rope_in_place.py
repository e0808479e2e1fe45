"""apply_rope writing the rotated halves back into x."""
CHECK = "apply_rope"
MISTAKE = 'modifies_input'
MARKS = "0/18"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def apply_rope(x, positions, base):
    d = x.shape[-1]; half = d // 2
    ang = np.asarray(positions)[:, None] * base ** (-2 * np.arange(half) / d)
    cos = np.cos(ang).astype(x.dtype); sin = np.sin(ang).astype(x.dtype)
    a = x[..., :half].copy(); b = x[..., half:].copy()
    x[..., :half] = a * cos - b * sin
    x[..., half:] = b * cos + a * sin
    return x
