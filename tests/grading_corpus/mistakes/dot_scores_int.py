"""dot_scores that casts the scores to int."""
CHECK = "dot_scores"
MISTAKE = None
MARKS = "0/12"
MESSAGE = 'the integer dtype int64 where float64 was expected'

import numpy as np
def dot_scores(query, keys):
    return (keys @ query).astype(int)
