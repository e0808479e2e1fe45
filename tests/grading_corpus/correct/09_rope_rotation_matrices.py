"""apply_rope turning each pair with its own 2 x 2 rotation matrix, in loops (right)."""
CHECK = "apply_rope"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def apply_rope(x, positions, base):
    d = x.shape[-1]; half = d // 2
    out = np.empty_like(x)
    for n, p in enumerate(positions):
        for i in range(half):
            a = p * base ** (-2 * i / d)
            rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], dtype=x.dtype)
            pair = np.stack([x[..., n, i], x[..., n, i + half]], axis=-1)  # (..., 2)
            turned = pair @ rot.T
            out[..., n, i], out[..., n, i + half] = turned[..., 0], turned[..., 1]
    return out
