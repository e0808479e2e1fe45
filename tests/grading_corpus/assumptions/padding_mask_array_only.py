"""padding_mask that indexes lengths[:, None]: it assumes lengths is a NumPy array."""
CHECK = "padding_mask"
MESSAGE = 'raised TypeError: tuple indices must be integers or slices, not tuple'
MARKS = "6/8"

import numpy as np


def padding_mask(lengths, n):
    return (np.arange(n)[None, :] < lengths[:, None])[:, None, :]
