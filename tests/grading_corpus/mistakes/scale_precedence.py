"""scale_scores using d_k ** 1/2 (precedence: d_k / 2)."""
CHECK = "scale_scores"
MISTAKE = 'observed_constant_factor'
MARKS = "0/11"

import numpy as np
def scale_scores(scores, d_k):
    return scores / d_k ** 1/2
