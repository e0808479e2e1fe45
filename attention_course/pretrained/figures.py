"""Figures for reading a real model's heads (legal-summariser chapter).

`head_view` draws one head as lines from each query token (left) to the keys
(right), the thicker and darker the larger the weight, as the head views of
BertViz do; `head_grid` shows one number per head as a (layers x heads) table.
They only draw what they are given. Needs matplotlib (the `book` extra).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes


def head_view(weights, tokens, *, query=None, ax: Axes | None = None, title: str | None = None,
              colour="tab:blue", min_weight: float = 0.01) -> Axes:
    """Lines from query tokens (left) to key tokens (right), width and opacity ~ weight.

    Args:
        weights: (n, n) one head's weights, rows are queries.
        tokens: n labels, shown on both sides.
        query: a position or list of positions to draw (others are greyed); all rows if None.
        min_weight: lines below this weight are not drawn.

    Returns:
        The Axes; its `lines` are the drawn links, each with its weight as `get_gid()`.
    """
    w = np.asarray(weights, dtype=float)
    n = len(tokens)
    if w.shape != (n, n):
        raise ValueError(f"weights must have shape (n, n) = ({n}, {n}) for {n} tokens; got {w.shape}")
    rows = range(n) if query is None else np.atleast_1d(query).tolist()
    if any(not 0 <= i < n for i in rows):
        raise ValueError(f"query must be positions in 0..{n - 1}; got {query!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(4.2, 0.26 * n + 0.9), layout="constrained")
    y = -np.arange(n)  # token i at height -i: the sentence reads top to bottom
    for side, x, align in (("query", 0.0, "right"), ("key", 1.0, "left")):
        for i, label in enumerate(tokens):
            active = side == "key" or query is None or i in rows
            ax.text(x + (-0.04 if side == "query" else 0.04), y[i], label, ha=align, va="center", fontsize=9,
                    color="black" if active else "0.6", fontweight="bold" if active and query is not None and side == "query" else None)
    for i in rows:
        for j in range(n):
            if w[i, j] >= min_weight:
                ax.plot([0, 1], [y[i], y[j]], color=colour, alpha=float(min(1.0, 0.15 + w[i, j])),
                        linewidth=0.5 + 6 * w[i, j], solid_capstyle="round", gid=f"{w[i, j]:.6f}")
    ax.set_xlim(-0.9, 1.9)
    ax.set_ylim(-n + 0.4, 0.8)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def head_grid(values, *, ax: Axes | None = None, title: str | None = None, decimals: int = 2,
              cmap: str = "Blues", label: str = "weight", heads_as_rows: bool = False) -> Axes:
    """A (L, h) table of one number per head, as a heatmap with the numbers printed.

    `heads_as_rows` draws one row per head and one column per layer instead, a
    narrow figure that stays legible on a phone.

    Returns the Axes; its image (`ax.images[0]`) holds `values` (transposed if `heads_as_rows`).
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 2:
        raise ValueError(f"values must have shape (L, h); got shape {v.shape}")
    grid = v.T if heads_as_rows else v  # (rows, columns) as drawn
    n_rows, n_cols = grid.shape
    if ax is None:
        _, ax = plt.subplots(figsize=(0.55 * n_cols + 1.6, 0.5 * n_rows + 1.0), layout="constrained")
    image = ax.imshow(grid, cmap=cmap, vmin=0.0, vmax=max(1e-9, float(v.max())))
    for r in range(n_rows):
        for c in range(n_cols):
            colour = "white" if grid[r, c] > 0.6 * v.max() else "black"
            ax.text(c, r, f"{grid[r, c]:.{decimals}f}".lstrip("0") or "0", ha="center", va="center", fontsize=8, color=colour)
    ax.set_xticks(range(n_cols))
    ax.set_yticks(range(n_rows))
    ax.set_xlabel("layer" if heads_as_rows else "head")
    ax.set_ylabel("head" if heads_as_rows else "layer")
    ax.figure.colorbar(image, ax=ax, shrink=0.8, label=label)
    if title:
        ax.set_title(title, fontsize=10)
    return ax
