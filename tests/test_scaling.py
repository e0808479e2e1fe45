"""Tests for attention_course.chapters.scaling: spread of q.k, softmax Jacobian, peakedness."""

import math

import numpy as np
import pytest

from attention_course.chapters.scaling import (
    DISTRIBUTIONS,
    jacobian_norm,
    max_weight,
    peakedness,
    projected_score_std,
    random_scores,
    score_std,
    softmax_entropy,
    softmax_jacobian,
)
from reference import softmax_row


def numeric_jacobian(s, eps=1e-6):
    """Central differences of the reference softmax, column by column."""
    s = np.asarray(s, dtype=np.float64)
    n = s.size
    jac = np.zeros((n, n))
    for j in range(n):
        up, down = s.copy(), s.copy()
        up[j] += eps
        down[j] -= eps
        jac[:, j] = (np.array(softmax_row(up)) - np.array(softmax_row(down))) / (2 * eps)
    return jac


# --- random scores and their spread ------------------------------------------------


def test_random_scores_shape_and_determinism():
    a = random_scores(16, 5, 7, np.random.default_rng(3))
    b = random_scores(16, 5, 7, np.random.default_rng(3))
    assert a.shape == (7, 5)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, random_scores(16, 5, 7, np.random.default_rng(4)))


def test_scaled_scores_are_unscaled_divided_by_sqrt_dk():
    raw = random_scores(64, 3, 10, np.random.default_rng(0))
    scaled = random_scores(64, 3, 10, np.random.default_rng(0), scaled=True)
    np.testing.assert_allclose(scaled, raw / 8.0, rtol=1e-15)


def test_random_scores_are_dot_products_of_unit_variance_draws():
    # The same draws as random_scores makes, dotted by hand.
    rng = np.random.default_rng(5)
    q = rng.standard_normal((4, 6))
    k = rng.standard_normal((4, 3, 6))
    expected = np.array([[sum(q[s, i] * k[s, j, i] for i in range(6)) for j in range(3)] for s in range(4)])
    np.testing.assert_allclose(random_scores(6, 3, 4, np.random.default_rng(5)), expected, rtol=1e-12)


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_score_std_grows_like_sqrt_dk(distribution):
    d_ks = [4, 16, 64, 256]
    std = score_std(d_ks, 20_000, np.random.default_rng(1), distribution=distribution)
    # The estimate's relative error is about 1/sqrt(2 * 20000) = 0.5%; allow 5%.
    np.testing.assert_allclose(std, np.sqrt(d_ks), rtol=0.05)


def test_scaled_score_std_is_about_one_for_every_dk():
    std = score_std([4, 32, 512], 20_000, np.random.default_rng(2), scaled=True)
    np.testing.assert_allclose(std, 1.0, rtol=0.05)


def test_sign_entries_have_exactly_unit_variance_terms():
    # With +-1 entries every product q_i k_i is +-1, so q.k has the parity of d_k.
    s = random_scores(5, 4, 100, np.random.default_rng(0), distribution="sign")
    assert np.all(np.abs(s) <= 5)
    assert np.all(s % 2 == 1)


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"d_k": 0}, ValueError, "d_k"),
        ({"n_k": 2.5}, TypeError, "n_k"),
        ({"n_samples": -1}, ValueError, "n_samples"),
        ({"distribution": "cauchy"}, ValueError, "distribution"),
        ({"rng": 0}, TypeError, "rng"),
    ],
)
def test_random_scores_rejects_bad_arguments(kwargs, error, words):
    args = {"d_k": 4, "n_k": 2, "n_samples": 3, "rng": np.random.default_rng(0), **kwargs}
    with pytest.raises(error, match=words):
        random_scores(args.pop("d_k"), args.pop("n_k"), args.pop("n_samples"), args.pop("rng"), **args)


def test_score_std_rejects_bad_sizes():
    with pytest.raises(ValueError, match="d_ks"):
        score_std([], 10, np.random.default_rng(0))
    with pytest.raises(ValueError, match="d_k"):
        score_std([4, 0], 10, np.random.default_rng(0))


# --- the softmax Jacobian -------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_jacobian_matches_finite_differences(seed):
    s = np.random.default_rng(seed).normal(0, 2, size=6)
    np.testing.assert_allclose(softmax_jacobian(s), numeric_jacobian(s), atol=1e-9)


def test_jacobian_is_symmetric_and_rows_sum_to_zero():
    s = np.random.default_rng(0).normal(size=(3, 5))
    jac = softmax_jacobian(s)
    assert jac.shape == (3, 5, 5)
    np.testing.assert_allclose(jac, np.swapaxes(jac, -1, -2), atol=1e-15)
    np.testing.assert_allclose(jac.sum(axis=-1), 0.0, atol=1e-15)


def test_jacobian_of_uniform_weights_and_its_norm():
    n = 4
    jac = softmax_jacobian(np.zeros(n))
    np.testing.assert_allclose(jac, (np.eye(n) - 1.0 / n) / n, atol=1e-15)
    assert jacobian_norm(np.zeros(n)) == pytest.approx(math.sqrt(n - 1) / n, rel=1e-12)


