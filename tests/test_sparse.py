"""Tests for attention_course/core/sparse.py: the lightning indexer, each query's top-k keys, attention over them."""

import numpy as np
import pytest

from attention_course.core import causal_mask, scaled_dot_product_attention
from attention_course.core.sparse import indexer_scores, sparse_attention, top_k_mask


def _loop_indexer_scores(q, k, w, scale):
    """I[t, s] = sum_h w[t, h] relu(scale q[h, t] . k[s]), one number at a time."""
    h_i, n_q, _ = q.shape
    out = np.zeros((n_q, k.shape[0]))
    for t in range(n_q):
        for s in range(k.shape[0]):
            out[t, s] = sum(w[t, h] * max(scale * float(q[h, t] @ k[s]), 0.0) for h in range(h_i))
    return out


def test_indexer_scores_equal_the_sum_over_heads_written_out():
    rng = np.random.default_rng(0)
    q, k, w = rng.standard_normal((3, 5, 4)), rng.standard_normal((7, 4)), rng.standard_normal((5, 3))
    np.testing.assert_allclose(indexer_scores(q, k, w), _loop_indexer_scores(q, k, w, 0.5), rtol=1e-13)
    np.testing.assert_allclose(indexer_scores(q, k, w, scale=0.1), _loop_indexer_scores(q, k, w, 0.1), rtol=1e-13)


def test_indexer_scores_broadcast_a_batch_and_keep_float32():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)  # (B, h_I, n_q, d_I)
    k = rng.standard_normal((2, 6, 4)).astype(np.float32)  # (B, n_k, d_I)
    w = rng.standard_normal((2, 5, 3)).astype(np.float32)  # (B, n_q, h_I)
    out = indexer_scores(q, k, w)
    assert out.shape == (2, 5, 6) and out.dtype == np.float32
    for b in range(2):
        np.testing.assert_allclose(out[b], _loop_indexer_scores(q[b], k[b], w[b], 0.5), rtol=1e-5, atol=1e-6)


def test_a_head_never_votes_against_a_key_with_a_positive_weight():
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal((4, 6, 8)), rng.standard_normal((6, 8))
    assert np.all(indexer_scores(q, k, np.abs(rng.standard_normal((6, 4)))) >= 0)  # relu: >= 0 per head
    assert np.all(indexer_scores(q, k, -np.abs(rng.standard_normal((6, 4)))) <= 0)


@pytest.mark.parametrize("bad, message", [
    (dict(k_index=np.zeros((6, 5))), "d_I"),
    (dict(head_weights=np.zeros((6, 3))), "head_weights must have shape"),
    (dict(q_index=np.zeros((6, 8))), "q_index"),
])
def test_indexer_scores_name_the_wrong_argument(bad, message):
    args = dict(q_index=np.zeros((4, 6, 8)), k_index=np.zeros((6, 8)), head_weights=np.zeros((6, 4)))
    args.update(bad)
    with pytest.raises(ValueError, match=message):
        indexer_scores(**args)


def test_the_kept_keys_are_the_k_best_visible_ones_and_never_the_future():
    rng = np.random.default_rng(3)
    for n_q, n_k, k in [(6, 6, 3), (1, 9, 4), (4, 10, 2), (7, 7, 1), (5, 12, 5)]:
        scores = rng.standard_normal((2, n_q, n_k))
        keep = top_k_mask(scores, k)
        visible = causal_mask(n_q, n_k, lower_right=True)
        assert not np.any(keep & ~visible), "a future key was kept"
        for b in range(2):
            for t in range(n_q):
                seen = np.flatnonzero(visible[t])
                best = seen[np.argsort(-scores[b, t, seen], kind="stable")[:k]]
                assert set(np.flatnonzero(keep[b, t])) == set(best)
                assert keep[b, t].sum() == min(k, len(seen))


