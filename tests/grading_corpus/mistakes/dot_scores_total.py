"""dot_scores that adds every product up into one number."""
CHECK = "dot_scores"
MISTAKE = "one_total"
MARKS = "0/12"

import numpy as np


def dot_scores(query, keys):
    return np.sum(keys * query)
