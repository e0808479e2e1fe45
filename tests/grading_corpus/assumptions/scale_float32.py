"""scale_scores that casts the scores to float32: it assumes they fit, which 1e39 does not."""
CHECK = "scale_scores"
MESSAGE = 'the result has dtype float32 where float64 was expected'
MARKS = "6/7"

import numpy as np


def scale_scores(scores, d_k):
    return scores.astype(np.float32) / np.float32(np.sqrt(d_k))
