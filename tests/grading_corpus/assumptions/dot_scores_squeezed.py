"""dot_scores that squeezes the keys: it assumes no axis has size 1 (one key, or d_k = 1)."""
CHECK = "dot_scores"
MESSAGE = 'd_k = 1: each score is one product, cut down to the smallest input'
MARKS = "6/8"

import numpy as np


def dot_scores(query, keys):
    return np.squeeze(keys) @ query
