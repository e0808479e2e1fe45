"""dot_scores whose loop starts at key 1 and appends a zero for key 0."""
CHECK = "dot_scores"
MISTAKE = None
MARKS = "0/12"
MESSAGE = 'at index 0 expected 1, got 0'

import numpy as np
def dot_scores(query, keys):
    out = np.zeros(len(keys))
    for i in range(1, len(keys)):
        out[i] = keys[i] @ query
    return out
