"""softmax normalised by the sum of every entry: slices do not sum to 1."""
CHECK = "softmax"
MISTAKE = "normalised_over_everything"
MARKS = "11/26"

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)
