"""padding_mask that counts the first padding position as real."""
CHECK = "padding_mask"
MISTAKE = "off_by_one"
MARKS = "1/8"

import numpy as np


def padding_mask(lengths, n):
    return (np.arange(n)[None, :] <= np.asarray(lengths)[:, None])[:, None, :]
