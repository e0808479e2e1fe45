"""decode_step grouping the query heads by key/value head with a reshape and np.einsum (right)."""
CHECK = "decode_step"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1]
    h_q, h_kv = q.shape[0], k_cache.shape[0]
    k_cache = np.concatenate([k_cache, apply_rope(k, positions=[t])], axis=1)
    v_cache = np.concatenate([v_cache, v], axis=1)
    qg = apply_rope(q, positions=[t]).reshape(h_kv, h_q // h_kv, q.shape[-1])  # (h_kv, g, d)
    s = np.einsum("hgd,htd->hgt", qg, k_cache) / math.sqrt(q.shape[-1])
    w = softmax(s, axis=-1)
    out = np.einsum("hgt,htd->hgd", w, v_cache).reshape(h_q, 1, v.shape[-1])
    return out, k_cache, v_cache
