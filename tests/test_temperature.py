"""core/temperature.py: Llama 4's query scale for layers without RoPE (the torch formula: tests/test_decoder_minimax_llama4.py)."""

import math

import numpy as np
import pytest

from attention_course.core.temperature import nope_temperature


def test_one_until_the_first_floor_then_a_step_per_floor_scale():
    got = nope_temperature(np.arange(12), floor_scale=4, attn_scale=0.1)
    assert got.dtype == np.float32 and got.shape == (12,)
    assert (got[:3] == 1).all()  # positions 0..2: floor((p + 1) / 4) = 0
    np.testing.assert_allclose(got[3:7], 1 + 0.1 * math.log(2), rtol=1e-6)  # p + 1 = 4..7
    np.testing.assert_allclose(got[7:11], 1 + 0.1 * math.log(3), rtol=1e-6)  # p + 1 = 8..11
    assert np.all(np.diff(got) >= 0)


def test_published_floor_scale_leaves_short_contexts_alone():
    assert (nope_temperature(np.array([0, 100, 8190]), 8192, 0.1) == 1).all()
    assert nope_temperature(np.array([8191]), 8192, 0.1)[0] == pytest.approx(1 + 0.1 * math.log(2), rel=1e-6)


@pytest.mark.parametrize("positions, floor_scale, match", [
    (np.array([[0, 1]]), 4, "positions"), (np.array([0.5]), 4, "positions"), (np.array([-1]), 4, "non-negative"),
    (np.array([1]), 0, "floor_scale"),
])
def test_bad_input_is_refused(positions, floor_scale, match):
    with pytest.raises(ValueError, match=match):
        nope_temperature(positions, floor_scale, 0.1)
