"""rope_attention that rotates with the default positions 0, 1, 2, ... whatever `positions` says."""
CHECK = "rope_attention"
MISTAKE = "positions_ignored"
MARKS = "13/15"

import numpy as np

from attention_course import apply_rope, scaled_dot_product_attention


def rope_attention(q, k, v, positions, base=10000.0):
    return scaled_dot_product_attention(apply_rope(q, base=base), apply_rope(k, base=base), v)
