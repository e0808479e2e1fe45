"""dot_scores that squeezes the keys: it assumes no axis has size 1 (one key, or d_k = 1)."""
CHECK = "dot_scores"
MESSAGE = 'raised ValueError: matmul'
MARKS = "6/8"

import numpy as np


def dot_scores(query, keys):
    return np.squeeze(keys) @ query
