"""Tests for attention_course/grading/checks/exercises/delta.py: exercise 15's references, its rebuilt step, its inputs.

The mistakes are predicted by `step` and `chunk`, the step rebuilt with one
part changed; with nothing changed they must be the references. The chunk's
reference must be its steps one after the other, and the package's chunked
form; the visible inputs must show each property the task states.
"""

import numpy as np
import pytest

from attention_course.core.delta_rule import chunked_gated_delta_rule, l2_normalize
from attention_course.grading.checks.engine.mistakes import same_values
from attention_course.grading.checks.exercises import delta as ex
from test_grading_sparse import separated_on_a_visible_input

STEP, CHUNK = ex.GATED_DELTA_STEP, ex.GATED_DELTA_CHUNK


@pytest.mark.parametrize("check, rebuilt", [(STEP, ex.step), (CHUNK, ex.chunk)], ids=["step", "chunk"])
def test_the_rebuilt_step_is_the_reference(check, rebuilt):
    for case in check.cases:
        want = check.reference(*case.args)
        got = rebuilt(*case.args)
        assert all(g.dtype == w.dtype == case.args[0].dtype for g, w in zip(got, want)), case.label
        tolerance = (1e-5, 1e-6) if case.float32 else (1e-12, 1e-14)
        assert same_values(got, want, tolerance), case.label


def test_the_chunk_is_its_steps_and_the_package_s_chunked_form():
    rng = np.random.default_rng(3)
    S, q, k, v = (rng.standard_normal(shape) for shape in ((4, 3), (7, 4), (7, 4), (7, 3)))
    a, b = rng.uniform(0.5, 1.0, 7), rng.uniform(0.0, 2.0, 7)
    o, last = ex.chunk_reference(S, q, k, v, a, b)
    state = S
    for t in range(7):
        o_t, state = ex.step_reference(state, q[t], k[t], v[t], a[t], b[t])
        np.testing.assert_allclose(o[t], o_t, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(last, state, rtol=1e-12, atol=1e-14)
    o_c, last_c = chunked_gated_delta_rule(l2_normalize(q)[None], l2_normalize(k)[None], v[None], np.log(a)[None],
                                           b[None], chunk_size=3, initial_state=S[None])
    np.testing.assert_allclose(o_c[0], o, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(last_c[0], last, rtol=1e-9, atol=1e-12)


def test_the_state_is_d_k_by_d_v_and_b_1_writes_the_value_exactly():
    case = next(c for c in STEP.cases if c.label.startswith("no decay and b = 1"))
    S, q, k, v, a, b = case.args
    _, new = ex.step_reference(*case.args)
    assert new.shape == S.shape == (k.shape[0], v.shape[0])
    np.testing.assert_allclose(new.T @ l2_normalize(k), v, rtol=1e-6)  # read with the unit key: v (up to the 1e-6)


def test_the_visible_inputs_show_every_property_the_exercise_states():
    shown = [c.args for c in STEP.cases if not c.hidden]
    assert any(S.shape[0] == S.shape[1] for S, *_ in shown) and any(S.shape[0] != S.shape[1] for S, *_ in shown)
    assert any(not S.any() for S, *_ in shown) and any(not k.any() for _, _, k, *_ in shown)  # empty state, zero key
    assert {0.0, 1.0, 2.0} <= {b for *_, b in shown} and any(a == 1.0 for *_, a, _ in shown)
    assert any(0 < np.linalg.norm(k) < 1e-2 for _, _, k, *_ in shown)  # a key whose length the 1e-6 changes
    assert any(S.dtype == np.float32 for S, *_ in shown) and any(S.shape[0] == 1 for S, *_ in shown)
    chunks = [c.args for c in CHUNK.cases if not c.hidden]
    assert any(q.shape[0] == 1 for _, q, *_ in chunks) and any(isinstance(a, tuple) for *_, a, _ in chunks)
    assert any(S.dtype == np.float32 for S, *_ in chunks) and any(not S.any() for S, *_ in chunks)


@pytest.mark.parametrize("check", [STEP, CHUNK], ids=["step", "chunk"])
def test_the_first_input_separates_every_mistake_of_one_token(check):
    """The first input (a square state) shows every mistake of the step, the orientation's included."""
    expected = check.expected(0)
    differ = {m.id for m, p in ((m, check.predictions(0).get(j)) for j, m in enumerate(check.mistakes))
              if p is not None and not same_values(p, expected, check.cases[0].tolerance)}
    assert {i for i, *_ in ex._CHANGES} <= differ


@pytest.mark.parametrize("check", [STEP, CHUNK], ids=["step", "chunk"])
def test_every_two_mistakes_are_told_apart_on_a_visible_input(check):
    ids = sorted({m.id for m in check.mistakes})
    together = [(a, b) for i, a in enumerate(ids) for b in ids[i + 1:] if not separated_on_a_visible_input(check, a, b)]
    assert not together, together
