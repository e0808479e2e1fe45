"""softmax computed in float32: it assumes the scores fit in float32."""
CHECK = "softmax"
MESSAGE = 'the first nan or inf where a finite value was expected is at index 0'
MARKS = "13/14"

import numpy as np


def softmax(x, axis=-1):
    x32 = np.asarray(x, dtype=np.float32)
    e = np.exp(x32 - np.max(x32, axis=axis, keepdims=True))
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(np.result_type(x, np.float32))
