"""Tests for attention_course.chapters.training: the toy task, the hand-written backward pass, training."""

import math

import numpy as np
import pytest

from attention_course import scaled_dot_product_attention
from attention_course.chapters.training import (
    PARAM_NAMES,
    ToyTask,
    adam_step,
    forward,
    gradient_check,
    init_params,
    loss_and_grads,
    loss_fn,
    numerical_gradient,
    relative_difference,
    sgd_step,
    train,
)

TASK = ToyTask(n_symbols=6, n_context=5, d_value=3)


@pytest.fixture
def setup():
    rng = np.random.default_rng(0)
    return init_params(TASK, 4, rng), TASK.sample(6, rng)


# --- the task ------------------------------------------------------------------------


def test_sample_layout_and_answer():
    b = TASK.sample(50, np.random.default_rng(1))
    S, C, D = TASK.n_symbols, TASK.n_context, TASK.d_value
    assert b.x.shape == (50, C + 1, 2 * S + D) and b.y.shape == (50, D)
    for i in range(50):
        ctx, query = b.x[i, :C], b.x[i, C]
        symbols = ctx[:, :S].argmax(axis=1)
        np.testing.assert_array_equal(ctx[:, :S].sum(axis=1), 1.0)  # one symbol per context token
        assert len(set(symbols)) == C  # distinct symbols
        np.testing.assert_array_equal(ctx[:, S + D:], 0.0)  # context tokens carry no marker
        np.testing.assert_array_equal(query[:S + D], 0.0)  # the query carries only its marker
        marker = query[S + D:].argmax()
        assert query[S + D:].sum() == 1.0
        match = np.flatnonzero(symbols == marker)
        assert match.tolist() == [b.target[i]]  # exactly one token matches
        np.testing.assert_array_equal(b.y[i], ctx[match[0], S:S + D])  # the answer is its value


def test_every_position_is_a_target_sometimes():
    b = TASK.sample(500, np.random.default_rng(2))
    assert set(b.target.tolist()) == set(range(TASK.n_context))


def test_sample_and_init_need_a_generator():
    with pytest.raises(TypeError, match="rng"):
        TASK.sample(4, 0)
    with pytest.raises(TypeError, match="rng"):
        init_params(TASK, 4, np.random.RandomState(0))


@pytest.mark.parametrize("kwargs", [{"n_context": 9, "n_symbols": 8}, {"d_value": 0}])
def test_task_rejects_impossible_sizes(kwargs):
    with pytest.raises(ValueError):
        ToyTask(**kwargs)


# --- forward and backward ----------------------------------------------------------------


def test_forward_is_attention_of_the_query_row(setup):
    params, batch = setup
    f = forward(params, batch.x)
    for i in range(batch.x.shape[0]):
        x = batch.x[i]
        q, k, v = x[-1:] @ params["w_q"], x @ params["w_k"], x @ params["w_v"]
        np.testing.assert_allclose(f["output"][i], scaled_dot_product_attention(q, k, v)[0], rtol=1e-12)
    np.testing.assert_allclose(f["weights"].sum(axis=-1), 1.0)


@pytest.mark.parametrize("scale", [None, 1.0, 0.1])
def test_hand_written_gradients_match_finite_differences(setup, scale):
    params, batch = setup
    errors = gradient_check(params, batch, scale=scale)
    assert set(errors) == set(PARAM_NAMES)
    assert max(errors.values()) < 1e-6, errors


def test_gradient_check_catches_a_wrong_gradient(setup):
    params, batch = setup
    _, grads, _ = loss_and_grads(params, batch)
    numeric = numerical_gradient(lambda p: loss_fn(p, batch), params)
    wrong = grads["w_q"] * 1.01  # a gradient only 1% off must not pass
    assert relative_difference(wrong, numeric["w_q"]) > 1e-3
    assert relative_difference(grads["w_q"], numeric["w_q"]) < 1e-6


def test_gradients_agree_with_torch_autograd(setup):
    torch = pytest.importorskip("torch")
    params, batch = setup
    loss, grads, _ = loss_and_grads(params, batch)
    w = {n: torch.tensor(params[n], requires_grad=True) for n in PARAM_NAMES}
    x = torch.tensor(batch.x)
    q = x[:, -1, :] @ w["w_q"]
    k, v = x @ w["w_k"], x @ w["w_v"]
    p = torch.softmax(torch.einsum("bd,bnd->bn", q, k) / math.sqrt(q.shape[-1]), dim=-1)
    out = torch.einsum("bn,bnd->bd", p, v)
    t_loss = ((out - torch.tensor(batch.y)) ** 2).sum(-1).mean()
    t_loss.backward()
    assert loss == pytest.approx(t_loss.item(), rel=1e-12)
    for n in PARAM_NAMES:
        np.testing.assert_allclose(grads[n], w[n].grad.numpy(), rtol=1e-10, atol=1e-14)


