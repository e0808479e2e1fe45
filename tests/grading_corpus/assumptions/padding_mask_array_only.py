"""padding_mask that indexes lengths[:, None]: it assumes lengths is a NumPy array."""
CHECK = "padding_mask"
MESSAGE = 'lengths given as a list [1, 3], padded to 3'
MARKS = "5/6"

import numpy as np


def padding_mask(lengths, n):
    return (np.arange(n)[None, :] < lengths[:, None])[:, None, :]
