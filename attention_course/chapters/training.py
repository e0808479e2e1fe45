"""Learning W_q, W_k and W_v by backpropagation, in plain numpy (book/learned_projections.ipynb).

The toy task ("find the token whose symbol matches the marker"): a sequence
holds `n_context` tokens, each carrying a symbol (one of `n_symbols`) and a
random value vector, followed by one query token that carries a marker. Exactly
one context token has the symbol the marker names; the right answer is that
token's value. Nothing but attention can solve it: the query must put its
weight on the matching token and copy its value.

    token j < n_context: [ one-hot(symbol_j) | value_j | 0           ]
    query token (last):  [ 0                 | 0       | one-hot(marker) ]

One attention layer reads the output at the query position (like a language
model reading its last position), so only the query's row of the attention
matrix is needed:

    q = x_query W_q,   K = X W_k,   V = X W_v
    p = softmax(q K^T * scale),   output = p V,   loss = mean_b ||output - target||^2

`loss_and_grads` writes the backward pass by hand; `numerical_gradient` checks
it by central finite differences; `train` runs plain SGD or Adam and keeps the
attention weights at chosen steps so the chapter can show them sharpening.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core._checks import positive_int
from ..core.softmax import softmax

PARAM_NAMES = ("w_q", "w_k", "w_v")
"""The learned matrices, in the order they are reported."""


def _check_rng(rng) -> None:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator (np.random.default_rng(seed)); got {type(rng).__name__}")


@dataclass(frozen=True)
class ToyTask:
    """The "find the matching symbol, copy its value" task."""

    n_symbols: int = 8
    """Number of distinct symbols (and markers)."""
    n_context: int = 7
    """Context tokens before the query token; at most `n_symbols` (symbols are distinct)."""
    d_value: int = 4
    """Size of each token's value vector, and of the answer."""

    def __post_init__(self):
        positive_int(self.n_symbols, "n_symbols")
        positive_int(self.n_context, "n_context")
        positive_int(self.d_value, "d_value")
        if self.n_context > self.n_symbols:
            raise ValueError(
                f"n_context ({self.n_context}) must be at most n_symbols ({self.n_symbols}): "
                "every context token carries a different symbol"
            )

    @property
    def n_tokens(self) -> int:
        """Sequence length n: the context tokens plus the query token."""
        return self.n_context + 1

    @property
    def d_model(self) -> int:
        """Width of a token vector: symbol one-hot, value, marker one-hot."""
        return 2 * self.n_symbols + self.d_value

    def sample(self, batch_size: int, rng: np.random.Generator) -> "Batch":
        """Draw `batch_size` independent sequences."""
        batch_size = positive_int(batch_size, "batch_size")
        _check_rng(rng)
        S, C, D = self.n_symbols, self.n_context, self.d_value
        # Distinct symbols per sequence: the first C entries of a random permutation of 0..S-1.
        symbols = rng.permuted(np.tile(np.arange(S), (batch_size, 1)), axis=1)[:, :C]  # (B, C)
        values = rng.standard_normal((batch_size, C, D))  # (B, C, D)
        target = rng.integers(0, C, batch_size)  # (B,) position of the matching token
        marker = symbols[np.arange(batch_size), target]  # (B,) the symbol the query asks for
        x = np.zeros((batch_size, C + 1, self.d_model))  # (B, n, d_model)
        x[np.arange(batch_size)[:, None], np.arange(C)[None, :], symbols] = 1.0  # one-hot(symbol_j)
        x[:, :C, S:S + D] = values
        x[np.arange(batch_size), C, S + D + marker] = 1.0  # the query token's one-hot(marker)
        answer = values[np.arange(batch_size), target]  # (B, D)
        return Batch(x=x, y=answer, target=target, symbols=symbols, marker=marker)


@dataclass(frozen=True)
class Batch:
    """A batch of toy sequences with their answers."""

    x: np.ndarray
    """(B, n, d_model) token vectors; the last token of each sequence is the query."""
    y: np.ndarray
    """(B, d_value) the right answer: the value of the matching token."""
    target: np.ndarray
    """(B,) position of the matching token, in 0..n_context-1."""
    symbols: np.ndarray
    """(B, n_context) symbol of each context token."""
    marker: np.ndarray
    """(B,) the symbol the query token asks for."""


