"""padded_attention that forgets the padding: plain attention over every key."""
CHECK = "padded_attention"
MISTAKE = "padding_keys_not_hidden"
MARKS = "2/14"

import numpy as np

from attention_course import softmax


def padded_attention(Q, K, V, lengths):
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), axis=-1)
    return weights @ V, weights