def test_a_future_key_with_the_best_score_is_still_not_kept():
    scores = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 100.0], [1.0, 2.0, 3.0]])
    keep = top_k_mask(scores, 1)
    np.testing.assert_array_equal(keep, [[True, False, False], [False, True, False], [False, False, True]])


def test_k_at_least_the_visible_keys_keeps_every_visible_key():
    scores = np.random.default_rng(4).standard_normal((5, 5))
    np.testing.assert_array_equal(top_k_mask(scores, 5), causal_mask(5))
    np.testing.assert_array_equal(top_k_mask(scores, 2048), causal_mask(5))
    np.testing.assert_array_equal(top_k_mask(scores, 3)[:3], causal_mask(5)[:3])  # the first 3 queries see <= 3 keys


def test_ties_at_the_kth_place_keep_the_earlier_key():
    scores = np.array([[1.0, 0.0, 0.0, 0.0, 2.0]])  # one query at the last position sees all five
    np.testing.assert_array_equal(top_k_mask(scores, 3), [[True, True, False, False, True]])
    np.testing.assert_array_equal(top_k_mask(np.zeros((1, 4)), 2), [[True, True, False, False]])
    np.testing.assert_array_equal(top_k_mask(np.array([[0.0, -0.0, 0.0]]), 1), [[True, False, False]])


def test_without_causality_an_attn_mask_alone_says_what_is_visible():
    scores = np.array([[3.0, 2.0, 1.0, 0.0]])
    padding = np.array([[False, True, True, True]])
    np.testing.assert_array_equal(top_k_mask(scores, 2, causal=False, attn_mask=padding), [[False, True, True, False]])
    np.testing.assert_array_equal(top_k_mask(scores, 2, attn_mask=padding), [[False, True, True, False]])
    np.testing.assert_array_equal(top_k_mask(scores, 4, causal=False), [[True, True, True, True]])


def test_a_query_that_sees_no_key_keeps_none():
    keep = top_k_mask(np.array([[5.0, 5.0], [0.0, 1.0], [0.0, 1.0]]), 1)  # n_q > n_k: query 0 sits before every key
    np.testing.assert_array_equal(keep, [[False, False], [True, False], [False, True]])


@pytest.mark.parametrize("k, error", [(0, ValueError), (-1, ValueError), (2.5, (TypeError, ValueError)),
                                      (True, TypeError)])
def test_k_must_be_a_positive_int(k, error):
    with pytest.raises(error, match="k"):
        top_k_mask(np.zeros((2, 2)), k)


def test_nan_at_a_visible_key_is_refused_and_at_a_hidden_one_ignored():
    with pytest.raises(ValueError, match="NaN"):
        top_k_mask(np.array([[0.0, 1.0], [np.nan, 1.0]]), 1)
    np.testing.assert_array_equal(top_k_mask(np.array([[0.0, np.nan], [2.0, 1.0]]), 1), [[True, False], [True, False]])


