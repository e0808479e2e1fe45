"""Tests for attention_course/core/positions.py (sinusoidal positions, RoPE and ALiBi)
and for the positions chapter's measurements, attention_course/chapters/positions.py.

Each is checked against a loop over the paper's formula (tests/reference.py)
and, where transformers is installed (the `[torch]` extra), against Hugging
Face's own code: `apply_rotary_pos_emb` with `LlamaRotaryEmbedding` of a tiny
random Llama, and the ALiBi of a tiny random BLOOM model. No download.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_course import (
    alibi_bias,
    alibi_slopes,
    apply_rope,
    attention_weights,
    causal_mask,
    rope_frequencies,
    sinusoidal_positions,
    softmax,
)
from attention_course.chapters import ROPE_MODELS, rope_decay, rope_wavelengths, slow_pairs
from reference import alibi_slopes_paper, rope_vector, sinusoidal_table


def rope_loop(x, positions, base=10000.0, interleaved=False) -> np.ndarray:
    """rope_vector over the last two axes of x: (..., n, d) with positions (n,)."""
    x = np.asarray(x, dtype=np.float64)
    flat = x.reshape(-1, *x.shape[-2:])
    out = np.array([[rope_vector(row, int(p), base, interleaved) for row, p in zip(block, positions)] for block in flat])
    return out.reshape(x.shape)


# --- sinusoidal positions -------------------------------------------------------------

@pytest.mark.parametrize(("n", "d", "base"), [(1, 1, 10000.0), (7, 4, 10000.0), (50, 16, 10000.0), (9, 5, 100.0)])
def test_sinusoidal_positions_is_the_papers_table(n, d, base):
    got = sinusoidal_positions(n, d, base)
    assert got.shape == (n, d) and got.dtype == np.float64
    np.testing.assert_allclose(got, sinusoidal_table(n, d, base), rtol=0, atol=1e-13)


def test_sinusoidal_dot_products_depend_on_the_distance_only():
    table = sinusoidal_positions(200, 32)  # (n, d)
    gram = table @ table.T  # (n, n): p_m . p_n
    for distance in (0, 1, 7, 150):
        diagonal = np.diagonal(gram, offset=distance)
        np.testing.assert_allclose(diagonal, diagonal[0], rtol=0, atol=1e-12)
    # ... and equal the sum of cos(distance x frequency) over the pairs
    frequencies = 10000.0 ** (-np.arange(0, 32, 2) / 32)
    np.testing.assert_allclose(gram[0, 5], np.cos(5 * frequencies).sum(), atol=1e-12)


@pytest.mark.parametrize(("args", "match"), [((0, 4), "n"), ((3, 0), "d"), ((3, 2.5), "d"), ((3, 4, 0.0), "base"),
                                             ((3, 4, -2.0), "base"), ((3, 4, math.inf), "base"), ((3, 4, "10000"), "base"),
                                             ((3, 4, True), "base")])
def test_sinusoidal_positions_rejects_bad_input(args, match):
    with pytest.raises((TypeError, ValueError), match=match):
        sinusoidal_positions(*args)


# --- RoPE --------------------------------------------------------------------------------

def test_rope_frequencies_are_base_to_the_minus_2i_over_d():
    got = rope_frequencies(8, 10000.0)
    assert got.shape == (4,) and got[0] == 1.0
    np.testing.assert_allclose(got, [1.0, 0.1, 0.01, 0.001], rtol=1e-15)
    assert (np.diff(rope_frequencies(128, 500000.0)) < 0).all()
    np.testing.assert_allclose(rope_frequencies(128, 500000.0)[-1], 500000.0 ** (-126 / 128), rtol=1e-15)


@pytest.mark.parametrize(("d", "base", "error", "match"), [
    (5, 10000.0, ValueError, "even"), (0, 10000.0, ValueError, "positive"), (4, 0, ValueError, "base"),
    (4, -1.0, ValueError, "base"), (4, np.nan, ValueError, "base"), (4, None, TypeError, "base"),
])
def test_rope_frequencies_rejects_bad_input(d, base, error, match):
    with pytest.raises(error, match=match):
        rope_frequencies(d, base)


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize(("shape", "positions", "base"), [
    ((4, 4), [0, 1, 2, 3], 10000.0),
    ((2, 3, 5, 8), [300, 301, 302, 303, 304], 10000.0),  # a continuation at position 300
    ((1, 6), [977], 500000.0),
    ((3, 7, 16), [0, 5, 1, 999, 2, 40, 3], 1e6),  # any order: positions are labels, not a range
    ((2, 2), [-3, 4], 10.0),
])
def test_apply_rope_is_the_formula_in_float64(shape, positions, base, interleaved):
    x = np.random.default_rng(0).standard_normal(shape)
    got = apply_rope(x, positions, base, interleaved=interleaved)
    assert got.shape == x.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, rope_loop(x, positions, base, interleaved), rtol=0, atol=1e-12)


def test_default_positions_are_0_to_n_minus_1():
    x = np.random.default_rng(1).standard_normal((3, 6, 8))
    np.testing.assert_array_equal(apply_rope(x), apply_rope(x, np.arange(6)))
    np.testing.assert_array_equal(apply_rope(x, [0] * 6), x)  # position 0: no rotation at all


finite = st.floats(-10, 10, allow_nan=False, width=64)
positions = st.integers(-5000, 5000)


@settings(max_examples=200, deadline=None)
@given(half=st.integers(1, 16), m=positions, n=positions, shift=positions, interleaved=st.booleans(),
       base=st.sampled_from([100.0, 10000.0, 500000.0, 1e6]), seed=st.integers(0, 2**32 - 1))
def test_the_score_depends_on_m_minus_n_only(half, m, n, shift, interleaved, base, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, 1, 2 * half))  # one query, one key, d = 2 * half

    def score(at_m, at_n):
        return (apply_rope(q, [at_m], base, interleaved) @ apply_rope(k, [at_n], base, interleaved).T).item()

    # |angle| <= 1e4 rad is rounded to about 1e4 * 2^-53 ~ 1e-12, hence the tolerance.
    scale = np.linalg.norm(q) * np.linalg.norm(k)
    assert math.isclose(score(m, n), score(m + shift, n + shift), rel_tol=0, abs_tol=1e-11 * scale)
    # ... and it is the score of the query at m - n against the key at 0.
    assert math.isclose(score(m, n), score(m - n, 0), rel_tol=0, abs_tol=1e-11 * scale)


@settings(max_examples=150, deadline=None)
@given(shape=st.tuples(st.integers(1, 3), st.integers(1, 7), st.integers(1, 8)), seed=st.integers(0, 2**32 - 1),
       interleaved=st.booleans(), offset=st.integers(-10_000, 10_000))
def test_rotating_by_minus_the_positions_gives_x_back_and_keeps_lengths(shape, seed, interleaved, offset):
    h, n, half = shape
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((h, n, 2 * half)) * 3
    pos = offset + rng.integers(0, 1000, size=n)
    rotated = apply_rope(x, pos, interleaved=interleaved)
    np.testing.assert_allclose(np.linalg.norm(rotated, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-13)
    np.testing.assert_allclose(apply_rope(rotated, -pos, interleaved=interleaved), x, rtol=0, atol=1e-11)


def test_the_two_conventions_are_the_same_rotation_of_permuted_coordinates():
    rng = np.random.default_rng(2)
    d = 10
    x = rng.standard_normal((4, 7, d))
    pos = rng.integers(0, 500, size=7)
    # Half-layout coordinates i and i + d/2 become the interleaved coordinates 2i and 2i + 1.
    to_interleaved = np.ravel(np.column_stack([np.arange(d // 2), np.arange(d // 2) + d // 2]))
    half = apply_rope(x, pos)
    interleaved = apply_rope(x[..., to_interleaved], pos, interleaved=True)
    np.testing.assert_allclose(interleaved, half[..., to_interleaved], rtol=0, atol=1e-13)
    assert not np.allclose(apply_rope(x, pos, interleaved=True), half)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_the_float_dtype_is_kept_and_the_input_untouched(dtype):
    x = np.random.default_rng(3).standard_normal((2, 5, 8)).astype(dtype)
    before = x.copy()
    x.flags.writeable = False  # writing into it would raise
    got = apply_rope(x, np.arange(300, 305))
    assert got.dtype == dtype and got is not x
    np.testing.assert_array_equal(x, before)
    tolerance = {np.float16: 4e-3, np.float32: 2e-6, np.float64: 1e-12}[dtype]
    np.testing.assert_allclose(got, rope_loop(before, range(300, 305)), rtol=0, atol=tolerance * 4)


def test_integer_input_becomes_float64():
    got = apply_rope(np.array([[1, 0], [0, 1]]), [0, 1])
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, [[1, 0], [-math.sin(1), math.cos(1)]], atol=1e-15)


def test_each_sequence_of_a_batch_may_have_its_own_positions():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 4, 6))  # (B, h, n, d)
    pos = np.array([[0, 1, 2, 3], [10, 11, 12, 13]])  # (B, n), e.g. after caches of 0 and 10 tokens
    got = apply_rope(x, pos[:, None, :])  # (B, 1, n) broadcasts over the heads
    for b in range(2):
        np.testing.assert_array_equal(got[b], apply_rope(x[b], pos[b]))


@pytest.mark.parametrize(("x", "positions", "kwargs", "error", "match"), [
    (np.ones((3, 5)), None, {}, ValueError, r"even last axis.*\(3, 5\)"),
    (np.ones(4), None, {}, ValueError, r"\(\.\.\., n, d\).*x\[None, :\]"),
    (np.ones((3, 4)), [0, 1], {}, ValueError, r"positions must have shape \(n,\) = \(3,\).*got shape \(2,\)"),
    (np.ones((3, 4)), [0.0, 1.0, 2.0], {}, TypeError, "positions must be integers.*float64"),
    (np.ones((3, 4)), [True, False, True], {}, TypeError, "positions must be integers.*bool"),
    (np.ones((2, 3, 4)), np.zeros((5, 3), int), {}, ValueError, r"do not broadcast to x's leading axes \(2, 3\)"),
    (np.ones((3, 4)), None, {"base": 0.0}, ValueError, "base"),
    (np.ones((3, 4)), None, {"base": "big"}, TypeError, "base"),
    (np.ones((3, 4)), None, {"interleaved": "yes"}, TypeError, "interleaved"),
    (np.array([["a", "b"]]), None, {}, TypeError, "x must hold real numbers"),
])
def test_apply_rope_rejects_bad_input_naming_the_argument(x, positions, kwargs, error, match):
    with pytest.raises(error, match=match):
        apply_rope(x, positions, **kwargs)


def test_scores_decay_with_distance_on_average():
    d = 128
    q = np.ones((1, d))
    rotated = apply_rope(np.repeat(q, 4096, axis=0), np.arange(4096))  # the same vector at every position
    scores = rotated @ q[0] / d  # (4096,) q at position t against q at 0, 1 at distance 0
    assert scores[0] == pytest.approx(1.0)
    windows = [np.abs(scores[lo:hi]).mean() for lo, hi in ((0, 16), (16, 256), (256, 4096))]
    assert windows[0] > windows[1] > windows[2]


# --- ALiBi ---------------------------------------------------------------------------------

@pytest.mark.parametrize("h", [1, 2, 3, 5, 6, 8, 12, 16, 20, 32, 40, 64, 96])
def test_alibi_slopes_are_the_papers(h):
    got = alibi_slopes(h)
    assert got.shape == (h,)
    np.testing.assert_allclose(got, alibi_slopes_paper(h), rtol=1e-14)  # the paper multiplies step by step


def test_eight_heads_have_slopes_one_half_to_one_256th():
    np.testing.assert_array_equal(alibi_slopes(8), 0.5 ** np.arange(1, 9))
    assert alibi_slopes(12)[8:].tolist() == (2.0 ** -np.array([0.5, 1.5, 2.5, 3.5])).tolist()


def test_alibi_bias_is_minus_slope_times_distance():
    bias = alibi_bias(4, 5)
    slopes = alibi_slopes(4)
    assert bias.shape == (4, 5, 5) and bias.dtype == np.float64
    for h in range(4):
        for i in range(5):
            for j in range(5):
                assert bias[h, i, j] == -slopes[h] * abs(i - j)


def test_alibi_queries_after_a_cache_are_the_last_rows():
    full = alibi_bias(6, 9)
    np.testing.assert_array_equal(alibi_bias(6, 1, 9), full[:, -1:, :])  # one new token after 8 cached ones
    np.testing.assert_array_equal(alibi_bias(6, 3, 9), full[:, -3:, :])


def test_alibi_bias_is_a_float_mask_for_attention():
    rng = np.random.default_rng(5)
    h, n, d = 3, 6, 4
    q, k = rng.standard_normal((2, h, n, d))
    causal = np.where(causal_mask(n), 0.0, -np.inf)  # (n, n) the causal mask as a float mask
    got = attention_weights(q, k, attn_mask=alibi_bias(h, n) + causal)
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d) - alibi_slopes(h)[:, None, None] * (
        np.arange(n)[:, None] - np.arange(n)[None, :])  # the paper's -m (i - j)
    np.testing.assert_allclose(got, softmax(scores + causal), rtol=1e-13, atol=1e-15)
    assert (got[:, ~causal_mask(n)] == 0).all()


@pytest.mark.parametrize(("args", "error", "match"), [
    ((0,), ValueError, "n_heads"), ((2.0,), TypeError, "n_heads"), ((True,), TypeError, "n_heads"),
])
def test_alibi_slopes_rejects_bad_head_counts(args, error, match):
    with pytest.raises(error, match=match):
        alibi_slopes(*args)


@pytest.mark.parametrize(("args", "match"), [((0, 3), "n_heads"), ((2, 0), "n_q"), ((2, 3, 0), "n_k"), ((2, 3, 1.5), "n_k")])
def test_alibi_bias_rejects_bad_sizes(args, match):
    with pytest.raises((TypeError, ValueError), match=match):
        alibi_bias(*args)


# --- the chapter's measurements ----------------------------------------------------------

def test_rope_decay_measures_the_mean_cosine_of_the_angles():
    distances = np.array([0, 1, 5, 50, 500, 5000])
    measured, expected = rope_decay(distances, 64, 10000.0, n_samples=2000, seed=3)
    assert measured[0] == pytest.approx(1.0) and expected[0] == 1.0
    np.testing.assert_allclose(expected, np.cos(np.outer(distances, rope_frequencies(64))).mean(axis=1))
    np.testing.assert_allclose(measured, expected, rtol=0, atol=0.03)  # 2000 samples: a few standard errors
    assert measured[1] > measured[3] > abs(measured[5])
    with pytest.raises(ValueError, match="distances"):
        rope_decay(np.array([1.5]), 64)


def test_wavelengths_and_the_pairs_slower_than_a_context():
    waves = rope_wavelengths(8, 10000.0)
    np.testing.assert_allclose(waves, 2 * np.pi * np.array([1, 10, 100, 1000]))
    assert slow_pairs(8, 10000.0, 100) == 2  # 628 and 6283 tokens per turn
    assert slow_pairs(8, 10000.0, 10_000) == 0
    with pytest.raises(ValueError, match="context"):
        slow_pairs(8, 10000.0, 0)


def test_the_cited_models_share_a_head_size_and_differ_in_base():
    assert {m.head_dim for m in ROPE_MODELS} == {128}
    assert [m.rope_theta for m in ROPE_MODELS] == sorted(m.rope_theta for m in ROPE_MODELS)
    assert all(m.source.startswith("https://huggingface.co/") and m.source.endswith("config.json") for m in ROPE_MODELS)


# --- against Hugging Face transformers (the [torch] extra) ---------------------------------

@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="torch is not installed: pip install -e '.[torch]' to cross-check")


@pytest.fixture(scope="module")
def transformers(torch):
    return pytest.importorskip("transformers", reason="transformers is not installed: pip install -e '.[torch]'")


def float32_angle_tolerance(x, positions) -> float:
    """How far a rotation with float32 angles may land from the float64 one.

    Hugging Face computes position x inv_freq in float32 (transformers 5 does so
    even for float64 inputs): an angle t is then off by up to about 2 ulps,
    2 t 2^-24, and each coordinate by as much times the size of the vector.
    """
    return float(np.abs(x).max()) * np.abs(positions).max() * 2.0**-22


def hf_rotary(transformers, torch, d, theta, legacy_config=False):
    """A LlamaRotaryEmbedding of a tiny random Llama configuration (no weights, no download)."""
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    rope = {"rope_theta": theta} if legacy_config else {"rope_parameters": {"rope_type": "default", "rope_theta": theta}}
    config = transformers.LlamaConfig(hidden_size=2 * d, num_attention_heads=2, head_dim=d, **rope)
    return LlamaRotaryEmbedding(config)


@pytest.mark.parametrize(("d", "theta", "start", "legacy"), [
    (8, 10000.0, 0, False), (64, 10000.0, 300, False), (128, 500000.0, 300, False),
    (128, 1e6, 700, False), (16, 10000.0, 300, True),  # a configuration with a top-level rope_theta, as before transformers 5
])
def test_apply_rope_equals_hugging_faces_apply_rotary_pos_emb(transformers, torch, d, theta, start, legacy):
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    rng = np.random.default_rng(d)
    q, k = rng.standard_normal((2, 2, 3, 11, d))  # (B, h, n, d) each
    pos = np.arange(start, start + 11)
    cos, sin = hf_rotary(transformers, torch, d, theta, legacy)(torch.from_numpy(q), torch.from_numpy(pos)[None])
    q_hf, k_hf = (t.numpy() for t in apply_rotary_pos_emb(torch.from_numpy(q), torch.from_numpy(k), cos, sin))
    assert q_hf.dtype == np.float64  # Hugging Face's cos and sin were computed in float32, then cast
    np.testing.assert_allclose(apply_rope(q, pos, theta), q_hf, rtol=0, atol=float32_angle_tolerance(q, pos))
    np.testing.assert_allclose(apply_rope(k, pos, theta), k_hf, rtol=0, atol=float32_angle_tolerance(k, pos))
    # With Hugging Face's formula evaluated in float64 throughout, the two agree to rounding.
    inv_freq = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    freqs = torch.from_numpy(pos).double()[:, None] * inv_freq  # (n, d/2)
    emb = torch.cat((freqs, freqs), dim=-1)[None]  # (1, n, d)
    q64, _ = apply_rotary_pos_emb(torch.from_numpy(q), torch.from_numpy(k), emb.cos(), emb.sin())
    np.testing.assert_allclose(apply_rope(q, pos, theta), q64.numpy(), rtol=0, atol=1e-12)


def test_apply_rope_in_float32_stays_within_float32_rounding_of_hugging_face(transformers, torch):
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    d, theta = 64, 10000.0
    x = np.random.default_rng(7).standard_normal((1, 4, 9, d)).astype(np.float32)
    pos = np.arange(291, 300)
    t = torch.from_numpy(x)
    cos, sin = hf_rotary(transformers, torch, d, theta)(t, torch.from_numpy(pos)[None])
    q_hf, _ = apply_rotary_pos_emb(t, t, cos, sin)
    got = apply_rope(x, pos, theta)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, q_hf.numpy(), rtol=0, atol=float32_angle_tolerance(x, pos) + 1e-6)


def captured_inputs(module, torch):
    """Record the first positional (or `hidden_states`) argument of each call of `module`."""
    seen = []

    def hook(_module, args, kwargs):
        seen.append((args[0] if args else kwargs["hidden_states"]).detach().clone())

    return seen, module.register_forward_pre_hook(hook, with_kwargs=True)


def test_a_tiny_llama_attends_with_our_rope_at_positions_300_and_on(transformers, torch):
    """Grouped-query attention of a random one-layer Llama, queries and keys rotated by apply_rope."""
    torch.manual_seed(0)
    h, h_kv, d, theta = 4, 2, 8, 500000.0
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=h * d, intermediate_size=48, num_hidden_layers=1,
                                      num_attention_heads=h, num_key_value_heads=h_kv, head_dim=d, initializer_range=0.2,
                                      rope_parameters={"rope_type": "default", "rope_theta": theta})
    model = transformers.LlamaModel(config).double().eval()
    model.config._attn_implementation = "eager"  # so that the attention weights are returned
    attention = model.layers[0].self_attn
    seen, handle = captured_inputs(attention, torch)
    ids = torch.tensor([[5, 17, 3, 42, 8, 21, 9]])
    pos = np.arange(300, 307)
    with torch.no_grad():
        out = model(ids, position_ids=torch.from_numpy(pos)[None], output_attentions=True)
    handle.remove()
    x = seen[0][0].numpy()  # (n, d_model): the normalised hidden states the attention reads
    q = (x @ attention.q_proj.weight.detach().numpy().T).reshape(-1, h, d).transpose(1, 0, 2)  # (n, h*d) -> (h, n, d)
    k = (x @ attention.k_proj.weight.detach().numpy().T).reshape(-1, h_kv, d).transpose(1, 0, 2)  # (h_kv, n, d)
    k = np.repeat(k, h // h_kv, axis=0)  # (h, n, d): heads 0 and 1 share key head 0, ...
    ours = attention_weights(apply_rope(q, pos, theta), apply_rope(k, pos, theta), is_causal=True)  # (h, n, n)
    theirs = out.attentions[0][0].numpy()  # (h, n, n)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-5)  # float32 angles at positions ~300
    # Without the rotation the weights are clearly different: the test can fail.
    assert np.abs(attention_weights(q, k, is_causal=True) - theirs).max() > 1e-2


@pytest.mark.parametrize("h", [1, 2, 3, 5, 6, 8, 12, 16, 24, 40, 64])
def test_alibi_slopes_equal_blooms(transformers, torch, h):
    from transformers.models.bloom.modeling_bloom import _get_alibi_slopes

    theirs = _get_alibi_slopes(h, torch.device("cpu")).double().numpy()  # computed in float32
    np.testing.assert_allclose(alibi_slopes(h), theirs, rtol=2e-6)  # float32 powers of a float32 base


@pytest.mark.parametrize("h", [4, 6, 12])
def test_alibi_bias_differs_from_blooms_by_a_constant_in_each_row(transformers, torch, h):
    """BLOOM adds slope x j; ours is -slope x (i - j). A row constant changes no softmax."""
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    n = 9
    theirs = build_alibi_tensor(torch.ones(1, n, dtype=torch.long), h, torch.float64).numpy()  # (h, 1, n)
    difference = alibi_bias(h, n) - theirs  # (h, n, n)
    allowed = causal_mask(n)
    for head in range(h):
        for i in range(n):
            row = difference[head, i, allowed[i]]
            np.testing.assert_allclose(row, row[0], rtol=0, atol=1e-6)  # constant along the keys a query sees
            np.testing.assert_allclose(row[0], -alibi_slopes(h)[head] * i, rtol=1e-6)


@pytest.mark.parametrize("h", [6, 8])  # 6 heads: the rule for a head count that is not a power of two
def test_a_tiny_bloom_attends_with_our_alibi_bias(transformers, torch, h):
    torch.manual_seed(1)
    d = 4
    config = transformers.BloomConfig(vocab_size=64, hidden_size=h * d, n_head=h, n_layer=1)
    model = transformers.BloomModel(config).double().eval()
    attention = model.h[0].self_attention
    seen, handle = captured_inputs(attention, torch)
    ids = torch.tensor([[3, 14, 15, 9, 26, 5, 35, 8]])
    with torch.no_grad():
        out = model(ids, output_attentions=True)
    handle.remove()
    x = seen[0][0].numpy()  # (n, d_model)
    fused = x @ attention.query_key_value.weight.detach().numpy().T + attention.query_key_value.bias.detach().numpy()  # (n, 3 h d)
    fused = fused.reshape(-1, h, 3, d)  # BLOOM's layout: (n, h, [q, k, v], d)
    q, k = fused[:, :, 0].transpose(1, 0, 2), fused[:, :, 1].transpose(1, 0, 2)  # (h, n, d) each
    n = ids.shape[1]
    causal = np.where(causal_mask(n), 0.0, -np.inf)  # (n, n): the causal mask as a float mask
    ours = attention_weights(q, k, attn_mask=alibi_bias(h, n) + causal)  # (h, n, n)
    theirs = out.attentions[0][0].numpy()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)  # BLOOM's slopes are float32
    assert np.abs(attention_weights(q, k, attn_mask=causal) - theirs).max() > 1e-3  # ALiBi made a difference


def test_partial_rope_rotates_the_first_coordinates_and_passes_the_rest():
    """rotary_dim r: the first r coordinates are RoPE of width r, the other d - r come back unchanged."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 12))  # (h, n, d)
    positions = np.arange(5) + 7
    for interleaved in (False, True):
        out = apply_rope(x, positions, base=500.0, interleaved=interleaved, rotary_dim=4)
        np.testing.assert_array_equal(out[..., 4:], x[..., 4:])
        np.testing.assert_allclose(out[..., :4], apply_rope(x[..., :4], positions, base=500.0, interleaved=interleaved),
                                   rtol=0, atol=1e-15)
    np.testing.assert_array_equal(apply_rope(x, positions, rotary_dim=12), apply_rope(x, positions))


