"""attention that returns weights.T for square inputs (weights computed over axis 0 then transposed wrong)."""
CHECK = "attention"
MISTAKE = 'query_key_swapped'
MARKS = "0/17"

import numpy as np
from attention_course import softmax
def attention(Q, K, V):
    w = softmax(Q @ K.T / np.sqrt(Q.shape[-1]), axis=-1)
    return w @ V, w.T
