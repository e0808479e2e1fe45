"""The gated delta rule (core/delta_rule.py), the short convolution and the gates: token by token against chunk
by chunk, against transformers' torch fallbacks (Qwen3-Next's Gated DeltaNet, Kimi Delta Attention), and the
properties the rule is built on."""

import numpy as np
import pytest

from attention_course.core.delta_rule import (
    chunked_gated_delta_rule, delta_rule_step, gated_delta_rule, l2_normalize,
)
from attention_course.core.gates import gated_rms_norm, output_gate
from attention_course.core.short_conv import causal_conv1d


def _inputs(rng, lead, n, d_k, d_v, per_channel=False, beta_max=1.0, state=True):
    q = l2_normalize(rng.standard_normal(lead + (n, d_k)))
    k = l2_normalize(rng.standard_normal(lead + (n, d_k)))
    v = rng.standard_normal(lead + (n, d_v))
    g = -rng.uniform(0.0, 0.7, lead + ((n, d_k) if per_channel else (n,)))
    beta = rng.uniform(0.0, beta_max, lead + (n,))
    s0 = rng.standard_normal(lead + (d_k, d_v)) if state else None
    return q, k, v, g, beta, s0


SHAPES = [((1,), 1, 4, 3, 1), ((3,), 17, 8, 5, 4), ((2, 2), 37, 6, 6, 16), ((2,), 64, 16, 8, 64), ((1,), 9, 4, 2, 32)]


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("lead, n, d_k, d_v, chunk", SHAPES)
def test_chunked_equals_token_by_token(lead, n, d_k, d_v, chunk, per_channel):
    rng = np.random.default_rng(n * 7 + d_k)
    q, k, v, g, beta, s0 = _inputs(rng, lead, n, d_k, d_v, per_channel, beta_max=2.0)
    for init in (None, s0):
        o1, s1 = gated_delta_rule(q, k, v, g, beta, initial_state=init)
        o2, s2 = chunked_gated_delta_rule(q, k, v, g, beta, chunk_size=chunk, initial_state=init)
        np.testing.assert_allclose(o2, o1, atol=1e-10, rtol=1e-10)
        np.testing.assert_allclose(s2, s1, atol=1e-10, rtol=1e-10)


def test_splitting_the_sequence_carries_the_state():
    rng = np.random.default_rng(1)
    q, k, v, g, beta, s0 = _inputs(rng, (2,), 20, 5, 3)
    whole, final = chunked_gated_delta_rule(q, k, v, g, beta, chunk_size=6, initial_state=s0)
    first, mid = chunked_gated_delta_rule(q[:, :11], k[:, :11], v[:, :11], g[:, :11], beta[:, :11], 4, s0)
    second, end = gated_delta_rule(q[:, 11:], k[:, 11:], v[:, 11:], g[:, 11:], beta[:, 11:], initial_state=mid)
    np.testing.assert_allclose(np.concatenate([first, second], axis=1), whole, atol=1e-12)
    np.testing.assert_allclose(end, final, atol=1e-12)


def test_no_decay_and_no_write_leave_the_state_unchanged():
    rng = np.random.default_rng(2)
    q, k, v, g, beta, s0 = _inputs(rng, (3,), 12, 4, 5)
    for per_channel_zero in (np.zeros((3, 12)), np.zeros((3, 12, 4))):
        out, state = chunked_gated_delta_rule(q, k, v, per_channel_zero, np.zeros((3, 12)), 5, s0, scale=1.0)
        np.testing.assert_allclose(state, s0, atol=1e-13)
        np.testing.assert_allclose(out, np.einsum("hkv,hnk->hnv", s0, q), atol=1e-13)  # every read is S_0^T q


def test_a_write_with_beta_one_then_a_read_with_the_same_unit_key_returns_the_value():
    rng = np.random.default_rng(3)
    d_k, d_v = 6, 4
    state = rng.standard_normal((2, d_k, d_v))  # whatever the memory held for k is overwritten
    k = rng.standard_normal((2, d_k))
    k = k / np.linalg.norm(k, axis=-1, keepdims=True)  # exactly unit (l2_normalize's eps leaves it a hair short)
    v = rng.standard_normal((2, d_v))
    out, _ = delta_rule_step(state, k, k, v, np.log(np.full(2, 0.5)), np.ones(2))
    np.testing.assert_allclose(out, v, atol=1e-12)


