"""Tests for attention_course.tiled._compiled.exp2: the compiled exponential and the per-tile passes.

The exponential (2**x: the scores arrive in base 2) is checked against NumPy's
exp2, computed in a wider type, over the whole range of each dtype; the two kernels against the NumPy operations they
replace (the online-softmax step of tiled.online_softmax), including -inf
(masked) scores, rows with nothing to attend to and NaN.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.compiled

pytest.importorskip("numba", reason="the [fast] extra (numba, SciPy) is not installed")

from attention_course.tiled._compiled import exp2  # noqa: E402

WIDER = {np.float32: np.float64, np.float64: np.longdouble}


def ulps(got: np.ndarray, exact: np.ndarray, dtype) -> np.ndarray:
    """|got - exact| in units of the last place of `dtype` at `exact`."""
    spacing = np.spacing(exact.astype(dtype)).astype(exact.dtype)
    return np.abs(got.astype(exact.dtype) - exact) / spacing


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp2_is_within_an_ulp_over_the_normal_range(dtype):
    c = exp2._F32 if dtype == np.float32 else exp2._F64
    x = np.linspace(c.low + 1, c.high - 0.01, 1_000_001, dtype=dtype)  # every normal result
    exact = np.exp2(x.astype(WIDER[dtype]))
    got = exp2.exp2(x)
    assert got.dtype == dtype
    # 1 ulp against a wider exp2; 2 where the platform's long double is just float64.
    limit = 2 if np.finfo(np.longdouble).bits == 64 and dtype == np.float64 else 1
    assert ulps(got, exact, dtype).max() <= limit


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp2_special_values(dtype):
    info = np.finfo(dtype)
    x = np.array([0.0, -0.0, 1.0, -3.0, 0.5, -np.inf, np.inf, np.nan, -1e6, 1e6], dtype=dtype)
    got = exp2.exp2(x)
    assert list(got[:4]) == [1, 1, 2, 0.125]  # integer powers exactly: the series starts at 1, r = 0
    assert abs(got[4] - np.sqrt(dtype(2))) <= np.spacing(np.sqrt(dtype(2)))
    assert got[5] == 0 and got[8] == 0  # 2**-inf = 0: masked scores weigh nothing
    assert got[6] == np.inf and got[9] == np.inf
    assert np.isnan(got[7])
    # Results below 2**(low + 1/2) are 0 (NumPy gives subnormals there); up to the smallest normal, subnormal.
    c = exp2._F32 if dtype == np.float32 else exp2._F64
    below, above = np.nextafter(dtype(c.low + 0.5), dtype(-np.inf)), np.nextafter(dtype(c.low + 0.5), dtype(np.inf))
    assert exp2.exp2(np.array([below], dtype))[0] == 0
    assert 0 < exp2.exp2(np.array([above], dtype))[0] < info.smallest_normal
    # From maxexp - 1/2 on: inf, as 2**x overflows; just below it, the largest powers are finite.
    assert exp2.exp2(np.array([c.high], dtype))[0] == np.inf
    just_below = exp2.exp2(np.array([np.nextafter(c.high, dtype(0))], dtype))[0]
    assert np.isfinite(just_below) and just_below > info.max / 2


def test_the_series_has_as_many_terms_as_the_docstring_says():
    assert "14 terms in float64, 8 in" in " ".join(exp2.__doc__.split())
    assert (len(exp2._F64.coefficients), len(exp2._F32.coefficients)) == (14, 8)
    assert exp2._F64.coefficients[-1] == 1 and exp2._F32.coefficients[-2] == np.float32(np.log(2))  # (ln 2)**k / k!


def test_exp2_keeps_the_shape_and_refuses_other_dtypes():
    x = np.zeros((2, 3), dtype=np.float32)
    assert exp2.exp2(x).shape == (2, 3)
    with pytest.raises(TypeError, match="float32 or float64 array; got int64"):
        exp2.exp2(np.zeros(3, dtype=np.int64))


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-1000, max_value=1000, allow_nan=False))
def test_exp2_property_float64(x):
    exact = np.exp2(np.array([x], dtype=np.longdouble))
    limit = 2 if np.finfo(np.longdouble).bits == 64 else 1
    assert ulps(exp2.exp2(np.array([x])), exact, np.float64)[0] <= limit


def online_step_in_numpy(s, m, l):
    """The online-softmax step as chapter 7 writes it, in NumPy, for scores in base 2: (p, m_new, l_new, alpha)."""
    m_new = np.maximum(m, s.max(axis=1))
    shift = np.where(m_new == -np.inf, 0, m_new)
    p = np.exp2(s - shift[:, None])
    alpha = np.exp2(m - shift)
    return p, m_new, l * alpha + p.sum(axis=1), alpha


def tile(rng, dtype, bq=7, bk=13, spare=(3, 5)):
    """A scratch buffer larger than the tile, as flash_attention's is at the last tile of a row."""
    scratch = np.full((bq + spare[0], bk + spare[1]), 123.0, dtype=dtype)
    scratch[:bq, :bk] = rng.standard_normal((bq, bk)) * 4
    return scratch, bq, bk


