"""RoPE attention rotating the values too."""
CHECK = "rope_attention"
MISTAKE = 'values_rotated'
MARKS = "0/15"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def rope_attention(q, k, v, positions, base):
    return scaled_dot_product_attention(apply_rope(q, positions, base), apply_rope(k, positions, base), apply_rope(v, positions, base))
