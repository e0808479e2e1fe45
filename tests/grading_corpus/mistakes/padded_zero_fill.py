"""padded_attention that zeroes the padded keys' scores."""
CHECK = "padded_attention"
MISTAKE = 'mask_filled_with_zero'
MARKS = "4/14"

import numpy as np
from attention_course import softmax
def padded_attention(Q, K, V, lengths):
    n = K.shape[-2]
    mask = (np.arange(n)[None, :] < np.asarray(lengths)[:, None])[:, None, :]
    s = np.where(mask, Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), 0.0)
    w = softmax(s, axis=-1)
    return w @ V, w
