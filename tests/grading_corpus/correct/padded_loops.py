"""padded_attention with a loop over the batch, hiding the padding by slicing."""
CHECK = "padded_attention"
import numpy as np
from attention_course import softmax
def padded_attention(Q, K, V, lengths):
    outs, ws = [], []
    for b in range(Q.shape[0]):
        L = int(lengths[b])
        s = Q[b] @ K[b].T / np.sqrt(Q.shape[-1]).astype(Q.dtype)  # the scale in the input's dtype
        s[:, L:] = -np.inf
        w = softmax(s, axis=-1)
        ws.append(w); outs.append(w @ V[b])
    return np.stack(outs), np.stack(ws)
