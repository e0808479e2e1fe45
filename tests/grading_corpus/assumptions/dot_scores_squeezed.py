"""dot_scores that squeezes the keys: it assumes no axis has size 1 (one key, or d_k = 1)."""
CHECK = "dot_scores"
MESSAGE = ('expected shape (1,), got shape ()', 'cut down to the smallest input')
MARKS = "8/12"

import numpy as np


def dot_scores(query, keys):
    return np.squeeze(keys) @ query
