"""padded_attention that sizes its mask by the longest sequence instead of the padded length n."""
CHECK = "padded_attention"
MISTAKE = None
HINT = "The last axes of its arrays differ (2 and 3)"
MARKS = "10/14"

import math

import numpy as np

from attention_course import softmax


def padded_attention(Q, K, V, lengths):
    mask = (np.arange(lengths.max())[None, :] < lengths[:, None])[:, None, :]  # (B, 1, max(lengths))
    scores = np.where(mask, Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
