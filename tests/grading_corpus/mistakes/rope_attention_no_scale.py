"""rope_attention that never divides the scores by sqrt(d)."""
CHECK = "rope_attention"
MISTAKE = "missing_scale"
MARKS = "4/15"

import numpy as np

from attention_course import apply_rope, softmax


def rope_attention(q, k, v, positions, base=10000.0):
    q, k = apply_rope(q, positions, base), apply_rope(k, positions, base)
    return softmax(q @ np.swapaxes(k, -1, -2)) @ v
