"""rope_attention scaled by sqrt(d_v)."""
CHECK = "rope_attention"
MISTAKE = 'scaled_by_d_v'
MARKS = "12/15"

import math

import numpy as np
from attention_course import apply_rope, softmax
def rope_attention(q, k, v, positions, base=10000.0):
    q, k = apply_rope(q, positions, base), apply_rope(k, positions, base)
    w = softmax(q @ np.swapaxes(k, -1, -2) / math.sqrt(v.shape[-1]), axis=-1)
    return w @ v
