"""tiled attention with while loops and 1-D running max and sum, in the input's dtype (right)."""
CHECK = "flash_attention"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def flash_attention(Q, K, V, block_size):
    n_q, d_k = Q.shape; n_k, d_v = V.shape
    dt = np.result_type(Q, K, V)
    out = np.zeros((n_q, d_v), dt)
    i = 0
    while i < n_q:
        q = Q[i:i + block_size] * dt.type(1 / math.sqrt(d_k))
        m = np.full(len(q), -np.inf, dt); l = np.zeros(len(q), dt); acc = np.zeros((len(q), d_v), dt)
        j = 0
        while j < n_k:
            s = q @ K[j:j + block_size].T
            m2 = np.maximum(m, s.max(1))
            c = np.exp(m - m2); p = np.exp(s - m2[:, None])
            l = l * c + p.sum(1); acc = acc * c[:, None] + p @ V[j:j + block_size]
            m = m2; j += block_size
        out[i:i + block_size] = acc / l[:, None]
        i += block_size
    return out
