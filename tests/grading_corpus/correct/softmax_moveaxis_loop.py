"""softmax moving the axis last and looping over slices."""
CHECK = "softmax"

import math

import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    y = np.moveaxis(x, axis, -1)
    out = np.zeros(y.shape, dtype=np.result_type(x, 1.0))
    for idx in np.ndindex(y.shape[:-1]):
        row = y[idx]
        if np.all(row == -np.inf):
            continue
        e = np.exp(row - row.max())
        out[idx] = e / e.sum()
    return np.moveaxis(out, -1, axis)
