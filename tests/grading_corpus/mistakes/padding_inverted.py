"""padding_mask that is True at the padding."""
CHECK = "padding_mask"
MISTAKE = "mask_inverted"
MARKS = "0/8"

import numpy as np


def padding_mask(lengths, n):
    return (np.arange(n)[None, :] >= np.asarray(lengths)[:, None])[:, None, :]
