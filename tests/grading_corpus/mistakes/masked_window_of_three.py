"""masked attention that also hides every key more than two positions behind its query (a window of three): right
on the first three rows, wrong after. Row 0 of a causal input sees one key (a saturated row, right whatever the
code does) and is never named right; rows 1 and 2 are."""
CHECK = "masked_attention"
MISTAKE = "observed_some_rows_right"
MARKS = "5/18"
ABSENT = ("Row 0 ", "Rows 0 ", "row 0 is right")  # row 0 of a causal mask sees one key: right whatever the code
import numpy as np


def masked_attention(Q, K, V, mask):
    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)
    mask = np.broadcast_to(mask, scores.shape)
    n_q, n_k = scores.shape
    offset = n_k - n_q
    i = np.arange(n_q)[:, None] + offset
    j = np.arange(n_k)[None, :]
    keep = mask & (i - j < 3)
    scores = np.where(keep, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0))
    s = e.sum(axis=-1, keepdims=True)
    w = e / np.where(s > 0, s, 1)
    return w @ V, w
