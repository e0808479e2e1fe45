"""Tests for attention_course/grading/checks/exercises/sparse.py: exercise 14's reference, its rebuilt layer, its inputs.

The mistakes are predicted by `layer`, the reference rebuilt from the
package's pieces with one part changed; with nothing changed it must be the
reference. With top_k at least n_k the reference must be full causal
attention, and the visible inputs must show each property the task states.
"""

import numpy as np
import pytest

from attention_course.core.attention import scaled_dot_product_attention
from attention_course.core.sparse import indexer_scores
from attention_course.grading.checks.engine.mistakes import same_values
from attention_course.grading.checks.exercises import sparse as ex

CHECK = ex.SPARSE_ATTENTION
CASES = CHECK.cases
SHOWN = [c for c in CASES if not c.hidden]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label[:40])
def test_the_rebuilt_layer_is_the_reference(case):
    want = ex.reference(*case.args)
    got = ex.layer(*case.args)
    assert all(g.dtype == w.dtype == case.args[0].dtype for g, w in zip(got, want))
    assert same_values(got, want, (1e-12, 1e-15))


def test_with_top_k_at_least_n_k_it_is_full_causal_attention():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 2))
    q_index, k_index, w = rng.standard_normal((3, 3, 2)), rng.standard_normal((5, 2)), rng.standard_normal((3, 3))
    visible = np.arange(5)[None, :] <= np.arange(3)[:, None] + 2  # (n_q, n_k): the last 3 of 5 positions
    full = scaled_dot_product_attention(q, k[None], v[None], attn_mask=visible)
    for top_k in (5, 9):
        output, weights = ex.reference(q, k, v, q_index, k_index, w, top_k)
        np.testing.assert_allclose(output, full, rtol=1e-12)
        assert np.array_equal(weights > 0, np.broadcast_to(visible, weights.shape))


def test_every_query_keeps_min_top_k_visible_keys_and_ties_keep_the_earlier_key():
    case = next(c for c in SHOWN if c.label.startswith("ties"))
    q, k, v, q_index, k_index, w, top_k = case.args
    _, weights = ex.reference(*case.args)
    kept = weights[0] > 0  # (n_q, n_k): the same keys for every head
    assert np.array_equal(kept, weights[-1] > 0)
    scores = indexer_scores(q_index, k_index, w)
    tied_rows = 0
    for t, row in enumerate(kept):
        visible = t + 1  # a prompt: query t sees keys 0 .. t
        assert row.sum() == min(top_k, visible) and not row[visible:].any()
        last = scores[t, :visible][row[:visible]].min()  # the lowest score kept
        tied = np.flatnonzero(scores[t, :visible] == last)
        if row[tied].sum() < len(tied):  # keys tie for the last place: the earlier ones are kept
            tied_rows += 1
            assert np.array_equal(row[tied], np.arange(len(tied)) < row[tied].sum())
    assert tied_rows  # the input is there for its ties


def test_the_visible_inputs_show_every_property_the_exercise_states():
    shapes = [(q.shape, k.shape, v.shape, qi.shape, top_k) for q, k, v, qi, _, _, top_k in (c.args for c in SHOWN)]
    assert any(q[1] == kk[0] for q, kk, *_ in shapes) and any(1 < q[1] < kk[0] for q, kk, *_ in shapes)
    assert any(q[1] == 1 for q, *_ in shapes)  # one new token
    assert any(top_k >= kk[0] for _, kk, _, _, top_k in shapes) and any(top_k == 1 for *_, top_k in shapes)
    assert any(v[1] != q[2] for q, _, v, _, _ in shapes) and any(qi[0] != q[0] for q, _, _, qi, _ in shapes)
    assert any(c.args[0].dtype == np.float32 for c in SHOWN) and any(c.args[0].dtype == np.float64 for c in SHOWN)
    assert any((c.args[5] < 0).any() and (c.args[5] > 0).any() for c in SHOWN)  # head weights of both signs


def test_each_visible_input_separates_what_it_is_there_for():
    labels = {c.label: i for i, c in enumerate(CASES)}

    def predicts(start, mistake_id):  # some prediction of that mistake differs from the right answer there
        i = labels[next(label for label in labels if label.startswith(start))]
        expected = CHECK.expected(i)
        return any(m.id == mistake_id and p is not None and not same_values(p, expected, CASES[i].tolerance)
                   for m, p in ((ex.MISTAKES[j], CHECK.predictions(i).get(j)) for j in range(len(ex.MISTAKES))))

    assert predicts("ties", "ties_to_the_later_key")
    assert predicts("a prompt of 6 tokens", "hidden_keys_kept_when_few_visible")
    assert predicts("a block of 4 queries", "top_left_causal_mask")
    assert predicts("a block of 4 queries", "future_keys_selected")
    for mistake in ("relu_forgotten", "relu_after_weighting", "head_weights_ignored", "softmax_over_all_keys",
                    "missing_scale"):
        assert predicts("a prompt of 6 tokens", mistake), mistake
    assert predicts("large scores", "softmax_over_all_keys")


def test_the_hidden_tie_input_ties():
    case = next(c for c in CASES if c.hidden and c.label.startswith("ties"))
    scores = indexer_scores(*case.args[3:6])
    assert any(len(np.unique(row[: t + 1])) < t + 1 for t, row in enumerate(scores))


def separated_on_a_visible_input(check, a: str, b: str) -> bool:
    """Some visible input where a way of making mistake a differs from every way of making b, and back."""
    for i, case in enumerate(check.cases):
        if case.hidden:
            continue
        made = {m: [p for j, p in check.predictions(i).items() if check.mistakes[j].id == m and p is not None]
                for m in (a, b)}
        if made[a] and made[b] and all(any(all(not same_values(x, y, case.tolerance) for y in made[other])
                                           for x in made[one]) for one, other in ((a, b), (b, a))):
            return True
    return False


def test_every_two_mistakes_are_told_apart_on_a_visible_input():
    ids = sorted({m.id for m in CHECK.mistakes})
    together = [(a, b) for i, a in enumerate(ids) for b in ids[i + 1:] if not separated_on_a_visible_input(CHECK, a, b)]
    assert not together, together
