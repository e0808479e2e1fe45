"""multi_head_attention with a loop over the heads, each sliced out of the projections by its own width."""
CHECK = "multi_head_attention"
import math
import numpy as np
from attention_course import softmax
def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    d_k, d_v = q.shape[1] // n_heads, v.shape[1] // n_heads
    outs = []
    for h in range(n_heads):
        qh, kh, vh = q[:, h * d_k:(h + 1) * d_k], k[:, h * d_k:(h + 1) * d_k], v[:, h * d_v:(h + 1) * d_v]
        outs.append(softmax(qh @ kh.T / math.sqrt(d_k)) @ vh)
    return np.concatenate(outs, axis=1) @ w_o
