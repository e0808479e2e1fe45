"""dot_scores with a loop that overwrites its result: only the last key's score comes back."""
CHECK = "dot_scores"
MISTAKE = "last_score_only"
MARKS = "0/12"

import numpy as np


def dot_scores(query, keys):
    for key in keys:
        score = np.dot(query, key)
    return score
