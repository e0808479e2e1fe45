"""dot_scores that measures the distance between the query and each key."""
CHECK = "dot_scores"
MISTAKE = "distance_not_dot"
MARKS = "0/12"

import numpy as np


def dot_scores(query, keys):
    return np.sqrt(((keys - query) ** 2).sum(axis=1))
