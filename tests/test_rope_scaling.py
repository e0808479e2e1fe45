"""Tests for attention_course/core/rope_scaling.py: each rule against an independent, pair-by-pair computation."""

import doctest
import math

import numpy as np
import pytest

from attention_course.core import rope_scaling
from attention_course.core.positions import apply_rope, rope_frequencies
from attention_course.core.rope_scaling import (
    RopeScaling, dynamic_ntk_frequencies, linear_frequencies, llama3_frequencies, yarn_attention_factor,
    yarn_frequencies, yarn_mscale,
)


def plain(d, base):
    return [base ** (-2 * i / d) for i in range(d // 2)]


def llama3_by_pair(d, base, factor, low, high, context):
    """Meta's own reference (llama3 `apply_scaling`): one frequency at a time."""
    out = []
    for freq in plain(d, base):
        wavelength = 2 * math.pi / freq
        if wavelength < context / high:
            out.append(freq)
        elif wavelength > context / low:
            out.append(freq / factor)
        else:
            smooth = (context / wavelength - low) / (high - low)
            out.append((1 - smooth) * freq / factor + smooth * freq)
    return out


def yarn_by_pair(d, base, factor, context, beta_fast, beta_slow, truncate):
    """YaRN's reference code: the correction range in pair indices, a linear ramp between, one pair at a time."""
    def dim(turns):  # the pair index whose wavelength fits `turns` times into the context
        return d * math.log(context / (turns * 2 * math.pi)) / (2 * math.log(base))

    low, high = dim(beta_fast), dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001
    out = []
    for i, freq in enumerate(plain(d, base)):
        ramp = min(max((i - low) / (high - low), 0.0), 1.0)
        out.append(freq / factor * ramp + freq * (1 - ramp))
    return out


@pytest.mark.parametrize("d, base, factor, low, high, context", [
    (128, 500000.0, 8.0, 1.0, 4.0, 8192),  # Llama 3.1
    (64, 500000.0, 32.0, 1.0, 4.0, 8192),  # Llama 3.2
    (8, 10000.0, 8.0, 1.0, 4.0, 64),
    (16, 1000.0, 4.0, 2.0, 8.0, 100),
])
def test_llama3_frequencies_equal_metas_rule_pair_by_pair(d, base, factor, low, high, context):
    got = llama3_frequencies(d, base, factor, low, high, context)
    np.testing.assert_allclose(got, llama3_by_pair(d, base, factor, low, high, context), rtol=1e-14)
    theta = rope_frequencies(d, base)
    wavelength = 2 * np.pi / theta
    assert np.array_equal(got[wavelength < context / high], theta[wavelength < context / high])  # fast pairs kept
    np.testing.assert_allclose(got[wavelength > context / low], theta[wavelength > context / low] / factor, rtol=1e-15)
    assert np.all(np.diff(got) < 0)  # still slower pair by pair


@pytest.mark.parametrize("d, base, factor, context, beta_fast, beta_slow, truncate", [
    (64, 150000.0, 32.0, 4096, 32.0, 1.0, False),  # gpt-oss
    (64, 10000.0, 40.0, 4096, 32.0, 1.0, True),  # DeepSeek-V3's RoPE key
    (128, 1000000.0, 4.0, 32768, 32.0, 1.0, True),  # Qwen3 with YaRN
    (8, 500.0, 8.0, 32, 8.0, 0.5, True),
    (6, 1000.0, 4.0, 16, 32.0, 1.0, True),
])
def test_yarn_frequencies_equal_the_reference_code_pair_by_pair(d, base, factor, context, beta_fast, beta_slow, truncate):
    got = yarn_frequencies(d, base, factor, context, beta_fast, beta_slow, truncate)
    np.testing.assert_allclose(got, yarn_by_pair(d, base, factor, context, beta_fast, beta_slow, truncate), rtol=1e-14)
    theta = rope_frequencies(d, base)
    turns = context * theta / (2 * np.pi)  # turns of each pair over the original context
    kept, slowed = turns > context, turns < 1e-3  # far past beta_fast / far below beta_slow
    assert np.array_equal(got[kept], theta[kept]) and np.allclose(got[slowed], theta[slowed] / factor, rtol=1e-14)
    assert np.all(got <= theta) and np.all(got >= theta / factor * (1 - 1e-15))


def test_yarn_attention_factor_and_mscale():
    assert yarn_mscale(1.0) == 1.0 and yarn_mscale(0.5, 3.0) == 1.0  # no extension, no sharpening
    assert yarn_mscale(32.0) == pytest.approx(0.1 * math.log(32.0) + 1)
    assert yarn_attention_factor(32.0) == yarn_mscale(32.0)  # gpt-oss: from the factor alone
    assert yarn_attention_factor(40.0, mscale=1.0, mscale_all_dim=1.0) == 1.0  # DeepSeek-V3: the two cancel
    assert yarn_attention_factor(40.0, 0.707, 1.0) == pytest.approx(yarn_mscale(40.0, 0.707) / yarn_mscale(40.0, 1.0))
    assert yarn_attention_factor(40.0, attention_factor=0.5) == 0.5  # given: used as it is


def test_linear_and_dynamic_frequencies():
    theta = rope_frequencies(16, 1000.0)
    np.testing.assert_array_equal(linear_frequencies(16, 1000.0, 2.5), theta / 2.5)
    for seq_len in (1, 8, 64):  # no longer than the trained context: the plain frequencies
        np.testing.assert_allclose(dynamic_ntk_frequencies(16, 1000.0, 3.0, seq_len, 64), theta, rtol=1e-15)
    grown = dynamic_ntk_frequencies(16, 1000.0, 3.0, 128, 64)
    base = 1000.0 * (3.0 * 128 / 64 - 2.0) ** (16 / 14)
    np.testing.assert_allclose(grown, plain(16, base), rtol=1e-14)
    assert grown[0] == 1.0 and np.all(grown[1:] < theta[1:])  # a larger base: every pair but the first slower


@pytest.mark.parametrize("rope", [
    RopeScaling("default", 10000.0), RopeScaling("linear", 10000.0, factor=4.0),
    RopeScaling("dynamic", 10000.0, factor=2.0, max_positions=32),
    RopeScaling("llama3", 500000.0, factor=8.0, original_context=8192),
    RopeScaling("yarn", 150000.0, factor=32.0, original_context=4096, truncate=False),
])
def test_rope_scaling_dispatches_to_its_rule(rope):
    theta, factor = rope.frequencies(64, seq_len=100)
    expected = {
        "default": rope_frequencies(64, 10000.0),
        "linear": linear_frequencies(64, 10000.0, 4.0),
        "dynamic": dynamic_ntk_frequencies(64, 10000.0, 2.0, 100, 32),
        "llama3": llama3_frequencies(64, 500000.0, 8.0, 1.0, 4.0, 8192),
        "yarn": yarn_frequencies(64, 150000.0, 32.0, 4096, 32.0, 1.0, False),
    }[rope.rope_type]
    np.testing.assert_array_equal(theta, expected)
    assert factor == (yarn_mscale(32.0) if rope.rope_type == "yarn" else 1.0)


def test_rope_scaling_refuses_what_it_cannot_compute():
    with pytest.raises(ValueError, match="rope_type must be one of"):
        RopeScaling("longrope")
    with pytest.raises(ValueError, match="needs original_context"):
        RopeScaling("llama3", factor=8.0)
    with pytest.raises(ValueError, match="needs max_positions"):
        RopeScaling("dynamic", factor=2.0)


def test_apply_rope_takes_rescaled_frequencies():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 8))
    pos = np.arange(5)
    np.testing.assert_array_equal(apply_rope(x, pos, frequencies=rope_frequencies(8, 500.0)), apply_rope(x, pos, base=500.0))
    slow = linear_frequencies(8, 500.0, 2.0)
    np.testing.assert_allclose(apply_rope(x, 2 * pos, frequencies=slow), apply_rope(x, pos, base=500.0), atol=1e-14)
    with pytest.raises(ValueError, match=r"frequencies must have shape \(d/2,\) = \(4,\)"):
        apply_rope(x, pos, frequencies=np.ones(3))


def test_the_docstring_examples_run():
    result = doctest.testmod(rope_scaling)
    assert result.attempted > 0 and result.failed == 0