def test_sparse_attention_with_k_at_least_n_k_is_full_causal_attention():
    rng = np.random.default_rng(5)
    q, k, v = rng.standard_normal((2, 3, 6, 4)), rng.standard_normal((2, 3, 6, 4)), rng.standard_normal((2, 3, 6, 5))
    scores = rng.standard_normal((2, 6, 6))
    out, weights = sparse_attention(q, k, v, scores, 6)
    np.testing.assert_allclose(out, scaled_dot_product_attention(q, k, v, is_causal=True), rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(weights > 0, np.broadcast_to(causal_mask(6), weights.shape))


def test_sparse_attention_softmaxes_over_the_kept_keys_alone():
    rng = np.random.default_rng(6)
    q, k, v = rng.standard_normal((4, 7, 8)), rng.standard_normal((2, 9, 8)), rng.standard_normal((2, 9, 3))
    scores = rng.standard_normal((7, 9))  # 7 new queries after 2 cached keys: lower-right causality
    out, weights = sparse_attention(q, k, v, scores, 3, enable_gqa=True)
    keep = top_k_mask(scores, 3)
    assert out.shape == (4, 7, 3) and weights.shape == (4, 7, 9)
    np.testing.assert_array_equal(weights[:, ~keep], 0.0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-13)
    expected = scaled_dot_product_attention(q, k, v, attn_mask=keep, enable_gqa=True)
    np.testing.assert_allclose(out, expected, rtol=1e-13, atol=1e-15)


def test_sparse_attention_names_index_scores_of_the_wrong_shape():
    q = np.zeros((1, 3, 4))
    with pytest.raises(ValueError, match=r"index_scores must have shape \(\.\.\., n_q, n_k\) = \(\.\.\., 3, 3\)"):
        sparse_attention(q, q, q, np.zeros((3, 4)), 2)


# ---- against torch.topk and transformers' indexer ----------------------------------------------------------------

def test_top_k_mask_equals_torch_topk_on_distinct_scores_and_keeps_the_same_scores_on_ties():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    for n, k in [(9, 3), (16, 5), (40, 17), (8, 8)]:
        scores = rng.standard_normal((3, n, n)).astype(np.float32)
        masked = torch.from_numpy(scores).masked_fill(~torch.from_numpy(causal_mask(n)), float("-inf"))
        idx = masked.topk(min(k, n), dim=-1).indices
        theirs = torch.zeros(3, n, n, dtype=torch.bool).scatter(-1, idx, True).numpy() & causal_mask(n)
        np.testing.assert_array_equal(top_k_mask(scores, k), theirs)
        tied = np.round(scores).astype(np.float32)  # a handful of values: many ties at the k-th place
        masked = torch.from_numpy(tied).masked_fill(~torch.from_numpy(causal_mask(n)), float("-inf"))
        idx = masked.topk(min(k, n), dim=-1).indices
        theirs = torch.zeros(3, n, n, dtype=torch.bool).scatter(-1, idx, True).numpy() & causal_mask(n)
        ours = top_k_mask(tied, k)
        np.testing.assert_array_equal(ours.sum(-1), theirs.sum(-1))
        for row_ours, row_theirs, row in zip(ours.reshape(-1, n), theirs.reshape(-1, n), tied.reshape(-1, n)):
            np.testing.assert_array_equal(np.sort(row[row_ours]), np.sort(row[row_theirs]))


@pytest.mark.parametrize("family", ["deepseek_v32", "glm_moe_dsa"])
def test_indexer_and_top_k_equal_transformers_indexer(family):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import (
        apply_rotary_pos_emb, apply_rotary_pos_emb_interleave)
    if family == "deepseek_v32":
        from transformers import DeepseekV32Config as Config
        from transformers.models.deepseek_v32.modeling_deepseek_v32 import DeepseekV32Indexer as Indexer
        from transformers.models.deepseek_v32.modeling_deepseek_v32 import DeepseekV32RotaryEmbedding as Rotary
        rope = apply_rotary_pos_emb
    else:
        from transformers import GlmMoeDsaConfig as Config
        from transformers.models.glm_moe_dsa.modeling_glm_moe_dsa import GlmMoeDsaIndexer as Indexer
        from transformers.models.glm_moe_dsa.modeling_glm_moe_dsa import GlmMoeDsaRotaryEmbedding as Rotary
        rope = apply_rotary_pos_emb_interleave
    config = Config(hidden_size=24, q_lora_rank=12, index_n_heads=4, index_head_dim=16, qk_rope_head_dim=8,
                    qk_nope_head_dim=8, v_head_dim=8, kv_lora_rank=8, index_topk=5, num_hidden_layers=1,
                    num_attention_heads=2, num_key_value_heads=2, vocab_size=11)
    torch.manual_seed(0)
    indexer = Indexer(config, 0).double()
    with torch.no_grad():
        for p in indexer.parameters():
            p.normal_()
    n = 12
    hidden = torch.randn(2, n, 24, dtype=torch.float64)
    q_resid = torch.randn(2, n, 12, dtype=torch.float64)
    cos, sin = Rotary(config)(hidden, torch.arange(n)[None])
    captured = {}
    hooks = [getattr(indexer, name).register_forward_hook(lambda m, i, o, name=name: captured.__setitem__(name, o))
             for name in ("wq_b", "k_norm", "weights_proj")]
    visible = torch.ones(n, n, dtype=torch.bool).tril()[None]  # (1, S, T)
    with torch.no_grad():
        idx = indexer(hidden, q_resid, (cos.double(), sin.double()), visible, None)
    for h in hooks:
        h.remove()
    theirs = torch.zeros(2, n, n, dtype=torch.bool).scatter(-1, idx.long(), True).numpy() & causal_mask(n)

    # the indexer's queries and keys as the module makes them, rotated as it rotates them
    q = captured["wq_b"].view(2, n, 4, 16)
    k = captured["k_norm"][:, :, None, :]
    q_rot, k_rot = rope(q[..., :8], k[..., :8], cos.double(), sin.double(), unsqueeze_dim=2)
    q_index = torch.cat([q_rot, q[..., 8:]], -1).transpose(1, 2).numpy()  # (B, S, h_I, d_I) -> (B, h_I, S, d_I)
    k_index = torch.cat([k_rot, k[..., 8:]], -1)[:, :, 0].numpy()  # (B, S, d_I)
    w = captured["weights_proj"].numpy() * 4 ** -0.5  # (B, S, h_I), scaled by h_I^-1/2 as the module does
    scores = indexer_scores(q_index, k_index, w, scale=16 ** -0.5)
    for b in range(2):
        for t in range(5, n):  # the rows with more than k visible keys: the k-th and next best differ
            ranked = np.sort(scores[b, t, : t + 1])[::-1]
            assert ranked[4] - ranked[5] > 1e-9, "a tie at the k-th place would leave the choice to torch.topk"
    np.testing.assert_array_equal(top_k_mask(scores, 5), theirs)
    assert not np.all(theirs == causal_mask(n)), "k below n must drop some keys"


def test_ties_torch_keeps_the_keys_torch_topk_keeps():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    for n, k in [(9, 3), (16, 5), (40, 17), (30, 2), (200, 3)]:  # (200, 3): torch's partial_sort path (64 k <= n)
        scores = rng.integers(0, 3, (4, n, n)).astype(np.float32)  # three values: ties at almost every k-th place
        masked = torch.from_numpy(scores).masked_fill(~torch.from_numpy(causal_mask(n)), float("-inf"))
        idx = masked.topk(min(k, n), dim=-1).indices
        theirs = torch.zeros(4, n, n, dtype=torch.bool).scatter(-1, idx, True).numpy() & causal_mask(n)
        ours = top_k_mask(scores, k, ties="torch")
        np.testing.assert_array_equal(ours, theirs)
        assert not np.array_equal(top_k_mask(scores, k), theirs) or n < 10  # the earlier-first rule differs


def test_torch_topk_indices_replays_torch_topk_on_tied_rows():
    torch = pytest.importorskip("torch")
    from attention_course.core._topk_ties import torch_topk_indices
    rng = np.random.default_rng(9)
    for trial in range(400):
        n = int(rng.integers(1, 150))
        k = int(rng.integers(1, n + 1)) if trial % 3 else int(rng.integers(1, n // 64 + 2))
        values = rng.integers(0, int(rng.integers(1, 5)), n).astype(np.float32)
        values[rng.random(n) < 0.2] = -np.inf
        assert torch_topk_indices(values.tolist(), min(k, n)) == set(
            torch.from_numpy(values).topk(min(k, n)).indices.tolist()), (values, k)


def test_ties_must_be_named():
    with pytest.raises(ValueError, match="ties"):
        top_k_mask(np.zeros((2, 2)), 1, ties="random")
