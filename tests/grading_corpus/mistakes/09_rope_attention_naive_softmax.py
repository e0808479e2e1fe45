"""RoPE attention taking exp of the scores without subtracting their max."""
CHECK = "rope_attention"
MISTAKE = 'no_max_subtraction'
MARKS = "13/15"
ABSENT = ('helper',)  # untrue of this code
import math
import numpy as np
from attention_course import apply_rope


def rope_attention(q, k, v, positions, base):
    qr, kr = apply_rope(q, positions, base), apply_rope(k, positions, base)
    e = np.exp(qr @ np.swapaxes(kr, -1, -2) / math.sqrt(q.shape[-1]))
    return e / e.sum(axis=-1, keepdims=True) @ v
