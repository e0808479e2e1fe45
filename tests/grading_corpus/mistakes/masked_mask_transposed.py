"""masked_attention applying mask.T."""
CHECK = "masked_attention"
MISTAKE = 'mask_transposed'
MARKS = "14/18"

import numpy as np
from attention_course import softmax
def masked_attention(Q, K, V, mask):
    mask = np.broadcast_to(mask, (Q.shape[0], K.shape[0]))
    s = Q @ K.T / np.sqrt(Q.shape[-1])
    if s.shape[0] == s.shape[1]:
        mask = mask.T
    w = softmax(np.where(mask, s, -np.inf), axis=-1)
    return w @ V, w
