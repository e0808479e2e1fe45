"""padded_attention treating lengths as the last index (length - 1)."""
CHECK = "padded_attention"
MISTAKE = 'length_short_by_one'
MARKS = "0/14"

import numpy as np
from attention_course import softmax
def padded_attention(Q, K, V, lengths):
    n = K.shape[-2]
    mask = (np.arange(n)[None, :] < np.asarray(lengths)[:, None] - 1)[:, None, :]
    s = np.where(mask, Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), -np.inf)
    w = softmax(s, axis=-1)
    return w @ V, w
