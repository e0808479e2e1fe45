"""The feed-forward half of a decoder layer: a gated MLP, or a mixture of experts (book/decoding.ipynb).

    gated MLP         down(act(gate(x)) * up(x))          act = SiLU (SwiGLU) or GELU-tanh (Gemma)
    gpt-oss experts   router logits -> top k -> softmax over those k; each expert a clamped SwiGLU:
                      (clip(up, -l, l) + 1) * g * sigmoid(alpha g),  g = min(gate, l)
    DeepSeek-V3       sigmoid scores; + a correction bias to choose (never to weigh); the best topk_group of
                      n_group groups (by their two best scores), top k within them; weights normalised and
                      scaled by routed_scaling_factor; plus shared experts every token goes through
    MiniMax-M2        DeepSeek-V3's router with one group and no scaling factor
    Llama 4           top k router logits; sigmoid(logit) scales the token *before* its expert (not the output);
                      plus a shared expert
    Qwen3-Next        softmax over every expert's logit, the top k (renormalised, with norm_topk_prob); plus a
                      shared expert whose output is scaled by sigmoid(x w_shared_gate)
"""

from __future__ import annotations

import math

import numpy as np

from ..core.softmax import softmax
from .attention import project
from .config import DecoderConfig, MoEConfig
from .weights import DecoderLayer, Experts


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-x), elementwise, without overflow for large |x|."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # sigmoid(x) = (1 + tanh(x/2)) / 2, finite everywhere


def silu(x: np.ndarray) -> np.ndarray:
    """x * sigmoid(x), elementwise, without overflow for large |x|."""
    return x * sigmoid(x)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
"""A Python float: a NumPy float64 scalar would turn float32 activations into float64."""


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GELU, tanh approximation (torch's approximate="tanh", Gemma's gelu_pytorch_tanh): elementwise."""
    return 0.5 * x * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))


ACTIVATIONS = {"silu": silu, "gelu_tanh": gelu_tanh}
"""The gate activations, by `DecoderConfig.activation`."""


def gated_mlp(x: np.ndarray, w_gate, w_up, w_down, b_gate=None, b_up=None, b_down=None, activation: str = "silu"):
    """(n, d_model) -> (n, d_model): down(act(gate(x)) * up(x))."""
    hidden = ACTIVATIONS[activation](project(x, w_gate, b_gate)) * project(x, w_up, b_up)  # (n, d_ff)
    return project(hidden, w_down, b_down)  # (n, d_ff) x (d_ff, d_model) -> (n, d_model)


def swiglu(layer: DecoderLayer, x: np.ndarray) -> np.ndarray:
    """(n, d_model) -> (n, d_model): a layer's dense MLP with SiLU, down(silu(gate(x)) * up(x))."""
    return gated_mlp(x, layer.w_gate, layer.w_up, layer.w_down, layer.b_gate, layer.b_up, layer.b_down)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """(n, E) -> (n, k) indices of each row's k largest scores, largest first (ties: the lower index first)."""
    return np.argsort(-scores, axis=-1, kind="stable")[:, :k]


