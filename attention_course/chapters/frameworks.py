"""What PyTorch and transformers do with a row that may attend to nothing (book/stable_softmax.ipynb).

`masked_row_behaviour()` measures it on the installed versions: it needs the
`[torch]` extra (torch and transformers) and returns None without it, so a
chapter can show the measurement where it can be made and say so where not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MaskedRowBehaviour:
    """A fully masked row through torch and transformers, measured."""

    torch_version: str
    """The installed torch, e.g. "2.13.0+cpu"."""
    softmax_row: np.ndarray
    """(4,) `torch.softmax` of a row of four -inf."""
    sdpa_row: np.ndarray
    """(d_v,) `scaled_dot_product_attention`'s output for a query whose boolean mask row is all False."""
    sdpa_rows_finite: bool
    """Whether every other row of that call is finite."""
    nan_rows_layer_1: int
    """Rows of NaN after one attention layer built on `torch.softmax` with -inf (of `n_rows`)."""
    nan_rows_layer_2: int
    """Rows of NaN after a second such layer reads the first one's output."""
    n_rows: int
    """Rows (query positions) of the two-layer example."""
    float16_fill_error: str | None
    """The error of `masked_fill(mask, -1e9)` on a float16 tensor (None if it did not raise)."""
    transformers_version: str | None
    """The installed transformers, or None if it is not installed."""
    fill: dict[str, float] | None
    """dtype name -> the score transformers' eager attention mask puts on a masked key."""
    fill_weights: np.ndarray | None
    """(4,) the softmax of a fully masked row of four, filled that way (float32)."""


def _attention_layer(torch, x, mask, w_q, w_k, w_v):
    """One attention layer as many models write it: -inf where masked, then torch.softmax."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # (n, d) x (d, d) -> (n, d) each
    scores = q @ k.T / q.shape[-1] ** 0.5  # (n, d) x (d, n) -> (n, n)
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v  # (n, n) x (n, d) -> (n, d)


def masked_row_behaviour() -> MaskedRowBehaviour | None:
    """Measure what the installed torch (and transformers) do with a row with nothing to attend to.

    The two-layer example is "<pad> <pad> card blocked" padded on the left
    under a causal mask: rows 0 and 1 (the padding queries) may see no key.
    Returns None if torch is not installed.
    """
    try:
        import torch
    except ImportError:
        return None
    F = torch.nn.functional
    gen = torch.Generator().manual_seed(0)
    n, d = 4, 8
    real = torch.tensor([False, False, True, True])  # (n,): two padding tokens on the left
    mask = torch.tril(torch.ones(n, n, dtype=torch.bool)) & real[None, :]  # (n, n), True = may attend

    softmax_row = torch.softmax(torch.full((4,), float("-inf")), dim=-1)
    q, k, v = (torch.randn(n, d, generator=gen) for _ in range(3))  # (n, d) each
    sdpa = F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=mask[None])[0]  # (n, d)

    x = torch.randn(n, d, generator=gen)  # (n, d): the tokens entering layer 1
    weights = [torch.randn(d, d, generator=gen) / d**0.5 for _ in range(6)]
    layer_1 = _attention_layer(torch, x, mask, *weights[:3])  # (n, d)
    layer_2 = _attention_layer(torch, x + layer_1, mask, *weights[3:])  # (n, d): the residual stream

    try:
        torch.zeros(2, dtype=torch.float16).masked_fill(torch.tensor([True, False]), -1e9)
        float16_fill_error = None
    except RuntimeError as err:
        float16_fill_error = str(err)

    transformers_version = fill = fill_weights = None
    try:
        import transformers
        from transformers.masking_utils import eager_mask
    except ImportError:
        pass
    else:
        transformers_version = transformers.__version__
        fill = {}
        for dtype in (torch.float16, torch.bfloat16, torch.float32):
            m = eager_mask(batch_size=1, q_length=n, kv_length=n, attention_mask=real[None], dtype=dtype)
            fill[str(dtype).removeprefix("torch.")] = float(m.min())  # (1, 1, n, n): 0 or the fill
        m32 = eager_mask(batch_size=1, q_length=n, kv_length=n, attention_mask=real[None], dtype=torch.float32)
        fill_weights = torch.softmax(torch.zeros(n) + m32[0, 0, 0], dim=-1).numpy()  # row 0 sees nothing

    return MaskedRowBehaviour(
        torch_version=torch.__version__,
        softmax_row=softmax_row.numpy(),
        sdpa_row=sdpa[0].numpy(),
        sdpa_rows_finite=bool(torch.isfinite(sdpa[1:]).all()),
        nan_rows_layer_1=int(layer_1.isnan().any(dim=-1).sum()),
        nan_rows_layer_2=int(layer_2.isnan().any(dim=-1).sum()),
        n_rows=n,
        float16_fill_error=float16_fill_error,
        transformers_version=transformers_version,
        fill=fill,
        fill_weights=fill_weights,
    )