@pytest.mark.parametrize("beta", [0.3, 1.0, 1.7, 2.0])
def test_the_erase_never_grows_the_state_for_beta_up_to_two(beta):
    # With v = 0 and no decay, S <- (I - b k k^T) S: eigenvalues 1 and 1 - b, in [-1, 1] for b in [0, 2].
    rng = np.random.default_rng(4)
    q, k, v, g, _, s0 = _inputs(rng, (2,), 15, 5, 3)
    k = k / np.linalg.norm(k, axis=-1, keepdims=True)  # exactly unit
    _, state = gated_delta_rule(q, k, np.zeros_like(v), np.zeros_like(g), np.full((2, 15), beta), s0)
    norms = np.linalg.norm(state, axis=(-2, -1))
    assert np.all(norms <= np.linalg.norm(s0, axis=(-2, -1)) + 1e-12)
    if beta == 2.0:  # a Householder reflection keeps the norm
        np.testing.assert_allclose(norms, np.linalg.norm(s0, axis=(-2, -1)), rtol=1e-12)


def test_float32_in_float32_out():
    rng = np.random.default_rng(5)
    args = [a.astype(np.float32) for a in _inputs(rng, (2,), 10, 4, 3)]
    o, s = chunked_gated_delta_rule(*args[:5], chunk_size=4, initial_state=args[5])
    assert o.dtype == np.float32 and s.dtype == np.float32


@pytest.mark.parametrize("bad, match", [
    ({"beta": np.full((2, 10), 2.5)}, "beta must lie in"),
    ({"g": np.full((2, 10), 0.1)}, "g is the log of the decay"),
    ({"g": np.zeros((2, 10, 3))}, "g must have shape"),
    ({"value": np.zeros((2, 9, 3))}, "value must have shape"),
    ({"initial_state": np.zeros((2, 3, 4))}, "initial_state must have shape"),
])
def test_bad_input_names_the_argument(bad, match):
    rng = np.random.default_rng(6)
    q, k, v, g, beta, s0 = _inputs(rng, (2,), 10, 4, 3)
    args = {"query": q, "key": k, "value": v, "g": g, "beta": beta, "initial_state": s0} | bad
    with pytest.raises(ValueError, match=match):
        chunked_gated_delta_rule(**args)


def test_causal_conv1d_streams_equal_the_whole():
    rng = np.random.default_rng(7)
    x, w, b = rng.standard_normal((11, 5)), rng.standard_normal((5, 4)), rng.standard_normal(5)
    whole, last = causal_conv1d(x, w, b)
    y1, s = causal_conv1d(x[:6], w, b)
    parts = [y1]
    for t in range(6, 11):
        y, s = causal_conv1d(x[t:t + 1], w, b, state=s)
        parts.append(y)
    np.testing.assert_allclose(np.concatenate(parts), whole, atol=1e-13)
    np.testing.assert_array_equal(s, last)
    np.testing.assert_array_equal(last, x[-3:])
    np.testing.assert_allclose(whole[0], w[:, -1] * x[0] + b, atol=1e-14)  # the first token sees itself alone


def test_gates():
    rng = np.random.default_rng(8)
    o, z = rng.standard_normal((3, 4)), np.array([[-800.0, 0.0, 800.0, 1.0]] * 3)
    gated = output_gate(o, z)
    np.testing.assert_allclose(gated[:, :3], o[:, :3] * [0.0, 0.5, 1.0], atol=1e-300)
    with pytest.raises(ValueError, match="gate must have"):
        output_gate(o, z[:, :2])


# --- against transformers' torch fallbacks ----------------------------------------------------------------------

def _torch_fns():
    pytest.importorskip("torch", reason="torch is not installed: pip install -e '.[torch]' to cross-check against it")
    pytest.importorskip("transformers", reason="transformers is not installed: pip install -e '.[torch]'")
    from transformers.models.kimi_linear import modeling_kimi_linear as kimi
    from transformers.models.qwen3_next import modeling_qwen3_next as qwen
    return qwen, kimi


