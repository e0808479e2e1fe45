"""attention scaling the already scaled scores again by 1/sqrt(d_k)."""
CHECK = "attention"
MISTAKE = 'divided_by_d_k'
MARKS = "4/17"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def attention(Q, K, V):
    d_k = Q.shape[-1]
    scores = Q @ K.T / math.sqrt(d_k)
    w = softmax(scores / math.sqrt(d_k), axis=-1)
    return w @ V, w
