"""padded_attention that scales by sqrt(Q.shape[1]): the sequence length n of a batch (B, n, d_k), not d_k."""
CHECK = "padded_attention"
MISTAKE = "scaled_by_n_q"
MARKS = "0/14"
ABSENT = ("divided by d_k itself",)

import math

import numpy as np

from attention_course import padding_mask, softmax


def padded_attention(Q, K, V, lengths):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[1])
    weights = softmax(np.where(padding_mask(lengths, K.shape[-2]), scores, -np.inf), axis=-1)
    return weights @ V, weights
