"""masked_attention whose fill of -inf is cut from an (n_k, n_k) square: it assumes n_q <= n_k."""
CHECK = "masked_attention"
MESSAGE = ('raised ValueError: operands could not be broadcast together', 'cut down to the smallest input')
MARKS = "14/18"

import math

import numpy as np

from attention_course import softmax


def masked_attention(Q, K, V, mask):
    n_q, n_k = Q.shape[0], K.shape[0]
    fill = np.full((n_k, n_k), -np.inf)[:n_q]  # (n_q, n_k) only while n_q <= n_k
    scores = np.where(mask, Q @ K.T / math.sqrt(Q.shape[-1]), fill)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
