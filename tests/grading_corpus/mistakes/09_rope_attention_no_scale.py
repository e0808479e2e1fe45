"""RoPE attention without the 1/sqrt(d) scale."""
CHECK = "rope_attention"
MISTAKE = 'missing_scale'
MARKS = "4/15"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def rope_attention(q, k, v, positions, base):
    qr, kr = apply_rope(q, positions, base), apply_rope(k, positions, base)
    s = qr @ np.swapaxes(kr, -1, -2)
    return softmax(s, axis=-1) @ v
