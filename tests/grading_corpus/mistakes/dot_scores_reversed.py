"""dot_scores that collects the scores last key first: the right numbers, reversed."""
CHECK = "dot_scores"
MISTAKE = "observed_permutation"
MARKS = "2/12"

import numpy as np


def dot_scores(query, keys):
    scores = []
    for key in keys:
        scores.insert(0, float(key @ query))
    return np.array(scores)