def init_params(task: ToyTask, d_k: int, rng: np.random.Generator, std: float | None = None) -> dict:
    """Random starting matrices {"w_q", "w_k": (d_model, d_k), "w_v": (d_model, d_value)}.

    Entries are normal with standard deviation `std`, 1/sqrt(d_model) by
    default, so projected vectors start with entries of variance about 1 per
    active input feature, and the first attention weights are nearly uniform.
    """
    d_k = positive_int(d_k, "d_k")
    _check_rng(rng)
    std = 1.0 / np.sqrt(task.d_model) if std is None else float(std)
    return {
        "w_q": std * rng.standard_normal((task.d_model, d_k)),
        "w_k": std * rng.standard_normal((task.d_model, d_k)),
        "w_v": std * rng.standard_normal((task.d_model, task.d_value)),
    }


def _check_params(params: dict, d_model: int) -> None:
    missing = [name for name in PARAM_NAMES if name not in params]
    if missing:
        raise ValueError(f"params must hold {PARAM_NAMES}; missing {missing}")
    w_q, w_k, w_v = (np.asarray(params[name]) for name in PARAM_NAMES)
    if w_q.ndim != 2 or w_q.shape[0] != d_model or w_k.shape != w_q.shape:
        raise ValueError(
            f"w_q and w_k must both have shape (d_model, d_k) = ({d_model}, d_k); got {w_q.shape} and {w_k.shape}"
        )
    if w_v.ndim != 2 or w_v.shape[0] != d_model:
        raise ValueError(f"w_v must have shape (d_model, d_v) = ({d_model}, d_v); got {w_v.shape}")