def test_jacobian_norm_is_largest_for_two_keys_sharing_equally():
    assert jacobian_norm([0.0, 0.0]) == pytest.approx(0.5)
    assert jacobian_norm([0.0, 0.0, -np.inf, -np.inf]) == pytest.approx(0.5)
    rows = np.random.default_rng(0).normal(0, 3, size=(2000, 6))
    assert jacobian_norm(rows).max() <= 0.5


def test_jacobian_vanishes_as_the_scores_spread():
    # The scaling chapter's scores 30 and 5: weight 1 - e^-25 on the first, a Jacobian of about e^-25.
    tiny = jacobian_norm([30.0, 5.0])
    assert tiny == pytest.approx(2 * math.exp(-25), rel=1e-6)
    spread = [jacobian_norm([c * 3.0, 0.0, -c]) for c in (0.5, 1, 2, 4, 8)]
    assert all(a > b for a, b in zip(spread, spread[1:]))


def test_jacobian_handles_masked_keys():
    jac = softmax_jacobian([1.0, -np.inf, 0.5])
    np.testing.assert_array_equal(jac[1], 0.0)
    np.testing.assert_array_equal(jac[:, 1], 0.0)
    np.testing.assert_allclose(jac[[0, 2]][:, [0, 2]], softmax_jacobian([1.0, 0.5]), atol=1e-15)


def test_jacobian_does_not_modify_its_input():
    s = np.array([1.0, 2.0, 3.0])
    softmax_jacobian(s)
    np.testing.assert_array_equal(s, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("bad, error", [(3.0, ValueError), (["a", "b"], TypeError)])
def test_jacobian_rejects_bad_scores(bad, error):
    with pytest.raises(error, match="scores"):
        softmax_jacobian(bad)


# --- largest weight and entropy -------------------------------------------------------


def test_max_weight_and_entropy_of_uniform_and_peaked_rows():
    assert max_weight(np.zeros(8)) == pytest.approx(1 / 8)
    assert softmax_entropy(np.zeros(8)) == pytest.approx(math.log(8))
    assert max_weight([1000.0, 0.0]) == 1.0
    assert softmax_entropy([1000.0, 0.0]) == 0.0  # no NaN from 0 * log 0


def test_entropy_matches_a_loop():
    s = np.random.default_rng(7).normal(size=(4, 5))
    expected = [-sum(p * math.log(p) for p in softmax_row(row)) for row in s]
    np.testing.assert_allclose(softmax_entropy(s), expected, rtol=1e-12)
    np.testing.assert_allclose(max_weight(s), [max(softmax_row(row)) for row in s], rtol=1e-12)


def test_entropy_ignores_masked_keys():
    assert softmax_entropy([0.0, 0.0, -np.inf]) == pytest.approx(math.log(2))


# --- peakedness over d_k --------------------------------------------------------------


@pytest.fixture(scope="module")
def sweeps():
    d_ks = [4, 32, 512]
    return {
        scaled: peakedness(d_ks, 16, 400, np.random.default_rng(0), scaled=scaled) for scaled in (False, True)
    }


def test_unscaled_softmax_gets_peaked_and_saturates(sweeps):
    raw = sweeps[False]
    assert list(raw["d_k"]) == [4, 32, 512]
    assert np.all(np.diff(raw["max_weight"]) > 0)
    assert np.all(np.diff(raw["entropy"]) < 0)
    assert np.all(np.diff(raw["jacobian_median"]) < 0)
    assert raw["max_weight"][-1] > 0.9
    assert raw["saturated"][-1] > 0.3  # a large share of rows pass almost no gradient
    assert raw["jacobian_median"][-1] < raw["jacobian_median"][0] / 100


def test_scaled_softmax_stays_the_same_for_every_dk(sweeps):
    scaled = sweeps[True]
    for name in ("max_weight", "entropy", "jacobian_median", "jacobian_mean"):
        values = scaled[name]
        assert values.max() / values.min() < 1.15, name
    np.testing.assert_array_equal(scaled["saturated"], 0.0)


def test_peakedness_rejects_bad_saturation():
    with pytest.raises(ValueError, match="saturation"):
        peakedness([4], 4, 4, np.random.default_rng(0), scaled=True, saturation=0)


def test_projected_score_std_follows_the_init_variance():
    """q = x W_q: Var(q_i) = d_model Var(w), so Var(q . k) = d_k (d_model Var(w))^2."""
    from attention_course.chapters import PROJECTION_INITS

    d_model, d_k = 768, 64
    var_w = {"unit": 1 / d_model, "torch_linear": 1 / (3 * d_model), "gpt2": 0.02**2}
    assert set(var_w) == set(PROJECTION_INITS)
    for init, v in var_w.items():
        expected = np.sqrt(d_k) * d_model * v
        got = projected_score_std(d_model, d_k, 5_000, np.random.default_rng(0), init=init)
        np.testing.assert_allclose(got, expected, rtol=0.08, err_msg=init)
        scaled = projected_score_std(d_model, d_k, 5_000, np.random.default_rng(0), init=init, scaled=True)
        np.testing.assert_allclose(scaled, got / np.sqrt(d_k), rtol=1e-12)
    with pytest.raises(ValueError, match="init"):
        projected_score_std(8, 4, 10, np.random.default_rng(0), init="xavier")
    with pytest.raises(ValueError, match="d_model"):
        projected_score_std(0, 4, 10, np.random.default_rng(0), init="unit")
