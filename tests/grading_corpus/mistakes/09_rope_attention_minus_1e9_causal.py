"""RoPE attention adding a causal mask of -1e9 above the diagonal."""
CHECK = "rope_attention"
MISTAKE = 'causal_mask_added'
MARKS = "3/15"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def rope_attention(q, k, v, positions, base):
    qr, kr = apply_rope(q, positions, base), apply_rope(k, positions, base)
    s = qr @ np.swapaxes(kr, -1, -2) / math.sqrt(q.shape[-1])
    n = s.shape[-1]
    s = s + np.triu(np.full((n, n), -1e9), 1)
    return softmax(s, axis=-1) @ v