def route_softmax_top_k(logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """gpt-oss's router: (experts (n, k), weights (n, k)), the weights a softmax over the k best logits."""
    chosen = top_k(logits, k)  # (n, k)
    return chosen, softmax(np.take_along_axis(logits, chosen, axis=-1))  # (n, k), each row sums to 1


def route_softmax(logits: np.ndarray, k: int, renormalise: bool) -> tuple[np.ndarray, np.ndarray]:
    """Qwen3-Next's router: (experts (n, k), weights (n, k)), the top k of a softmax over every expert."""
    probs = softmax(logits)  # (n, E)
    chosen = top_k(probs, k)  # (n, k)
    weights = np.take_along_axis(probs, chosen, axis=-1)  # (n, k)
    return chosen, weights / weights.sum(axis=-1, keepdims=True) if renormalise else weights


def route_sigmoid_grouped(logits: np.ndarray, correction_bias: np.ndarray, moe: MoEConfig) -> tuple[np.ndarray, np.ndarray]:
    """DeepSeek-V3's router: (experts (n, k), weights (n, k)) from sigmoid scores and group-limited top-k."""
    scores = sigmoid(logits)  # (n, E)
    choice = scores + correction_bias  # (n, E): the bias steers the choice, never the weights
    n, e = choice.shape
    grouped = choice.reshape(n, moe.n_group, e // moe.n_group)  # (n, E) -> (n, G, E/G)
    group_scores = np.sort(grouped, axis=-1)[..., -2:].sum(axis=-1)  # (n, G): each group's two best
    kept_groups = top_k(group_scores, moe.topk_group)  # (n, topk_group)
    allowed = np.zeros((n, moe.n_group), dtype=bool)
    np.put_along_axis(allowed, kept_groups, True, axis=-1)
    allowed = np.repeat(allowed, e // moe.n_group, axis=-1)  # (n, G) -> (n, E)
    chosen = top_k(np.where(allowed, choice, -np.inf), moe.top_k)  # (n, k)
    weights = np.take_along_axis(scores, chosen, axis=-1)  # (n, k)
    if moe.norm_topk_prob:
        weights = weights / (weights.sum(axis=-1, keepdims=True) + 1e-20)
    return chosen, weights * moe.routed_scaling_factor


def route_sigmoid_top_k(logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Llama 4's router: (experts (n, k), weights (n, k)), the k best logits and their sigmoids."""
    chosen = top_k(logits, k)  # (n, k)
    return chosen, sigmoid(np.take_along_axis(logits, chosen, axis=-1))  # (n, k), each in (0, 1)


def _clamped_swiglu(gate: np.ndarray, up: np.ndarray, moe: MoEConfig) -> np.ndarray:
    """gpt-oss's expert activation: (clip(up, -l, l) + 1) * g * sigmoid(alpha g), g = min(gate, l)."""
    gate = np.minimum(gate, moe.swiglu_limit)
    up = np.clip(up, -moe.swiglu_limit, moe.swiglu_limit)
    return (up + 1) * (gate * sigmoid(gate * moe.swiglu_alpha))


def mixture_of_experts(config: DecoderConfig, e: Experts, x: np.ndarray) -> np.ndarray:
    """(n, d_model) -> (n, d_model): each token through its top-k experts, weighted by the router (and shared experts)."""
    moe = config.moe
    logits = project(x, e.router, e.router_bias)  # (n, d_model) x (d_model, E) -> (n, E)
    if moe.router == "softmax_top_k":
        chosen, weights = route_softmax_top_k(logits, moe.top_k)  # (n, k), (n, k)
    elif moe.router == "sigmoid_scaled_input":
        chosen, weights = route_sigmoid_top_k(logits, moe.top_k)  # (n, k), (n, k)
    elif moe.router == "softmax":
        chosen, weights = route_softmax(logits, moe.top_k, moe.norm_topk_prob)  # (n, k), (n, k)
    else:
        chosen, weights = route_sigmoid_grouped(logits, e.correction_bias, moe)
    out = np.zeros_like(x)  # (n, d_model)
    for expert in np.unique(chosen):  # in expert order, as transformers adds them up
        rows, slot = np.nonzero(chosen == expert)  # the tokens sent to this expert, and where in their top k
        xs = x[rows]  # (m, d_model)
        scale_input = moe.router == "sigmoid_scaled_input"  # Llama 4 weighs the expert's input, not its output
        if scale_input:
            xs = xs * weights[rows, slot][:, None]  # (m, d_model) x (m, 1)
        gate = project(xs, e.w_gate[expert], None if e.b_gate is None else e.b_gate[expert])  # (m, d_expert)
        up = project(xs, e.w_up[expert], None if e.b_up is None else e.b_up[expert])  # (m, d_expert)
        hidden = _clamped_swiglu(gate, up, moe) if moe.router == "softmax_top_k" else \
            ACTIVATIONS[config.activation](gate) * up
        y = project(hidden, e.w_down[expert], None if e.b_down is None else e.b_down[expert])  # (m, d_model)
        np.add.at(out, rows, y if scale_input else y * weights[rows, slot][:, None])  # (m, d_model) into their rows
    if e.shared is not None:
        shared = gated_mlp(x, *e.shared, activation=config.activation)  # (n, d_model)
        if e.shared_gate is not None:  # Qwen3-Next: a learned sigmoid gate per token on the shared expert
            shared = sigmoid(x @ e.shared_gate) * shared  # (n, d_model) x (d_model, 1) -> (n, 1), times (n, d_model)
        out = out + shared
    return out


def feed_forward(config: DecoderConfig, p: DecoderLayer, x: np.ndarray) -> np.ndarray:
    """(n, d_model) -> (n, d_model): the layer's mixture of experts, or its dense gated MLP."""
    if p.experts is not None:
        return mixture_of_experts(config, p.experts, x)
    return gated_mlp(x, p.w_gate, p.w_up, p.w_down, p.b_gate, p.b_up, p.b_down, config.activation)
