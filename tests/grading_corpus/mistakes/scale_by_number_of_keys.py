"""scale_scores that divides by the square root of the number of keys (the last axis), not of d_k."""
CHECK = "scale_scores"
MISTAKE = "scaled_by_number_of_keys"
MARKS = "1/11"

import math


def scale_scores(scores, d_k):
    return scores / math.sqrt(scores.shape[-1])
