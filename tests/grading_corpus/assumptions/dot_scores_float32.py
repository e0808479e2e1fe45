"""dot_scores computed in float32: it assumes 7 digits are enough, which cancelling products break."""
CHECK = "dot_scores"
MESSAGE = ('at index 0 expected 1, got 2', 'cut down to the smallest input')
MARKS = "7/8"

import numpy as np


def dot_scores(query, keys):
    return (keys.astype(np.float32) @ query.astype(np.float32)).astype(query.dtype)
