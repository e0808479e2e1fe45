"""rope_attention that adds a causal mask the task does not ask for."""
CHECK = "rope_attention"
MISTAKE = "causal_mask_added"
MARKS = "3/15"

import numpy as np

from attention_course import apply_rope, scaled_dot_product_attention


def rope_attention(q, k, v, positions, base=10000.0):
    return scaled_dot_product_attention(apply_rope(q, positions, base), apply_rope(k, positions, base), v, is_causal=True)
