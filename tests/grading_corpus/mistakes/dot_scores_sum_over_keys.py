"""dot_scores that sums the products over the keys instead of over d_k."""
CHECK = "dot_scores"
MISTAKE = "summed_over_keys"
MARKS = "0/12"

import numpy as np


def dot_scores(query, keys):
    return np.sum(query * keys, axis=0)
