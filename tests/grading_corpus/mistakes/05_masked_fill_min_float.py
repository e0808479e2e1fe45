"""masked attention filling hidden scores with the dtype's most negative number instead of -inf."""
CHECK = "masked_attention"
MISTAKE = 'mask_filled_with_large_negative'
MARKS = "16/18"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def masked_attention(Q, K, V, mask):
    scores = Q @ K.T / math.sqrt(Q.shape[-1])
    scores = np.where(mask, scores, np.finfo(scores.dtype).min)
    w = softmax(scores, axis=-1)
    return w @ V, w
