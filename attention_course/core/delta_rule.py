"""The gated delta rule: attention that keeps a state instead of scores (Gated DeltaNet, Kimi Delta Attention).

Each head keeps a d_k x d_v memory S. At token t it decays what it holds,
erases what it held for the key k_t and writes the value v_t there, then
reads the memory with the query q_t:

    S_t = (I - b_t k_t k_t^T) A_t S_{t-1} + b_t k_t v_t^T,      o_t = S_t^T q_t

with A_t = diag(exp(g_t)): the decay exp(g_t) in (0, 1] is one number per
head and token (Gated DeltaNet: Qwen3-Next, Qwen3.5, OLMo hybrid) or one per
key channel (Kimi Delta Attention); b_t in [0, 2] is how strongly the token
overwrites (b = 1 replaces the old value for a unit key; 2 reflects it).
Equivalently, the token writes the correction u_t = b_t (v_t - (A_t S_{t-1})^T k_t):
the value minus what the memory already returns for k_t, hence "delta".

The same numbers come two ways: `gated_delta_rule` walks the tokens one at
a time (`delta_rule_step`, what decoding does), `chunked_gated_delta_rule`
takes a chunk of C tokens at once with matrix products, solving a small
triangular system for the corrections, and carries the state only between
chunks (what a prefill does). Neither holds an n x n matrix: the state's size
does not grow with n.

The queries are scaled by 1/sqrt(d_k) (`scale`), as transformers does; the
L2 normalisation of queries and keys (`l2_normalize`) is the caller's.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, check_scale, in_compute_dtype, positive_int, require_ndim


def l2_normalize(x, eps: float = 1e-6) -> np.ndarray:
    """(..., d) -> (..., d): x / sqrt(sum(x^2) + eps), each vector of unit length (a zero vector stays zero)."""
    arr = as_float_array(x, "x")
    (work,), out_dtype = in_compute_dtype(arr)
    return (work / np.sqrt(np.sum(work * work, axis=-1, keepdims=True) + eps)).astype(out_dtype, copy=False)


def _check_inputs(query, key, value, g, beta, initial_state):
    """The arrays in their compute dtype, the result dtype and the gate as (..., h, n, d_k) or (..., h, n, 1)."""
    q = as_float_array(query, "query")
    k = as_float_array(key, "key")
    v = as_float_array(value, "value")
    require_ndim(q, "query", 3, "(..., h, n, d_k)")
    require_ndim(v, "value", 3, "(..., h, n, d_v)")
    if k.shape != q.shape:
        raise ValueError(f"key must have query's shape (..., h, n, d_k) = {q.shape}; got shape {k.shape}")
    if v.shape[:-1] != q.shape[:-1]:
        raise ValueError(f"value must have shape (..., h, n, d_v) with (..., h, n) = {q.shape[:-1]} "
                         f"as query; got shape {v.shape}")
    b = as_float_array(beta, "beta")
    if b.shape != q.shape[:-1]:
        raise ValueError(f"beta must have shape (..., h, n) = {q.shape[:-1]}; got shape {b.shape}")
    if np.any(b < 0) or np.any(b > 2):
        raise ValueError("beta must lie in [0, 2] (0: no write, 1: overwrite, 2: reflect); "
                         f"got values from {b.min()} to {b.max()}")
    gate = as_float_array(g, "g")
    if gate.shape == q.shape[:-1]:
        gate = gate[..., None]  # (..., h, n) -> (..., h, n, 1): one decay per head and token
    elif gate.shape != q.shape:
        raise ValueError(f"g must have shape (..., h, n) = {q.shape[:-1]} (one decay per head and token) or "
                         f"(..., h, n, d_k) = {q.shape} (one per key channel); got shape {gate.shape}")
    if np.any(gate > 0):
        raise ValueError(f"g is the log of the decay and must be <= 0; got a maximum of {gate.max()}")
    arrays = [q, k, v, gate, b]
    if initial_state is not None:
        s = as_float_array(initial_state, "initial_state")
        want = q.shape[:-2] + (q.shape[-1], v.shape[-1])
        if s.shape != want:
            raise ValueError(f"initial_state must have shape (..., h, d_k, d_v) = {want}; got shape {s.shape}")
        arrays.append(s)
    work, out_dtype = in_compute_dtype(*arrays)
    state = work[5] if initial_state is not None else np.zeros(q.shape[:-2] + (q.shape[-1], v.shape[-1]), work[0].dtype)
    return work[0], work[1], work[2], work[3], work[4], state, out_dtype


def delta_rule_step(state, q, k, v, g, beta):
    """One token: (o (..., h, d_v), the new state (..., h, d_k, d_v)).

    Args:
        state: (..., h, d_k, d_v) the memory before the token.
        q, k: (..., h, d_k) the token's query (already scaled) and key.
        v: (..., h, d_v) its value.
        g: (..., h) or (..., h, d_k) the log of the decay, <= 0.
        beta: (..., h) the write strength, in [0, 2].
    """
    g = np.asarray(g)
    decay = np.exp(g)[..., None] if g.shape == k.shape else np.exp(g)[..., None, None]  # (..., h, d_k|1, 1)
    decayed = decay * state  # (..., h, d_k, d_v)
    held = np.einsum("...kv,...k->...v", decayed, k)  # (..., h, d_k, d_v) x (..., h, d_k) -> (..., h, d_v): S^T k
    correction = beta[..., None] * (v - held)  # (..., h, d_v): u = b (v - S^T k)
    new_state = decayed + k[..., :, None] * correction[..., None, :]  # (..., h, d_k, 1) x (..., h, 1, d_v): k u^T
    o = np.einsum("...kv,...k->...v", new_state, q)  # (..., h, d_k, d_v) x (..., h, d_k) -> (..., h, d_v): S^T q
    return o, new_state


def gated_delta_rule(query, key, value, g, beta, initial_state=None, scale=None):
    """The gated delta rule token by token: (output (..., h, n, d_v), final state (..., h, d_k, d_v)).

    Args:
        query, key: (..., h, n, d_k); value: (..., h, n, d_v).
        g: (..., h, n) the log of each token's decay per head (Gated DeltaNet),
            or (..., h, n, d_k) one per key channel (Kimi Delta Attention); <= 0.
        beta: (..., h, n) each token's write strength, in [0, 2].
        initial_state: None (zeros) or (..., h, d_k, d_v), the state before the first token.
        scale: multiplies the queries; defaults to 1/sqrt(d_k).

    Returns:
        o_t = S_t^T q_t for every token, and S_n. float16 and bfloat16 are
        computed in float32 and returned in their dtype.
    """
    q, k, v, gate, b, state, out_dtype = _check_inputs(query, key, value, g, beta, initial_state)
    q = q * check_scale(scale, q.shape[-1])
    out = np.empty(v.shape, q.dtype)  # (..., h, n, d_v)
    for t in range(q.shape[-2]):
        g_t = gate[..., t, :] if gate.shape[-1] > 1 else gate[..., t, 0]  # (..., h, d_k) or (..., h)
        out[..., t, :], state = delta_rule_step(state, q[..., t, :], k[..., t, :], v[..., t, :], g_t, b[..., t])
    return out.astype(out_dtype, copy=False), state.astype(out_dtype, copy=False)


def chunked_gated_delta_rule(query, key, value, g, beta, chunk_size: int = 64, initial_state=None, scale=None):
    """The gated delta rule chunk by chunk: the same (output, final state) as `gated_delta_rule`.

    Inside a chunk of C tokens, with G_t the running sum of g from the
    chunk's start, S_0 the state before it and Γ_{t,j} = diag(exp(G_t - G_j)):

        (I + L) U = B V - B exp(G) K S_0    L_tj = b_t k_t^T Γ_{t,j} k_j for j < t  (corrections U, C x d_v)
        O = exp(G) Q S_0 + M U              M_tj = q_t^T Γ_{t,j} k_j for j <= t
        S_C = exp(G_C) S_0 + sum_j (exp(G_C - G_j) k_j) u_j^T

    Args:
        query, key, value, g, beta, initial_state, scale: as `gated_delta_rule`.
        chunk_size: C, the tokens taken at once; the last chunk may be shorter.
    """
    q, k, v, gate, b, state, out_dtype = _check_inputs(query, key, value, g, beta, initial_state)
    c = positive_int(chunk_size, "chunk_size")
    q = q * check_scale(scale, q.shape[-1])
    out = np.empty(v.shape, q.dtype)  # (..., h, n, d_v)
    for start in range(0, q.shape[-2], c):
        part = slice(start, start + c)
        q_c, k_c, v_c, b_c = q[..., part, :], k[..., part, :], v[..., part, :], b[..., part]
        cum = np.cumsum(gate[..., part, :], axis=-2)  # (..., h, C, d_k|1): G_t, the log decay since the chunk began
        size = q_c.shape[-2]
        # exp(G_t - G_j) for j <= t, 0 above the diagonal (its exponent could overflow there).
        gap = cum[..., :, None, :] - cum[..., None, :, :]  # (..., h, C, C, d_k|1)
        lower = np.tril(np.ones((size, size), dtype=bool))[..., None]  # (C, C, 1)
        pair_decay = np.exp(np.where(lower, gap, -np.inf))  # (..., h, C, C, d_k|1)
        kk = (k_c[..., :, None, :] * pair_decay * k_c[..., None, :, :]).sum(-1)  # (..., h, C, C): k_t^T Γ_tj k_j
        qk = (q_c[..., :, None, :] * pair_decay * k_c[..., None, :, :]).sum(-1)  # (..., h, C, C): q_t^T Γ_tj k_j
        strict = np.tril(np.ones((size, size), dtype=bool), -1)  # (C, C) j < t
        system = np.eye(size, dtype=q.dtype) + np.where(strict, b_c[..., :, None] * kk, 0.0)  # (..., h, C, C): I + L
        decayed_k = np.exp(cum) * k_c  # (..., h, C, d_k): exp(G_t) k_t
        rhs = b_c[..., None] * (v_c - decayed_k @ state)  # (..., h, C, d_k) x (..., h, d_k, d_v) -> (..., h, C, d_v)
        corrections = np.linalg.solve(system, rhs)  # (..., h, C, C) \ (..., h, C, d_v) -> (..., h, C, d_v): U
        read = (np.exp(cum) * q_c) @ state  # (..., h, C, d_k) x (..., h, d_k, d_v) -> (..., h, C, d_v)
        out[..., part, :] = read + qk @ corrections  # (..., h, C, C) x (..., h, C, d_v) -> (..., h, C, d_v)
        last = cum[..., -1:, :]  # (..., h, 1, d_k|1): G_C
        to_end = np.exp(last - cum) * k_c  # (..., h, C, d_k): exp(G_C - G_j) k_j
        state = np.swapaxes(np.exp(last), -1, -2) * state + np.swapaxes(to_end, -1, -2) @ corrections
        # (..., h, d_k|1, 1) * (..., h, d_k, d_v) + (..., h, d_k, C) x (..., h, C, d_v) -> (..., h, d_k, d_v)
    return out.astype(out_dtype, copy=False), state.astype(out_dtype, copy=False)
