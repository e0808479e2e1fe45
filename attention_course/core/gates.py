"""Gates: a sigmoid or SiLU of a learned projection that scales what a layer writes (Qwen3-Next, Qwen3.5, Kimi).

    output_gate(o, z) = o * sigmoid(z)                  each head's output, channel by channel
    gated_rms_norm(o, z) = RMSNorm(o) * weight * silu(z)  a delta-rule layer's output (Kimi: sigmoid(z))

A gate near 0 closes a channel, near 1 lets it through: the layer learns, per
token, how much of its attention output to pass on to the output projection.
Qwen3-Next's softmax layers gate their output with a sigmoid; its delta-rule
layers normalise each head's output and gate it with SiLU.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, in_compute_dtype
from .norms import rms_norm


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)), computed without overflow for large |x|."""
    e = np.exp(-np.abs(x))  # in (0, 1]: never overflows
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def silu(x: np.ndarray) -> np.ndarray:
    """x * sigmoid(x) (the swish)."""
    return x * sigmoid(x)


def output_gate(out, gate) -> np.ndarray:
    """(..., d) -> (..., d): out * sigmoid(gate), element by element.

    Args:
        out: (..., d) attention output, e.g. (n, h * d_v) with the heads side by side.
        gate: (..., d) the gate's logits, out's shape.
    """
    o = as_float_array(out, "out")
    z = as_float_array(gate, "gate")
    if z.shape != o.shape:
        raise ValueError(f"gate must have out's shape {o.shape}; got shape {z.shape}")
    (o, z), out_dtype = in_compute_dtype(o, z)
    return (o * sigmoid(z)).astype(out_dtype, copy=False)


GATE_ACTIVATIONS = {"silu": silu, "sigmoid": sigmoid}
"""What a gated norm applies to its gate: SiLU (Qwen3-Next, OLMo hybrid) or a sigmoid (Kimi Linear)."""


def gated_rms_norm(x, gate, weight, eps: float, activation: str = "silu") -> np.ndarray:
    """(..., d) -> (..., d): RMSNorm(x) * weight * act(gate), the norm in float32 at least (as transformers does).

    Args:
        x: (..., d) e.g. a delta-rule layer's output (h, n, d_v), one head's vector per row.
        gate: (..., d) x's shape. weight: (d,). eps: added to the mean square.
        activation: "silu" or "sigmoid", what the gate goes through.
    """
    if activation not in GATE_ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(GATE_ACTIVATIONS)}; got {activation!r}")
    o = as_float_array(x, "x")
    z = as_float_array(gate, "gate")
    if z.shape != o.shape:
        raise ValueError(f"gate must have x's shape {o.shape}; got shape {z.shape}")
    work = np.result_type(o.dtype, np.float32)
    normed = rms_norm(o, np.asarray(weight), eps)  # (..., d)
    return (normed.astype(work) * GATE_ACTIVATIONS[activation](z.astype(work))).astype(o.dtype, copy=False)
