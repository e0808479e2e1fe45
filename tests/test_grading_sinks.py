"""Tests for attention_course/grading/checks/exercises/sinks.py: exercise 12's reference, its rebuilt layer, its inputs.

The mistakes are predicted by `layer`, the reference rebuilt from the
package's pieces with one part changed; with nothing changed it must be the
reference. The reference itself is checked against transformers' gpt-oss
eager attention under transformers' own sliding-window mask.
"""

import numpy as np
import pytest

from attention_course.grading.checks.engine.mistakes import same_values
from attention_course.grading.checks.exercises import sinks as ex

CASES = ex.SINK_ATTENTION.cases


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label[:40])
def test_the_rebuilt_layer_is_the_reference(case):
    want = ex.reference(*case.args)
    got = ex.layer(*case.args)
    assert all(g.dtype == w.dtype == case.args[0].dtype for g, w in zip(got, want))
    assert same_values(got, want, (1e-12, 1e-15))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label[:40])
def test_the_reference_is_transformers_gpt_oss_attention(case):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from types import SimpleNamespace

    from transformers.masking_utils import causal_mask_function, sliding_window_causal_mask_function
    from transformers.models.gpt_oss.modeling_gpt_oss import eager_attention_forward

    q, k, v, sinks, window = case.args
    h_q, n_q, d = q.shape
    n_k = k.shape[1]
    allowed = causal_mask_function if window is None else sliding_window_causal_mask_function(window)
    positions = torch.arange(n_q)[:, None] + (n_k - n_q)  # (n_q, 1): the queries are the last n_q positions
    mask = allowed(torch.tensor(0), torch.tensor(0), positions, torch.arange(n_k)[None, :]).numpy()  # (n_q, n_k)
    bias = torch.from_numpy(np.where(mask, 0.0, -np.inf)[None, None]).to(torch.float64)
    module = SimpleNamespace(num_key_value_groups=h_q // k.shape[0], training=False,
                             sinks=torch.from_numpy(sinks.astype(np.float64)))
    as_torch = lambda x: torch.from_numpy(x.astype(np.float64))[None]  # noqa: E731 -- (1, heads, n, d)
    output, weights = eager_attention_forward(module, as_torch(q), as_torch(k), as_torch(v), bias, d ** -0.5)
    want_output, want_weights = ex.reference(*(a.astype(np.float64) for a in (q, k, v, sinks)), window)
    np.testing.assert_allclose(output[0].transpose(0, 1).numpy(), want_output, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(weights[0].numpy(), want_weights, rtol=1e-9, atol=1e-12)


def test_a_query_sees_itself_and_the_window_minus_one_keys_before_it():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((1, 2, 4)), rng.standard_normal((1, 9, 4)), rng.standard_normal((1, 9, 2))
    _, weights = ex.reference(q, k, v, np.array([0.0]), 3)
    assert [np.flatnonzero(row).tolist() for row in weights[0]] == [[5, 6, 7], [6, 7, 8]]  # positions 7 and 8
    assert np.all(weights.sum(axis=-1) < 1)  # the sink takes its share


def test_the_visible_inputs_show_every_property_the_exercise_states():
    shown = [c.args for c in CASES if not c.hidden]
    assert any(q.shape[1] != k.shape[1] for q, k, *_ in shown)  # decoding: n_q != n_k
    assert any(q.shape[1] == 1 < k.shape[1] for q, k, *_ in shown)  # one new token
    assert any(q.shape[0] != k.shape[0] > 1 for q, k, *_ in shown)  # grouped-query, more than one group
    assert any(len(set(s.tolist())) == len(s) > 1 for *_, s, _ in shown)  # heads whose sinks differ
    windows = [(w, k.shape[1]) for _, k, _, _, w in shown]
    assert (1, 4) in windows and any(w is None for w, _ in windows) and any(w and w > n for w, n in windows)
    assert any(q.dtype == np.float32 for q, *_ in shown) and any(q.dtype == np.float64 for q, *_ in shown)
    assert any(v.shape[-1] != q.shape[-1] for q, _, v, *_ in shown)  # values not as wide as the keys
    assert any(np.isneginf(s).any() for *_, s, _ in shown)  # a head without a sink
    dominated = [ex.layer(*args)[1] for args in shown if np.max(args[3]) > 88]  # e^sink overflows float32
    assert dominated and all(np.isfinite(w).all() for w in dominated)
    far = [args for args in shown if np.isneginf(args[3]).any()][0]
    q, k = far[0].astype(np.float64), far[1].astype(np.float64)
    assert np.max(q @ k.transpose(0, 2, 1) / 2) < -1e9  # its scores are below a -1e9 fill


def test_each_visible_input_separates_what_it_is_there_for():
    labels = {c.label: i for i, c in enumerate(CASES)}

    def predicts(label, mistake_id):  # some prediction of that mistake differs from the right answer here
        i = labels[label]
        expected = ex.SINK_ATTENTION.expected(i)
        return any(m.id == mistake_id and p is not None and not same_values(p, expected, CASES[i].tolerance)
                   for m, p in ((ex.MISTAKES[j], ex.SINK_ATTENTION.predictions(i).get(j)) for j in range(len(ex.MISTAKES))))

    far = next(label for label in labels if "-1e9" in label)
    assert predicts(far, "mask_filled_with_large_negative")
    dominant = next(label for label in labels if "dominates" in label)
    assert predicts(dominant, "sink_share_overflows")
    chunk = next(label for label in labels if label.startswith("a chunk"))
    assert predicts(chunk, "window_top_left")
    assert predicts(next(label for label in labels if label.startswith("large scores")), "no_max_subtraction")