TOL = {np.float32: dict(rtol=2e-6, atol=0), np.float64: dict(rtol=4e-16, atol=0)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp_rows_raises_2_to_the_scores_in_place_and_adds_the_row_sums(dtype):
    scratch, bq, bk = tile(np.random.default_rng(0), dtype)
    scores = scratch[:bq, :bk].copy()
    scores[2, 3:] = -np.inf  # masked
    scratch[:bq, :bk] = scores
    l = np.arange(bq + 2, dtype=dtype)  # running sums so far, and two entries past the tile
    exp2.exp_rows(scratch, bq, bk, l)
    np.testing.assert_allclose(scratch[:bq, :bk], np.exp2(scores), **TOL[dtype])
    assert np.all(scratch[2, 3:bk] == 0)
    np.testing.assert_allclose(l[:bq], np.arange(bq) + np.exp2(scores).sum(axis=1), rtol=TOL[dtype]["rtol"] * 4)
    assert np.all(scratch[bq:] == 123) and np.all(scratch[:, bk:] == 123)  # nothing outside the tile
    assert list(l[bq:]) == [bq, bq + 1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("first_tile", [True, False])
def test_exp_rows_shifted_is_one_step_of_the_online_softmax(dtype, first_tile):
    rng = np.random.default_rng(1)
    scratch, bq, bk = tile(rng, dtype)
    scores = scratch[:bq, :bk].copy()
    scores[1] = -np.inf  # a query that sees nothing in this tile
    scores[4, ::2] = -np.inf
    scores[5] = 40  # large scores: the max matters
    scratch[:bq, :bk] = scores
    if first_tile:
        m, l = np.full(bq, -np.inf, dtype), np.zeros(bq, dtype)
    else:
        m, l = (rng.standard_normal(bq) * 4).astype(dtype), rng.uniform(1, 3, bq).astype(dtype)
        m[1] = -np.inf  # ... and saw nothing before either
        l[1] = 0
    want_p, want_m, want_l, want_alpha = online_step_in_numpy(scores, m, l)
    alpha = np.empty(bq, dtype)
    exp2.exp_rows_shifted(scratch, bq, bk, m, l, alpha)
    np.testing.assert_allclose(scratch[:bq, :bk], want_p, **TOL[dtype])
    np.testing.assert_array_equal(m, want_m)
    np.testing.assert_allclose(alpha, want_alpha, **TOL[dtype])
    np.testing.assert_allclose(l, want_l, rtol=TOL[dtype]["rtol"] * 4)
    assert np.all(scratch[1, :bk] == 0) and l[1] == 0  # nothing to attend to: no weight, no NaN
    assert np.all(scratch[bq:] == 123) and np.all(scratch[:, bk:] == 123)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_reaches_the_row_it_is_in(dtype):
    scratch, bq, bk = tile(np.random.default_rng(2), dtype)
    scratch[3, 5] = np.nan
    m, l, alpha = np.full(bq, -np.inf, dtype), np.zeros(bq, dtype), np.empty(bq, dtype)
    exp2.exp_rows_shifted(scratch, bq, bk, m, l, alpha)
    assert np.isnan(l[3]) and np.isnan(scratch[3, 5])
    assert not np.isnan(np.delete(l[:bq], 3)).any()
    scratch, bq, bk = tile(np.random.default_rng(2), dtype)
    scratch[3, 5] = np.nan
    l = np.zeros(bq, dtype)
    exp2.exp_rows(scratch, bq, bk, l)
    assert np.isnan(l[3]) and not np.isnan(np.delete(l[:bq], 3)).any()


@pytest.mark.parametrize("bk", [0, 1, 7, 8, 9, 16, 513])
def test_row_max_of_every_length(bk):
    row = np.random.default_rng(bk).standard_normal(bk + 3)
    row[bk:] = 1e9  # past the end: must not be read
    want = row[:bk].max() if bk else -np.inf
    assert exp2._row_max(row, bk) == want
