"""masked_attention written with a mask applied before the max and exp, scaled by d_k ** -0.5 (a Python float), float32 kept."""
CHECK = "masked_attention"
import numpy as np
def masked_attention(Q, K, V, mask):
    scores = np.where(mask, (Q @ K.T) * Q.shape[-1] ** -0.5, -np.inf)  # (n_q, n_k)
    top = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0))  # hidden keys: exp(-inf) = 0 exactly
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total > 0, total, 1)
    return weights @ V, weights
