"""padded attention whose mask has shape (B, n, 1): it hides padding queries, not padding keys."""
CHECK = "padded_attention"
MISTAKE = 'padding_keys_not_hidden'
MARKS = "2/14"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def padded_attention(Q, K, V, lengths):
    n = K.shape[-2]
    real = np.arange(n)[None, :] < np.asarray(lengths)[:, None]
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    scores = np.where(real[:, :, None], scores, -np.inf)
    w = softmax(scores, axis=-1)
    return w @ V, w
