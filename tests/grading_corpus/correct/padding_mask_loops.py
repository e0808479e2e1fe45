"""padding_mask filled sequence by sequence."""
CHECK = "padding_mask"

import math

import numpy as np


def padding_mask(lengths, n):
    out = np.zeros((len(lengths), 1, n), dtype=bool)
    for b, L in enumerate(lengths):
        out[b, 0, :int(L)] = True
    return out
