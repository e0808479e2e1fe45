"""scale_scores that divides by the square root of the number of scores."""
CHECK = "scale_scores"
MISTAKE = "scaled_by_scores_size"
MARKS = "1/11"

import numpy as np


def scale_scores(scores, d_k):
    return scores / np.sqrt(scores.size)
