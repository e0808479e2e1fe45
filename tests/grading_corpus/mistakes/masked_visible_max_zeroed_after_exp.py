"""masked_attention that takes each row's max over the visible scores only and zeroes hidden keys after exp: a hidden key scoring far above the visible ones overflows, and inf * 0 is nan."""
CHECK = "masked_attention"
MISTAKE = "masked_after_exp"
MARKS = "16/18"

import math

import numpy as np


def masked_attention(Q, K, V, mask):
    scores = Q @ K.T / math.sqrt(Q.shape[-1])  # (n_q, n_k)
    top = np.max(np.where(mask, scores, -np.inf), axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(scores - top) * mask
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total > 0, total, 1.0)
    return weights @ V, weights