def forward(params: dict, x: np.ndarray, scale: float | None = None) -> dict:
    """The layer's forward pass at the query (last) position, every step kept.

    Args:
        params: {"w_q", "w_k": (d_model, d_k), "w_v": (d_model, d_v)}.
        x: (B, n, d_model) token vectors; the last token is the query.
        scale: multiplies the scores; 1/sqrt(d_k) by default.

    Returns:
        dict with q (B, d_k), k (B, n, d_k), v (B, n, d_v), scores (B, n),
        weights (B, n) and output (B, d_v), plus x and scale.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 3:
        raise ValueError(f"x must have shape (B, n, d_model); got shape {x.shape}")
    _check_params(params, x.shape[-1])
    w_q, w_k, w_v = (params[name] for name in PARAM_NAMES)
    scale = 1.0 / np.sqrt(w_q.shape[1]) if scale is None else float(scale)
    q = x[:, -1, :] @ w_q  # (B, d_model) x (d_model, d_k) -> (B, d_k)
    k = x @ w_k  # (B, n, d_model) x (d_model, d_k) -> (B, n, d_k)
    v = x @ w_v  # (B, n, d_model) x (d_model, d_v) -> (B, n, d_v)
    scores = np.einsum("bd,bnd->bn", q, k) * scale  # (B, d_k) . (B, n, d_k) -> (B, n)
    weights = softmax(scores, axis=-1)  # (B, n)
    output = np.einsum("bn,bnd->bd", weights, v)  # (B, n) . (B, n, d_v) -> (B, d_v)
    return {"x": x, "scale": scale, "q": q, "k": k, "v": v, "scores": scores, "weights": weights, "output": output}


def loss_fn(params: dict, batch: Batch, scale: float | None = None) -> float:
    """Mean over the batch of the squared error ||output - y||^2."""
    out = forward(params, batch.x, scale)["output"]  # (B, d_v)
    return float(np.mean(np.sum((out - batch.y) ** 2, axis=-1)))


def loss_and_grads(params: dict, batch: Batch, scale: float | None = None) -> tuple[float, dict, np.ndarray]:
    """The loss, its gradient for each matrix (backward pass by hand), and the weights.

    Returns:
        (loss, grads, weights): grads has the keys and shapes of `params`;
        weights is (B, n), the query's attention over the sequence.
    """
    f = forward(params, batch.x, scale)
    x, q, k, v, p, s = f["x"], f["q"], f["k"], f["v"], f["weights"], f["scale"]
    B = x.shape[0]
    err = f["output"] - batch.y  # (B, d_v)
    loss = float(np.mean(np.sum(err**2, axis=-1)))

    d_out = 2.0 * err / B  # (B, d_v) dL/d output
    d_v = p[:, :, None] * d_out[:, None, :]  # (B, n, 1) x (B, 1, d_v) -> (B, n, d_v) dL/dV
    d_p = np.einsum("bd,bnd->bn", d_out, v)  # (B, d_v) . (B, n, d_v) -> (B, n) dL/dweights
    # Softmax backward: d_scores = J^T d_p with J = diag(p) - p p^T, i.e. p * (d_p - p . d_p).
    d_scores = p * (d_p - np.sum(p * d_p, axis=-1, keepdims=True))  # (B, n)
    d_q = s * np.einsum("bn,bnd->bd", d_scores, k)  # (B, n) . (B, n, d_k) -> (B, d_k)
    d_k = s * d_scores[:, :, None] * q[:, None, :]  # (B, n, 1) x (B, 1, d_k) -> (B, n, d_k)
    grads = {
        "w_q": x[:, -1, :].T @ d_q,  # (d_model, B) x (B, d_k) -> (d_model, d_k)
        "w_k": np.einsum("bnm,bnd->md", x, d_k),  # (B, n, d_model) . (B, n, d_k) -> (d_model, d_k)
        "w_v": np.einsum("bnm,bnd->md", x, d_v),  # (B, n, d_model) . (B, n, d_v) -> (d_model, d_v)
    }
    return loss, grads, p


def numerical_gradient(f, params: dict, eps: float = 1e-6) -> dict:
    """Central finite differences (f(w + eps) - f(w - eps)) / (2 eps), entry by entry.

    Args:
        f: a function of a params dict returning a float.
        params: dict of arrays; never modified (each nudge is made on a copy).
        eps: the nudge.

    Returns:
        dict with the keys and shapes of `params`: the estimated gradient.
    """
    grads = {}
    for name, w in params.items():
        w = np.asarray(w, dtype=np.float64)
        g = np.zeros_like(w)
        for idx in np.ndindex(w.shape):
            nudged = w.copy()
            nudged[idx] = w[idx] + eps
            up = f({**params, name: nudged})
            nudged[idx] = w[idx] - eps
            down = f({**params, name: nudged})
            g[idx] = (up - down) / (2 * eps)
        grads[name] = g
    return grads


def relative_difference(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| / max(max |a|, max |b|): how far apart two estimates are, neither taken as exact (an analytic
    and a numerical gradient); 0 when equal, about 1e-8 or less for a correct gradient. Against an exact value,
    `precision.relative_error` divides by the exact one's size alone."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    denom = max(np.abs(a).max(), np.abs(b).max())
    return float(np.abs(a - b).max() / denom) if denom > 0 else 0.0


def gradient_check(params: dict, batch: Batch, eps: float = 1e-6, scale: float | None = None) -> dict:
    """Compare the hand-written gradients with finite differences.

    Returns:
        {name: relative_difference(analytic, numerical)} for each matrix.
    """
    _, analytic, _ = loss_and_grads(params, batch, scale)
    numeric = numerical_gradient(lambda p: loss_fn(p, batch, scale), params, eps)
    return {name: relative_difference(analytic[name], numeric[name]) for name in PARAM_NAMES}


def sgd_step(params: dict, grads: dict, lr: float) -> dict:
    """Plain gradient descent: w - lr * grad, as new arrays."""
    return {name: params[name] - lr * grads[name] for name in PARAM_NAMES}


def adam_step(params: dict, grads: dict, state: dict | None, lr: float,
              betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> tuple[dict, dict]:
    """One Adam update (Kingma and Ba, 2015), returning new params and new state.

    Adam divides each entry's step by a running estimate of that entry's
    gradient size, so every matrix moves at about `lr` per step at first.
    Pass `state=None` on the first step. Every entry of `params` is updated
    (W_q, W_k, W_v here; the norms' gains too in book/todays_models.ipynb).
    """
    b1, b2 = betas
    names = tuple(params)
    if state is None:
        state = {"t": 0, "m": {n: np.zeros_like(params[n]) for n in names},
                 "v": {n: np.zeros_like(params[n]) for n in names}}
    t = state["t"] + 1
    m = {n: b1 * state["m"][n] + (1 - b1) * grads[n] for n in names}  # running mean of the gradient
    v = {n: b2 * state["v"][n] + (1 - b2) * grads[n] ** 2 for n in names}  # running mean of its square
    new = {
        n: params[n] - lr * (m[n] / (1 - b1**t)) / (np.sqrt(v[n] / (1 - b2**t)) + eps)
        for n in names
    }
    return new, {"t": t, "m": m, "v": v}


@dataclass(frozen=True)
class TrainingRun:
    """What `train` returns: the loss curve and snapshots of the attention."""

    task: ToyTask
    """The task trained on."""
    losses: np.ndarray
    """(steps,) the training loss of each step's batch, before its update."""
    snapshot_steps: tuple[int, ...]
    """The steps at which the evaluation batch was run (0 = before training)."""
    weights: np.ndarray
    """(len(snapshot_steps), B_eval, n) the query's attention over the evaluation batch."""
    eval_losses: np.ndarray
    """(len(snapshot_steps),) the loss on the evaluation batch at each snapshot."""
    eval_batch: Batch
    """The fixed evaluation batch (never trained on)."""
    params: dict
    """The learned matrices at the end."""
    initial_params: dict
    """The matrices before training."""

    @property
    def target_weight(self) -> np.ndarray:
        """(len(snapshot_steps),) mean weight the query puts on the matching token."""
        b = np.arange(self.weights.shape[1])
        return self.weights[:, b, self.eval_batch.target].mean(axis=-1)

    @property
    def accuracy(self) -> np.ndarray:
        """(len(snapshot_steps),) fraction of sequences whose largest weight is on the matching token."""
        return (self.weights.argmax(axis=-1) == self.eval_batch.target).mean(axis=-1)


def train(
    task: ToyTask = ToyTask(),
    *,
    d_k: int = 8,
    steps: int = 400,
    batch_size: int = 64,
    lr: float = 0.02,
    optimizer: str = "adam",
    seed: int = 0,
    snapshot_steps=(0, 25, 50, 100, 200, 400),
    eval_size: int = 256,
    scale: float | None = None,
    init_std: float | None = None,
) -> TrainingRun:
    """Train one attention layer on `task`; deterministic for a given seed.

    Each step draws a fresh batch, so the layer cannot memorise examples: it
    has to learn the rule. The evaluation batch is drawn first and never
    trained on.

    Args:
        task: the toy task.
        d_k: width of the queries and keys.
        steps: number of updates.
        batch_size: sequences per update.
        lr: learning rate.
        optimizer: "adam" or "sgd".
        seed: seeds the one generator used for data and initialisation.
        snapshot_steps: steps (0..steps) after which to record the attention
            on the evaluation batch; step s means "after s updates".
        eval_size: sequences in the evaluation batch.
        scale: score scale; 1/sqrt(d_k) by default.
        init_std: standard deviation of the starting matrices (see `init_params`).

    Returns:
        A TrainingRun.
    """
    steps = positive_int(steps, "steps")
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not 0 < lr < np.inf:
        raise ValueError(f"lr must be a positive finite number; got {lr!r}")
    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"optimizer must be 'adam' or 'sgd'; got {optimizer!r}")
    snaps = tuple(sorted(set(int(s) for s in snapshot_steps)))
    if not snaps or snaps[0] < 0 or snaps[-1] > steps:
        raise ValueError(f"snapshot_steps must lie in 0..steps={steps}; got {tuple(snapshot_steps)}")
    rng = np.random.default_rng(seed)
    eval_batch = task.sample(eval_size, rng)
    params = init_params(task, d_k, rng, init_std)
    initial = params
    state = None
    losses = np.empty(steps)
    weights, eval_losses = [], []

    def snapshot(p):
        f = forward(p, eval_batch.x, scale)
        weights.append(f["weights"])
        eval_losses.append(float(np.mean(np.sum((f["output"] - eval_batch.y) ** 2, axis=-1))))

    if snaps[0] == 0:
        snapshot(params)
    for step in range(1, steps + 1):
        loss, grads, _ = loss_and_grads(params, task.sample(batch_size, rng), scale)
        losses[step - 1] = loss
        if optimizer == "adam":
            params, state = adam_step(params, grads, state, lr)
        else:
            params = sgd_step(params, grads, lr)
        if step in snaps:
            snapshot(params)
    return TrainingRun(
        task=task, losses=losses, snapshot_steps=snaps, weights=np.stack(weights),
        eval_losses=np.array(eval_losses), eval_batch=eval_batch, params=params, initial_params=initial,
    )
