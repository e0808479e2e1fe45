"""padded_attention, right in itself, calling the notebook's own padding_mask, which counts one token too many."""
CHECK = "padded_attention"
MESSAGE = 'the difference comes from your `padding_mask`'
MARKS = "2/14"

import math

import numpy as np

from attention_course import softmax


def padding_mask(lengths, n):
    return (np.arange(n)[None, :] <= np.asarray(lengths)[:, None])[:, None, :]


def padded_attention(Q, K, V, lengths):
    mask = padding_mask(lengths, K.shape[-2])
    scores = np.where(mask, Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
