"""scale_scores that divides the caller's array in place: a function that modifies its input."""
CHECK = "scale_scores"
MISTAKE = "modifies_input"
MARKS = "0/11"

import numpy as np


def scale_scores(scores, d_k):
    scores /= np.sqrt(d_k)
    return scores
