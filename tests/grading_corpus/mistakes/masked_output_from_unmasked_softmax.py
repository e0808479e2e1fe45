"""masked_attention whose weights are right but whose output mixes the values with the softmax of every score, the mask left out."""
CHECK = "masked_attention"
MISTAKE = "output_from_unmasked_weights"
MARKS = "0/18"
ABSENT = ("do not sum", "does not sum")

import math

import numpy as np

from attention_course import softmax


def masked_attention(Q, K, V, mask):
    scores = Q @ K.T / math.sqrt(Q.shape[-1])
    weights = softmax(np.where(mask, scores, -np.inf), axis=-1)
    return softmax(scores, axis=-1) @ V, weights
