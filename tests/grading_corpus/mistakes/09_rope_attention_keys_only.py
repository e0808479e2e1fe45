"""RoPE attention rotating the keys only."""
CHECK = "rope_attention"
MISTAKE = 'one_side_rotated'
MARKS = "2/15"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def rope_attention(q, k, v, positions, base):
    return scaled_dot_product_attention(q, apply_rope(k, positions, base), v)
