"""apply_rope reading its angles as degrees (np.radians)."""
CHECK = "apply_rope"
MISTAKE = 'observed_right_until'
MARKS = "0/18"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def apply_rope(x, positions, base):
    d = x.shape[-1]; half = d // 2
    theta = base ** (-2 * np.arange(half) / d)
    angles = np.radians(np.asarray(positions)[:, None] * theta)
    cos = np.cos(angles).astype(x.dtype); sin = np.sin(angles).astype(x.dtype)
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)
