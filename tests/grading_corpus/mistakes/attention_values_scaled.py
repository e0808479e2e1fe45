"""attention that scales V by 1/sqrt(d_k) instead of the scores."""
CHECK = "attention"
MISTAKE = 'observed_constant_factor'
MARKS = "2/17"

import numpy as np
from attention_course import softmax
def attention(Q, K, V):
    w = softmax(Q @ K.T, axis=-1)
    return w @ (V / np.sqrt(Q.shape[-1])), w
