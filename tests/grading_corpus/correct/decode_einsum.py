"""decode_step that groups the query heads with a reshape and np.einsum instead of repeating the cache."""
CHECK = "decode_step"
import numpy as np
from attention_course import apply_rope, softmax
def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1]
    q = apply_rope(q, [t])
    k_cache = np.concatenate([k_cache, apply_rope(k, [t])], axis=1); v_cache = np.concatenate([v_cache, v], axis=1)
    h_kv = k_cache.shape[0]; g = q.shape[0] // h_kv
    qg = q.reshape(h_kv, g, 1, -1)
    s = np.einsum("hgqd,hkd->hgqk", qg, k_cache) * q.dtype.type(1 / np.sqrt(q.shape[-1]))  # the scale in q's dtype
    out = np.einsum("hgqk,hkv->hgqv", softmax(s), v_cache)
    return out.reshape(q.shape[0], 1, -1), k_cache, v_cache
