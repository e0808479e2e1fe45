"""The figures the chapters reuse (book/worked_example.ipynb, masks.ipynb, legal_summariser.ipynb).

Each function draws on `ax` when one is given, so that chapters can compose
subplots, or on a new figure otherwise, and returns the Axes (its Figure is
`ax.figure`). Nothing here computes attention: the chapters compute with the
package and pass the arrays in, so a figure shows exactly what the prose
asserts. Inputs are never modified.

Needs matplotlib (the `book` extra); `import attention_course` does not
import this module.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from ..core._checks import as_float_array

#: One colour per token position, shared by every figure so "card" looks the same everywhere.
TOKEN_COLOURS = plt.get_cmap("tab10").colors
#: The widest figure these functions draw on their own, in inches: at 100 dpi, 520 CSS px, which a
#: phone's 360 px column shows at about 70 %, so 8 pt text stays about 8 px tall.
PHONE_WIDTH = 5.2
#: The additive bias of a mask, as the cells of `mask_heatmap` show it.
ALLOWED_TEXT, MASKED_TEXT = "0", "\u2212\u221e"  # "0" and "−∞"


def token_colour(i: int):
    """The colour of the token at position `i`."""
    return TOKEN_COLOURS[i % len(TOKEN_COLOURS)]


def _labels(tokens, n: int, name: str, axis: str) -> list[str]:
    """`tokens` as n strings, or "0", "1", ... when tokens is None."""
    if tokens is None:
        return [str(i) for i in range(n)]
    labels = [str(t) for t in tokens]
    if len(labels) != n:
        raise ValueError(f"{name} must have one label per {axis} ({n}); got {len(labels)}")
    return labels


def _vector(x, name: str, layout: str) -> np.ndarray:
    arr = as_float_array(x, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must have shape {layout}; got shape {arr.shape}")
    return arr


def _matrix(x, name: str, layout: str) -> np.ndarray:
    arr = as_float_array(x, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must have shape {layout}; got shape {arr.shape}")
    return arr


def _new_axes(ax: Axes | None, width: float, height: float) -> Axes:
    if ax is not None:
        return ax
    _, ax = plt.subplots(figsize=(width, height), layout="constrained")
    return ax


def _rotation(labels: list[str]) -> int:
    """Tilt column labels that would overlap: by 45 degrees, or upright (90) when there are many."""
    if max(map(len, labels)) > 8 or sum(map(len, labels)) > 5 * len(labels) + 10:
        return 90 if len(labels) > 12 else 45
    return 0


def _column_labels(ax: Axes, labels: list[str]) -> None:
    """Label the columns; tilted labels end at their tick, so neighbours never overlap."""
    angle = _rotation(labels)
    ax.set_xticks(np.arange(len(labels)), labels, rotation=angle,
                  ha="right" if angle == 45 else "center", rotation_mode="anchor" if angle == 45 else "default")


def _fmt(x: float, decimals: int) -> str:
    if np.isneginf(x):
        return MASKED_TEXT
    return f"{x:.{decimals}f}"


def _fmt_weight(w: float, decimals: int) -> str:
    """A weight: exactly 0 (a masked key) prints as "0", as in the explorers; anything else rounded."""
    return "0" if w == 0 else f"{w:.{decimals}f}"


def token_bars(values, tokens=None, *, ax=None, ylabel="", title=None, mask=None, decimals=3) -> Axes:
    """One bar per token, labelled with its value: scores, scaled scores or weights.

    Args:
        values: (n_k,) one number per key token. -inf (a masked score) is
            drawn as an empty slot labelled "−∞".
        tokens: n_k labels; defaults to "0", "1", ...
        ax: draw here; a new figure if None.
        ylabel, title: axis label and title.
        mask: optional (n_k,) bool, True where the query may attend; masked
            bars are hatched grey and labelled "masked".
        decimals: digits of the value printed above each bar.

    Returns:
        The Axes; bar j (in `ax.patches`) has height values[j].
    """
    v = _vector(values, "values", "(n_k,)")
    labels = _labels(tokens, v.shape[0], "tokens", "value")
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != bool or mask.shape != v.shape:
            raise ValueError(f"mask must be a bool array of shape {v.shape}; got {mask.dtype} {mask.shape}")
    ax = _new_axes(ax, min(PHONE_WIDTH, max(3.0, 0.9 * len(labels) + 1.5)), 2.8)
    x = np.arange(len(labels))
    heights = np.where(np.isfinite(v), v, 0.0)  # -inf has no bar; its label says why
    colours = [token_colour(i) for i in x]
    bars = ax.bar(x, heights, color=colours, edgecolor="black", linewidth=0.6)
    for j, bar in enumerate(bars):
        masked = mask is not None and not mask[j]
        if masked:
            bar.set_facecolor("0.85")
            bar.set_hatch("//")
        text = _fmt(v[j], decimals) + ("\nmasked" if masked else "")
        va = "bottom" if heights[j] >= 0 else "top"
        ax.annotate(text, (bar.get_x() + bar.get_width() / 2, heights[j]), xytext=(0, 3 if va == "bottom" else -3),
                    textcoords="offset points", ha="center", va=va, fontsize=9)
    ax.set_xticks(x, labels)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_ylabel(ylabel)
    top = max(float(heights.max(initial=0.0)), 0.0)
    bottom = min(float(heights.min(initial=0.0)), 0.0)
    span = (top - bottom) or 1.0
    ax.set_ylim(bottom - (0.15 * span if bottom < 0 else 0.0), top + 0.25 * span)
    ax.spines[["top", "right"]].set_visible(False)
    if title:
        ax.set_title(title)
    return ax


def weights_bar(weights, tokens=None, *, ax=None, title=None, mask=None, decimals=3) -> Axes:
    """Bar chart of one query's attention weights, one bar per key token.

    Args:
        weights: (n_k,) weights of one query, as from `trace_attention(...).weights`.
        tokens: n_k labels of the keys.
        ax, title, mask, decimals: as in `token_bars`.

    Returns:
        The Axes, with the y axis from 0 to just above 1 so charts compare.
    """
    ax = token_bars(weights, tokens, ax=ax, ylabel="attention weight", title=title, mask=mask, decimals=decimals)
    ax.set_ylim(0, 1.12)
    return ax


def attention_heatmap(weights, query_tokens=None, key_tokens=None, *, ax=None, title=None, mask=None,
                      annotate=True, decimals=2, cmap="Blues", colorbar=True) -> Axes:
    """Heatmap of attention weights: one row per query, one column per key.

    Args:
        weights: (n_q, n_k) weights, each row summing to 1 (or all zeros).
        query_tokens: n_q row labels; key_tokens: n_k column labels
            (defaults: the query labels when n_q == n_k, else "0", "1", ...).
        ax, title: where to draw and the title.
        mask: optional bool, broadcastable to (n_q, n_k), True where a query
            may attend; masked cells are hatched.
        annotate: print each weight in its cell, rounded to `decimals`; a weight
            of exactly 0 (a masked key) prints as "0", never "0.00".
        cmap, colorbar: colour map (0 to 1) and whether to draw its scale.

    Returns:
        The Axes; its image (`ax.images[0]`) holds the weights.
    """
    w = _matrix(weights, "weights", "(n_q, n_k)")
    n_q, n_k = w.shape
    rows = _labels(query_tokens, n_q, "query_tokens", "row (query)")
    if key_tokens is None and query_tokens is not None and n_q == n_k:
        key_tokens = query_tokens
    cols = _labels(key_tokens, n_k, "key_tokens", "column (key)")
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != bool:
            raise TypeError(f"mask must be boolean (True = may attend); got dtype {mask.dtype}")
        try:
            mask = np.broadcast_to(mask, w.shape)
        except ValueError:
            raise ValueError(f"mask must broadcast to the weights' shape {w.shape}; got shape {mask.shape}") from None
    ax = _new_axes(ax, min(PHONE_WIDTH, max(3.2, 0.75 * n_k + 2.2)), max(2.6, 0.6 * n_q + 1.2))
    image = ax.imshow(w, cmap=cmap, vmin=0.0, vmax=1.0)
    _column_labels(ax, cols)
    ax.set_yticks(np.arange(n_q), rows)
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    if mask is not None:
        for i, j in zip(*np.nonzero(~mask)):
            ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///",
                                       edgecolor="0.6", linewidth=0))
    if annotate:
        for i in range(n_q):
            for j in range(n_k):
                colour = "white" if w[i, j] > 0.55 else "black"
                ax.text(j, i, _fmt_weight(w[i, j], decimals), ha="center", va="center", color=colour, fontsize=9)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, shrink=0.8, label="weight")
    if title:
        ax.set_title(title)
    return ax


def mask_heatmap(mask, query_tokens=None, key_tokens=None, *, ax=None, title=None) -> Axes:
    """A boolean mask drawn as the bias it adds to the scores: 0 or −∞.

    Args:
        mask: (n_q, n_k) bool, True where query i may attend to key j.
        query_tokens, key_tokens, ax, title: as in `attention_heatmap`.

    Returns:
        The Axes; its image holds the mask as 1 (may attend) and 0 (masked),
        and each cell reads "0" or "−∞".
    """
    m = np.asarray(mask)
    if m.dtype != bool:
        raise TypeError(f"mask must be boolean (True = may attend); got dtype {m.dtype}")
    if m.ndim != 2:
        raise ValueError(f"mask must have shape (n_q, n_k); got shape {m.shape}")
    n_q, n_k = m.shape
    rows = _labels(query_tokens, n_q, "query_tokens", "row (query)")
    if key_tokens is None and query_tokens is not None and n_q == n_k:
        key_tokens = query_tokens
    cols = _labels(key_tokens, n_k, "key_tokens", "column (key)")
    ax = _new_axes(ax, min(PHONE_WIDTH, max(3.0, 0.7 * n_k + 1.6)), max(2.6, 0.6 * n_q + 1.2))
    ax.imshow(m.astype(float), cmap="Greens", vmin=-0.3, vmax=1.6)
    for i in range(n_q):
        for j in range(n_k):
            ax.text(j, i, ALLOWED_TEXT if m[i, j] else MASKED_TEXT, ha="center", va="center", fontsize=10,
                    color="black" if m[i, j] else "0.35")
    _column_labels(ax, cols)
    ax.set_yticks(np.arange(n_q), rows)
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    if title:
        ax.set_title(title)
    return ax


def value_mix(weights, values, tokens=None, *, ax=None, title=None) -> Axes:
    """The output drawn as a mix of 2-D value vectors: sum_j weights[j] * values[j].

    Each value vector is a faint arrow from the origin labelled with its
    token; the weighted pieces weights[j] * values[j] are chained tip to tail
    in token order, so the chain ends exactly at the output, which is drawn
    as a bold arrow from the origin.

    Args:
        weights: (n_k,) weights of one query.
        values: (n_k, 2) value vectors (d_v must be 2 to draw them in a plane).
        tokens: n_k labels.
        ax, title: where to draw and the title.

    Returns:
        The Axes. Arrows are annotations with gid "value:<token>",
        "piece:<token>" and "output"; each has `.xy` (head) and `.xyann` (tail).
    """
    w = _vector(weights, "weights", "(n_k,)")
    v = _matrix(values, "values", "(n_k, 2)")
    if v.shape[1] != 2:
        raise ValueError(f"values must have shape (n_k, 2) to be drawn in a plane; got shape {v.shape}")
    if v.shape[0] != w.shape[0]:
        raise ValueError(f"weights and values must have one entry per key: weights {w.shape}, values {v.shape}")
    labels = _labels(tokens, w.shape[0], "tokens", "value")
    pieces = w[:, None] * v  # (n_k, 1) * (n_k, 2) -> (n_k, 2): what each token contributes
    ends = np.cumsum(pieces, axis=0)  # (n_k, 2): the chain's joints; the last is the output
    starts = np.vstack([np.zeros(2), ends[:-1]])  # (n_k, 2)
    output = ends[-1]
    ax = _new_axes(ax, 4.8, 5.0)

    def arrow(head, tail, gid, **style):
        ax.annotate("", xy=tuple(head), xytext=tuple(tail), gid=gid,
                    arrowprops=dict(arrowstyle="-|>", shrinkA=0, shrinkB=0, mutation_scale=12, **style))

    for j, tok in enumerate(labels):
        arrow(v[j], (0, 0), f"value:{tok}", color=token_colour(j), alpha=0.3, linewidth=1.2, linestyle="--")
        ax.annotate(f"value({tok})", v[j], xytext=(4, 4), textcoords="offset points", fontsize=9,
                    color=token_colour(j))
    for j, tok in enumerate(labels):
        arrow(ends[j], starts[j], f"piece:{tok}", color=token_colour(j), linewidth=2.4)
    arrow(output, (0, 0), "output", color="black", linewidth=1.6)
    out_text = ", ".join(f"{x:.2f}" for x in output)
    ax.annotate(f"output [{out_text}]", output, xytext=(6, -12), textcoords="offset points", fontsize=10,
                fontweight="bold")
    ax.plot([], [], color="0.5", linestyle="--", alpha=0.5, label="value vectors")
    for j, tok in enumerate(labels):
        ax.plot([], [], color=token_colour(j), linewidth=2.4, label=f"{w[j]:.3f} · value({tok})")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, fontsize=8, frameon=False)
    everything = np.vstack([v, ends, np.zeros((1, 2))])  # (2 n_k + 1, 2) every point drawn
    low, high = everything.min(axis=0), everything.max(axis=0)
    pad = 0.12 * np.maximum(high - low, 1e-9)
    ax.set_xlim(low[0] - pad[0], high[0] + 3 * pad[0])  # room for the labels at the arrow heads
    ax.set_ylim(low[1] - pad[1], high[1] + pad[1])
    ax.set_aspect("equal")
    ax.axhline(0, color="0.8", linewidth=0.6, zorder=0)
    ax.axvline(0, color="0.8", linewidth=0.6, zorder=0)
    ax.set_xlabel("value dimension 1")
    ax.set_ylabel("value dimension 2")
    if title:
        ax.set_title(title)
    return ax
