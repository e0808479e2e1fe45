"""rope_attention, right in itself, calling the notebook's own apply_rope, which turns the wrong way."""
CHECK = "rope_attention"
MESSAGE = 'the difference comes from your `apply_rope`'
MARKS = "2/15"

import numpy as np

from attention_course import scaled_dot_product_attention
from attention_course import apply_rope as course_rope


def apply_rope(x, positions, base):
    return course_rope(x, -np.asarray(positions), base)


def rope_attention(q, k, v, positions, base):
    return scaled_dot_product_attention(apply_rope(q, positions, base), apply_rope(k, positions, base), v)
