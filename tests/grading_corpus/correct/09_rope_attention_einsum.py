"""RoPE attention with np.einsum and an in-place division (right)."""
CHECK = "rope_attention"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def rope_attention(q, k, v, positions, base):
    qr, kr = apply_rope(q, positions, base), apply_rope(k, positions, base)
    s = np.einsum("...qd,...kd->...qk", qr, kr) / math.sqrt(q.shape[-1])
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s); w /= w.sum(axis=-1, keepdims=True)
    return np.einsum("...qk,...kd->...qd", w, v)
