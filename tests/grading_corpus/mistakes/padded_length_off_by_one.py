"""padded_attention whose mask keeps one padding key: position L counted as real."""
CHECK = "padded_attention"
MISTAKE = "length_off_by_one"
MARKS = "2/14"

import numpy as np

from attention_course import softmax


def padded_attention(Q, K, V, lengths):
    n = K.shape[1]
    mask = (np.arange(n)[None, :] <= lengths[:, None])[:, None, :]
    scores = np.where(mask, Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