@pytest.mark.parametrize("rotary_dim", [0, 3, 14, 2.0, True])
def test_partial_rope_refuses_a_rotary_dim_that_pairs_nothing(rotary_dim):
    with pytest.raises((ValueError, TypeError), match="rotary_dim"):
        apply_rope(np.ones((3, 12)), rotary_dim=rotary_dim)


def test_partial_rope_equals_transformers_apply_rotary_pos_emb():
    """Qwen3-Next's apply_rotary_pos_emb rotates cos.shape[-1] coordinates, its inv_freq from head_dim x 0.25."""
    torch = pytest.importorskip("torch", reason="torch is not installed: pip install -e '.[torch]'")
    qwen3_next = pytest.importorskip("transformers.models.qwen3_next.modeling_qwen3_next",
                                     reason="transformers is not installed: pip install -e '.[torch]'")
    rng = np.random.default_rng(4)
    d, r, n, base = 32, 8, 6, 10000.0
    q, k = rng.standard_normal((2, 1, 3, n, d))  # (B, h, n, d)
    inv_freq = 1.0 / base ** (np.arange(0, r, 2) / r)  # (r/2,)
    angles = np.arange(n)[:, None] * inv_freq  # (n, r/2)
    emb = np.concatenate([angles, angles], axis=-1)[None]  # (1, n, r)
    q_t, k_t = qwen3_next.apply_rotary_pos_emb(torch.tensor(q), torch.tensor(k), torch.tensor(np.cos(emb)),
                                               torch.tensor(np.sin(emb)))
    np.testing.assert_allclose(apply_rope(q, np.arange(n), base=base, rotary_dim=r), q_t.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(apply_rope(k, np.arange(n), base=base, rotary_dim=r), k_t.numpy(), rtol=0, atol=1e-12)
