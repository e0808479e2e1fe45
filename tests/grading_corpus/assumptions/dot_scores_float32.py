"""dot_scores computed in float32: it assumes 7 digits are enough, which cancelling products break."""
CHECK = "dot_scores"
MESSAGE = 'about what float32 holds'
MARKS = "4/12"

import numpy as np


def dot_scores(query, keys):
    return (keys.astype(np.float32) @ query.astype(np.float32)).astype(query.dtype)
