"""masked_attention using np.where(mask, -inf, s) (hides what may be seen)."""
CHECK = "masked_attention"
MISTAKE = 'mask_inverted'
MARKS = "0/18"

import numpy as np
from attention_course import softmax
def masked_attention(Q, K, V, mask):
    s = np.where(mask, -np.inf, Q @ K.T / np.sqrt(Q.shape[-1]))
    w = softmax(s, axis=-1)
    return w @ V, w
