"""RMSNorm: the normalisation of today's decoders, and of their queries and keys (QK-norm) (book/decoding.ipynb).

    RMSNorm(x) = x / sqrt(mean(x^2) + eps) * weight

Llama, Mistral, Qwen, Gemma, gpt-oss and DeepSeek normalise the residual
stream with it before attention and before the feed-forward layer. Qwen3 and
Gemma 3 also apply it to each head's query and key vectors before RoPE
(QK-norm): every query and key then has a root mean square of about 1 times
its learned gain, so a score cannot grow just because the projections' weights
do.
"""

from __future__ import annotations

import numpy as np


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """(..., d) -> (..., d): divide each vector by its root mean square, then scale by `weight`.

    No mean is subtracted and there is no bias (unlike LayerNorm). Computed in
    float32 at least, as transformers does, then cast back to x's dtype.

    Args:
        x: (..., d) vectors: a residual stream (n, d_model), or queries or
            keys (h, n, d) for QK-norm.
        weight: (d,) the learned gain, one per coordinate.
        eps: added to the mean square, so that a zero vector stays zero.

    Returns:
        (..., d), x's dtype.
    """
    work = x.astype(np.result_type(x.dtype, np.float32), copy=False)
    ms = np.mean(work * work, axis=-1, keepdims=True)  # (..., 1) mean of squares
    return weight * (work / np.sqrt(ms + eps)).astype(x.dtype, copy=False)
