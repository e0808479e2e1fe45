"""rope_attention that never passes `base` on: always base 10000."""
CHECK = "rope_attention"
MISTAKE = "base_ignored"
MARKS = "12/15"

import numpy as np

from attention_course import apply_rope, scaled_dot_product_attention


def rope_attention(q, k, v, positions, base=10000.0):
    return scaled_dot_product_attention(apply_rope(q, positions), apply_rope(k, positions), v)
