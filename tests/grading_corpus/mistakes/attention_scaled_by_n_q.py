"""attention scaled by sqrt(Q.shape[0]) (number of queries)."""
CHECK = "attention"
MISTAKE = 'scaled_by_n_q'
MARKS = "5/17"

import math

import numpy as np
from attention_course import softmax
def attention(Q, K, V):
    w = softmax(Q @ K.T / math.sqrt(Q.shape[0]), axis=-1)
    return w @ V, w