def test_numerical_gradient_leaves_params_untouched(setup):
    params, batch = setup
    before = {n: params[n].copy() for n in PARAM_NAMES}
    numerical_gradient(lambda p: loss_fn(p, batch), params)
    for n in PARAM_NAMES:
        np.testing.assert_array_equal(params[n], before[n])


def test_numerical_gradient_of_a_known_function():
    params = {"a": np.array([1.0, -2.0, 3.0])}
    g = numerical_gradient(lambda p: float(np.sum(p["a"] ** 3)), params)
    np.testing.assert_allclose(g["a"], 3 * params["a"] ** 2, rtol=1e-8)


def test_forward_rejects_bad_shapes(setup):
    params, batch = setup
    with pytest.raises(ValueError, match="x must have shape"):
        forward(params, batch.x[0])
    with pytest.raises(ValueError, match="w_q and w_k"):
        forward({**params, "w_k": params["w_k"][:, :2]}, batch.x)
    with pytest.raises(ValueError, match="missing"):
        forward({"w_q": params["w_q"]}, batch.x)


# --- optimisers -------------------------------------------------------------------------------


def test_sgd_step_moves_against_the_gradient_and_is_pure(setup):
    params, batch = setup
    loss, grads, _ = loss_and_grads(params, batch)
    before = {n: params[n].copy() for n in PARAM_NAMES}
    new = sgd_step(params, grads, lr=1e-3)
    for n in PARAM_NAMES:
        np.testing.assert_array_equal(params[n], before[n])
        np.testing.assert_allclose(new[n], params[n] - 1e-3 * grads[n])
    assert loss_fn(new, batch) < loss  # a small step downhill lowers the loss


def test_first_adam_step_moves_each_entry_by_lr(setup):
    params, batch = setup
    _, grads, _ = loss_and_grads(params, batch)
    new, state = adam_step(params, grads, None, lr=0.01)
    assert state["t"] == 1
    for n in PARAM_NAMES:
        moved = new[n] - params[n]
        big = np.abs(grads[n]) > 1e-4  # where the gradient is not tiny, |step| = lr * |g| / (|g| + eps)
        np.testing.assert_allclose(moved[big], -0.01 * np.sign(grads[n][big]), rtol=1e-3)


# --- training ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run():
    return train(steps=300, snapshot_steps=(0, 50, 300), seed=0)


def test_training_is_deterministic(run):
    again = train(steps=300, snapshot_steps=(0, 50, 300), seed=0)
    np.testing.assert_array_equal(run.losses, again.losses)
    np.testing.assert_array_equal(run.weights, again.weights)
    other = train(steps=300, snapshot_steps=(0, 50, 300), seed=1)
    assert not np.array_equal(run.losses, other.losses)


def test_loss_goes_down(run):
    assert run.losses.shape == (300,)
    first, last = run.losses[:20].mean(), run.losses[-20:].mean()
    assert last < first / 50
    assert np.all(np.diff(run.eval_losses) < 0)


def test_attention_maps_sharpen_on_the_matching_token(run):
    n = run.task.n_tokens
    assert run.weights.shape == (3, 256, n)
    assert run.snapshot_steps == (0, 50, 300)
    tw = run.target_weight
    assert abs(tw[0] - 1 / n) < 0.05  # before training: about uniform
    assert tw[-1] > 0.9  # after: nearly all weight on the matching token
    assert np.all(np.diff(tw) > 0)
    assert run.accuracy[-1] == 1.0
    entropy = -(run.weights * np.log(run.weights)).sum(-1).mean(-1)
    assert entropy[-1] < entropy[0] / 4


def test_plain_sgd_also_learns():
    r = train(steps=300, optimizer="sgd", lr=0.5, snapshot_steps=(0, 300), seed=0)
    assert r.target_weight[-1] > 0.8
    assert r.eval_losses[-1] < r.eval_losses[0] / 20


def test_training_keeps_the_initial_params(run):
    rng = np.random.default_rng(0)
    run.task.sample(256, rng)  # train() draws the evaluation batch first
    start = init_params(run.task, 8, rng)
    for n in PARAM_NAMES:
        np.testing.assert_array_equal(run.initial_params[n], start[n])
        assert not np.array_equal(run.params[n], start[n])


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"optimizer": "rmsprop"}, "optimizer"),
        ({"snapshot_steps": (0, 999)}, "snapshot_steps"),
        ({"steps": 0}, "steps"),
        ({"lr": -0.1}, "lr"),
        ({"lr": float("nan")}, "lr"),
    ],
)
def test_train_rejects_bad_arguments(kwargs, words):
    with pytest.raises(ValueError, match=words):
        train(**{"steps": 10, **kwargs})
