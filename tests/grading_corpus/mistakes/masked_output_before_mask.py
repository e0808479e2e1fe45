"""masked_attention that multiplies weights by the mask after softmax without renormalising, but the output from unmasked weights."""
CHECK = "masked_attention"
MISTAKE = 'does_not_sum_to_1'
MARKS = "0/18"

import numpy as np
from attention_course import softmax
def masked_attention(Q, K, V, mask):
    w = softmax(Q @ K.T / np.sqrt(Q.shape[-1]), axis=-1)
    return w @ V, w * mask
