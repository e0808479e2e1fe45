"""scale_scores that writes into an array shaped like the scores: integer scores give integer results."""
CHECK = "scale_scores"
MESSAGE = ('at index (0, 0) expected 2.5, got 2', 'cut down to the smallest input')
MARKS = "9/11"

import numpy as np


def scale_scores(scores, d_k):
    out = np.empty_like(scores)
    out[...] = scores / np.sqrt(d_k)
    return out
