"""rope_attention using k.T (right only for 2-D)."""
CHECK = "rope_attention"
MISTAKE = None
MARKS = "11/15"
HINT = 'The line that failed, `w = softmax(q @ k.T / math.sqrt(q.shape'

import math

import numpy as np
from attention_course import apply_rope, softmax
def rope_attention(q, k, v, positions, base=10000.0):
    q, k = apply_rope(q, positions, base), apply_rope(k, positions, base)
    w = softmax(q @ k.T / math.sqrt(q.shape[-1]), axis=-1)
    return w @ v
