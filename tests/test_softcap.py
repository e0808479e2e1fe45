"""Tests for attention_course/core/softcap.py: a smooth cap, nearly the identity near 0."""

import numpy as np
import pytest

from attention_course.core.softcap import softcap


def test_softcap_is_c_tanh_x_over_c_and_stays_inside_the_cap():
    x = np.linspace(-500, 500, 1001)
    y = softcap(x, 50.0)
    np.testing.assert_allclose(y, 50.0 * np.tanh(x / 50.0), rtol=1e-15)
    assert np.all(np.abs(y) < 50.0 + 1e-12) and np.all(np.diff(y) > 0)  # bounded, order kept
    np.testing.assert_allclose(softcap(-x, 50.0), -y)  # odd
    small = np.array([0.0, 1e-3, -0.5])
    np.testing.assert_allclose(softcap(small, 50.0), small, rtol=1e-4)  # near 0 it changes almost nothing


def test_softcap_keeps_float32_and_masked_scores():
    x = np.array([[1.0, -np.inf, 80.0]], dtype=np.float32)
    y = softcap(x, 30.0)
    assert y.dtype == np.float32 and y[0, 1] == -np.inf and 29.0 < y[0, 2] < 30.0


@pytest.mark.parametrize("cap, error", [(0.0, ValueError), (-1.0, ValueError), (np.inf, ValueError), (True, TypeError),
                                        ("50", TypeError)])
def test_a_bad_cap_is_refused(cap, error):
    with pytest.raises(error, match="cap must be a positive"):
        softcap(np.ones(3), cap)
