"""RoPE attention rotating with the positions in reverse order."""
CHECK = "rope_attention"
MISTAKE = 'observed_permutation'
MARKS = "2/15"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def rope_attention(q, k, v, positions, base):
    p = np.asarray(positions)[::-1]
    return scaled_dot_product_attention(apply_rope(q, p, base), apply_rope(k, p, base), v)
