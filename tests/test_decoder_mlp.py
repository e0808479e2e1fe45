"""Tests for attention_course/decoder/mlp.py: the routers, the experts' activations, a mixture of experts by hand."""

import math

import numpy as np
import pytest

from attention_course.decoder import random_decoder
from attention_course.decoder.config import MoEConfig
from attention_course.decoder.mlp import (
    gelu_tanh, mixture_of_experts, route_sigmoid_grouped, route_softmax_top_k, sigmoid, silu,
)
from decoder_models import config_json


def test_activations():
    x = np.linspace(-30, 30, 61)
    np.testing.assert_allclose(sigmoid(x), 1 / (1 + np.exp(-x)), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(silu(x), x / (1 + np.exp(-x)), rtol=1e-13, atol=1e-14)
    expected = [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))) for v in x]
    np.testing.assert_allclose(gelu_tanh(x), expected, rtol=1e-13, atol=1e-15)
    assert gelu_tanh(np.ones(2, np.float32)).dtype == np.float32  # no float64 constant sneaks in


def test_the_softmax_router_weighs_the_top_k_logits():
    logits = np.array([[0.1, 2.0, -1.0, 1.5], [3.0, 3.0, 0.0, -2.0]])
    chosen, weights = route_softmax_top_k(logits, 2)
    np.testing.assert_array_equal(chosen, [[1, 3], [0, 1]])  # largest first; a tie: the lower index first
    np.testing.assert_allclose(weights[0], np.exp([2.0, 1.5]) / np.exp([2.0, 1.5]).sum())
    np.testing.assert_allclose(weights.sum(axis=1), 1)


def test_the_grouped_router_picks_within_the_best_groups_and_weighs_without_the_bias():
    moe = MoEConfig("sigmoid_grouped", n_experts=8, top_k=2, d_expert=4, n_group=4, topk_group=2,
                    routed_scaling_factor=2.5, norm_topk_prob=True)
    logits = np.array([[4.0, -4.0, 0.0, 0.1, 3.0, 2.9, -1.0, -2.0]])  # groups (0,1) (2,3) (4,5) (6,7)
    bias = np.zeros(8)
    chosen, weights = route_sigmoid_grouped(logits, bias, moe)
    # groups by their two best scores: (4,5) then (2,3); expert 0, the best alone, is in a weak group
    np.testing.assert_array_equal(chosen[0], [4, 5])
    s = sigmoid(logits[0, [4, 5]])
    np.testing.assert_allclose(weights[0], 2.5 * s / s.sum(), rtol=1e-14)
    bias[0] = 10.0  # the correction bias changes the choice...
    chosen, weights = route_sigmoid_grouped(logits, bias, moe)
    np.testing.assert_array_equal(chosen[0], [0, 4])
    s = sigmoid(logits[0, [0, 4]])  # ...but not the weights: they come from the scores alone
    np.testing.assert_allclose(weights[0], 2.5 * s / s.sum(), rtol=1e-14)
    unnormed = MoEConfig("sigmoid_grouped", 8, 2, 4, n_group=4, topk_group=2, routed_scaling_factor=1.5,
                         norm_topk_prob=False)
    _, raw = route_sigmoid_grouped(logits, np.zeros(8), unnormed)
    np.testing.assert_allclose(raw[0], 1.5 * sigmoid(logits[0, [4, 5]]), rtol=1e-14)


@pytest.mark.parametrize("name", ["gpt-oss-8e", "deepseek-v3-plain-q"])
def test_a_mixture_of_experts_equals_each_token_through_its_experts_one_by_one(name):
    model = random_decoder(np.random.default_rng(3), config=config_json(name))
    c = model.config
    layer = next(i for i in range(c.n_layers) if c.is_moe_layer(i))
    e = model.weights.layers[layer].experts
    x = np.random.default_rng(4).standard_normal((6, c.d_model))
    got = mixture_of_experts(c, e, x)
    for t in range(len(x)):  # one token at a time, the formulas written out
        logits = x[t] @ e.router + (0 if e.router_bias is None else e.router_bias)
        if c.moe.router == "softmax_top_k":
            chosen = np.argsort(-logits, kind="stable")[:c.moe.top_k]
            weights = np.exp(logits[chosen] - logits[chosen].max())
            weights /= weights.sum()
        else:
            chosen, weights = route_sigmoid_grouped(logits[None], e.correction_bias, c.moe)
            chosen, weights = chosen[0], weights[0]
        want = np.zeros(c.d_model)
        for k, expert in enumerate(chosen):
            gate, up = x[t] @ e.w_gate[expert], x[t] @ e.w_up[expert]
            if c.moe.router == "softmax_top_k":
                gate = gate + e.b_gate[expert]
                up = np.clip(up + e.b_up[expert], -c.moe.swiglu_limit, c.moe.swiglu_limit)
                gate = np.minimum(gate, c.moe.swiglu_limit)
                hidden = (up + 1) * gate / (1 + np.exp(-c.moe.swiglu_alpha * gate))
                want += weights[k] * (hidden @ e.w_down[expert] + e.b_down[expert])
            else:
                want += weights[k] * ((silu(gate) * up) @ e.w_down[expert])
        if e.shared is not None:
            gate, up, down = e.shared
            want += (silu(x[t] @ gate) * (x[t] @ up)) @ down
        np.testing.assert_allclose(got[t], want, rtol=1e-12, atol=1e-12)
