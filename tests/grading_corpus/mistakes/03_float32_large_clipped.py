"""softmax that clips float32 scores to [-88, 88] (where float32's exp stops overflowing) instead of shifting by the
max: large scores of one row all become 88, and their weights come out equal. Right on every input whose large float32 scores lie far apart; the input of scores a few
units apart shows it to the student."""
CHECK = "softmax"
MISTAKE = None
MESSAGE = "entries differ"
MARKS = "24/26"
ABSENT = ("overflow", "nan")

import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    if x.dtype == np.float32:
        x = np.clip(x, -88, 88)  # exp(88) still fits in a float32
    top = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(top), top, 0))
    total = e.sum(axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1)