def _t(x):
    import torch
    return torch.tensor(np.asarray(x, np.float32)).transpose(1, 2)  # (B, h, n, ...) -> (B, n, h, ...)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("n, d_k, d_v, chunk", [(1, 4, 4, 64), (23, 8, 5, 8), (50, 16, 8, 16), (70, 8, 16, 64)])
def test_against_transformers(n, d_k, d_v, chunk, per_channel):
    qwen, kimi = _torch_fns()
    import torch
    rng = np.random.default_rng(n + d_k)
    q, k, v, g, beta, s0 = _inputs(rng, (2, 3), n, d_k, d_v, per_channel, beta_max=2.0)
    # transformers normalises q and k inside the kernel: give it the raw vectors
    raw_q, raw_k = 3 * rng.standard_normal(q.shape), 0.5 * rng.standard_normal(k.shape)
    q, k = l2_normalize(raw_q), l2_normalize(raw_k)
    ours = chunked_gated_delta_rule(q, k, v, g, beta, chunk_size=chunk, initial_state=s0)
    ours_rec = gated_delta_rule(q, k, v, g, beta, initial_state=s0)
    chunk_fn = kimi.chunk_kimi_delta_attention if per_channel else qwen.torch_chunk_gated_delta_rule
    rec_fn = kimi.recurrent_kimi_delta_attention if per_channel else qwen.torch_recurrent_gated_delta_rule
    args = (_t(raw_q), _t(raw_k), _t(v), _t(g), _t(beta))
    init = torch.tensor(s0, dtype=torch.float32)
    theirs = chunk_fn(*args, chunk_size=chunk, initial_state=init, output_final_state=True,
                      use_qk_l2norm_in_kernel=True)
    theirs_rec = rec_fn(*args, initial_state=init, output_final_state=True, use_qk_l2norm_in_kernel=True)
    for (o, s), (to, ts) in ((ours, theirs), (ours_rec, theirs_rec), (ours, theirs_rec)):
        np.testing.assert_allclose(o, to.transpose(1, 2).double().numpy(), atol=2e-5)
        np.testing.assert_allclose(s, ts.double().numpy(), atol=2e-5)


def test_short_conv_and_gated_norm_against_transformers():
    qwen, _ = _torch_fns()
    import torch
    rng = np.random.default_rng(9)
    x, w = rng.standard_normal((13, 6)).astype(np.float32), rng.standard_normal((6, 4)).astype(np.float32)
    ours, last = causal_conv1d(x, w)
    theirs = qwen.causal_conv1d_fn(torch.tensor(x.T[None]), torch.tensor(w))[0].numpy().T
    np.testing.assert_allclose(ours, theirs, atol=1e-5)
    norm = qwen.Qwen3NextRMSNormGated(6, eps=1e-6)
    with torch.no_grad():
        norm.weight.copy_(torch.tensor(rng.standard_normal(6)))
        z = rng.standard_normal((13, 6)).astype(np.float32)
        theirs = norm(torch.tensor(x), torch.tensor(z)).numpy()
    np.testing.assert_allclose(gated_rms_norm(x, z, norm.weight.detach().numpy(), 1e-6), theirs, atol=1e-5)


def test_kimi_s_sigmoid_gated_norm_against_transformers():
    _torch_fns()
    import torch
    from transformers.models.kimi_linear.modeling_kimi_linear import KimiLinearRMSNormGated

    rng = np.random.default_rng(10)
    x, z = (rng.standard_normal((2, 7, 5)).astype(np.float32) for _ in range(2))
    norm = KimiLinearRMSNormGated(5, eps=1e-5)
    with torch.no_grad():
        norm.weight.copy_(torch.tensor(rng.standard_normal(5)))
        theirs = norm(torch.tensor(x), torch.tensor(z)).numpy()
    ours = gated_rms_norm(x, z, norm.weight.detach().numpy(), 1e-5, activation="sigmoid")
    np.testing.assert_allclose(ours, theirs, atol=1e-5)
    with pytest.raises(ValueError, match="activation"):
        gated_rms_norm(x, z, np.ones(5), 1e-5, activation="relu")
