"""flash_attention that builds the whole n x n score matrix: right numbers, n^2 memory."""
CHECK = "flash_attention"
MISTAKE = "builds_full_matrix"
MARKS = "19/20"

import math

import numpy as np

from attention_course import softmax


def flash_attention(Q, K, V, block_size):
    scores = Q @ K.T / math.sqrt(Q.shape[1])  # (n_q, n_k): exactly what tiling should avoid
    return softmax(scores) @ V
