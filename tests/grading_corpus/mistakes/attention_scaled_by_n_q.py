"""attention scaled by sqrt(Q.shape[0]) (number of queries)."""
CHECK = "attention"
MISTAKE = 'observed_some_rows_right'
MARKS = "2/9"

import numpy as np
from attention_course import softmax
def attention(Q, K, V):
    w = softmax(Q @ K.T / np.sqrt(Q.shape[0]), axis=-1)
    return w @ V, w
