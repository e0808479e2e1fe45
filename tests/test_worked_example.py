"""The bank-bot example's numbers, computed by the package.

The expected values below are the ones the introduction and the worked example
print (rounded as printed there): these tests are the contract that the package
reproduces the story the course starts from.
"""

import numpy as np
import pytest

from attention_course import BANK_BOT, causal_mask, scaled_dot_product_attention, trace_attention


@pytest.fixture
def trace():
    return trace_attention(BANK_BOT.query, BANK_BOT.keys, BANK_BOT.values, tokens=BANK_BOT.tokens)


def test_trace_method_is_trace_attention(trace):
    assert str(BANK_BOT.trace()) == str(trace)


def test_the_example_data():
    assert BANK_BOT.tokens == ("my", "card", "was", "blocked")
    assert BANK_BOT.query_token == "blocked" and BANK_BOT.position == 3
    assert BANK_BOT.d_k == 4
    with pytest.raises(ValueError):
        BANK_BOT.keys[0, 0] = 5.0  # shared data is read-only


def test_step_2_dot_products(trace):
    np.testing.assert_allclose(trace.scores, [1, 6, 0.4, 2])


def test_step_3_scaled_by_sqrt_dk(trace):
    assert trace.scale == 0.5
    np.testing.assert_allclose(trace.scaled_scores, [0.5, 3.0, 0.2, 1.0])


def test_step_4_exponentials_and_weights(trace):
    assert np.round(trace.exponentials, 2).tolist() == [1.65, 20.09, 1.22, 2.72]
    assert round(trace.exp_sum, 2) == 25.67
    assert np.round(trace.weights, 3).tolist() == [0.064, 0.782, 0.048, 0.106]
    assert trace.weights.sum() == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(trace.weights, trace.exponentials / trace.exp_sum, rtol=1e-14)


def test_step_5_output(trace):
    assert np.round(trace.output, 2).tolist() == [0.19, 0.91]
    assert BANK_BOT.tokens[int(np.argmax(trace.weights))] == "card"


def test_matrix_form_gives_the_same_output(trace):
    out = scaled_dot_product_attention(BANK_BOT.query[None, :], BANK_BOT.keys, BANK_BOT.values)
    np.testing.assert_allclose(out[0], trace.output, rtol=1e-14)


def test_causal_mask_gives_card_exactly_zero_weight_on_the_future():
    card = BANK_BOT.tokens.index("card")
    t = trace_attention(BANK_BOT.query, BANK_BOT.keys, BANK_BOT.values, BANK_BOT.tokens, attn_mask=causal_mask(4)[card])
    assert t.weights[2] == 0.0 and t.weights[3] == 0.0
    assert t.exponentials[2:].tolist() == [0.0, 0.0]  # exp(-inf) = 0
    assert t.weights.sum() == pytest.approx(1.0)


def test_text_and_html_representations(trace):
    text = str(trace)
    assert "card" in text and "0.782" in text and "25.674" in text
    assert "output = [0.194, 0.912]" in text
    html = trace._repr_html_()
    assert html.startswith("<table") and "<td>0.782</td>" in html
    masked = trace_attention([1.0], [[1.0], [2.0]], [[1.0], [2.0]], tokens=["<a>", "b"], attn_mask=np.array([True, False]))
    assert "-inf" in str(masked) and "&lt;a&gt;" in masked._repr_html_()
    assert masked.rows()[1][3:] == ("0", "0")  # a masked key's exp and weight are exactly 0, printed "0"


def test_trace_errors():
    with pytest.raises(ValueError, match=r"query must be one vector of shape \(d_k,\); got shape \(1, 4\)"):
        trace_attention(BANK_BOT.query[None, :], BANK_BOT.keys, BANK_BOT.values)
    with pytest.raises(ValueError, match="one label per key"):
        trace_attention(BANK_BOT.query, BANK_BOT.keys, BANK_BOT.values, tokens=["a"])
    with pytest.raises(ValueError, match="d_k"):
        trace_attention(BANK_BOT.query[:3], BANK_BOT.keys, BANK_BOT.values)
