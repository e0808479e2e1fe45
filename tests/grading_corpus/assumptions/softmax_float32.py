"""softmax computed in float32: it assumes the scores fit in float32."""
CHECK = "softmax"
MESSAGE = ('got nan at index 0 where 1 was expected', 'cut down to the smallest input')
MARKS = "13/14"

import numpy as np


def softmax(x, axis=-1):
    x32 = np.asarray(x, dtype=np.float32)
    e = np.exp(x32 - np.max(x32, axis=axis, keepdims=True))
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(np.result_type(x, np.float32))
