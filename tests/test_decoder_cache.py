"""Tests for attention_course/decoder/cache.py: the KV cache appends along the sequence axis and counts its bytes."""

import numpy as np
import pytest

from attention_course import causal_mask, scaled_dot_product_attention, sliding_window_mask
from attention_course.decoder import KVCache, kv_cache_bytes


def kv(rng, n, h_kv=2, d=4, dtype=np.float64):
    return rng.standard_normal((h_kv, n, d)).astype(dtype), rng.standard_normal((h_kv, n, d)).astype(dtype)


def test_update_appends_along_the_sequence_axis_and_returns_everything():
    rng = np.random.default_rng(0)
    cache = KVCache(n_layers=2)
    k1, v1 = kv(rng, 3)
    k2, v2 = kv(rng, 1)
    keys, values = cache.update(0, k1, v1)
    assert np.array_equal(keys, k1) and np.array_equal(values, v1)
    keys, values = cache.update(0, k2, v2)
    assert keys.shape == (2, 4, 4)
    assert np.array_equal(keys, np.concatenate([k1, k2], axis=1)) and np.array_equal(values, np.concatenate([v1, v2], axis=1))
    assert len(cache) == 4 and cache.seen(0) == 4 and cache.seen(1) == 0 and cache.kept(0) == 4
    assert cache.keys(1) is None


def test_nbytes_counts_every_key_and_value_and_agrees_with_kv_cache_bytes():
    rng = np.random.default_rng(1)
    cache = KVCache(n_layers=3)
    for layer in range(3):
        cache.update(layer, *kv(rng, 5, h_kv=2, d=8, dtype=np.float32))
    assert cache.nbytes == 3 * 2 * (2 * 5 * 8 * 4)
    assert cache.nbytes == kv_cache_bytes(3, 2, 8, 5, "float32")


def test_the_cache_owns_its_arrays():
    rng = np.random.default_rng(2)
    cache = KVCache(1)
    k, v = kv(rng, 2)
    keys, _ = cache.update(0, k, v)
    k[:] = 0  # the caller reuses their buffer
    assert not np.any(cache.keys(0) == 0)
    for view in (keys, cache.keys(0), cache.values(0)):
        with pytest.raises(ValueError, match="read-only"):
            view[0, 0, 0] = 1.0


def test_cached_attention_of_a_new_token_equals_the_last_row_of_the_full_causal_attention():
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((2, 7, 4)) for _ in range(3))
    cache = KVCache(1)
    cache.update(0, k[:, :6], v[:, :6])
    keys, values = cache.update(0, k[:, 6:], v[:, 6:])
    step = scaled_dot_product_attention(q[:, 6:], keys, values)  # one query, no mask needed
    full = scaled_dot_product_attention(q, k, v, is_causal=True)
    np.testing.assert_allclose(step, full[:, 6:], rtol=1e-13, atol=1e-15)
    chunk = scaled_dot_product_attention(q[:, 4:], k, v, attn_mask=causal_mask(3, 7, lower_right=True))
    np.testing.assert_allclose(chunk, full[:, 4:], rtol=1e-13, atol=1e-15)


def test_a_sliding_window_layer_keeps_window_minus_one_tokens_and_loses_nothing():
    rng = np.random.default_rng(4)
    window = 3
    q, k, v = (rng.standard_normal((2, 8, 4)) for _ in range(3))
    full = scaled_dot_product_attention(q, k, v, attn_mask=sliding_window_mask(8, 8, window))
    cache = KVCache(2, window=[None, window])
    outs = []
    for start, stop in ((0, 5), (5, 6), (6, 8)):  # a chunk, then single tokens
        cache.update(0, k[:, start:stop], v[:, start:stop])
        keys, values = cache.update(1, k[:, start:stop], v[:, start:stop])
        n_q = stop - start
        outs.append(scaled_dot_product_attention(q[:, start:stop], keys, values,
                                                 attn_mask=sliding_window_mask(n_q, keys.shape[1], window)))
        assert cache.kept(1) == min(stop, window - 1) and cache.kept(0) == stop
        assert cache.seen(1) == stop
    np.testing.assert_allclose(np.concatenate(outs, axis=1), full, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(cache.keys(1), k[:, -(window - 1):])


def test_kv_cache_bytes_of_llama_3_8b_is_128_kib_per_token_in_bf16():
    assert kv_cache_bytes(32, 8, 128, 1, "bfloat16") == 128 * 1024
    assert kv_cache_bytes(32, 8, 128, 8192, "bfloat16", batch=4) == 4 * 8192 * 128 * 1024
    assert kv_cache_bytes(2, 1, 1, 1, np.float64) == 2 * 2 * 8


@pytest.mark.parametrize("kwargs, error, match", [
    ({"n_layers": 0}, ValueError, "n_layers"), ({"head_dim": 2.5}, TypeError, "head_dim"),
    ({"dtype": "float99"}, TypeError, "dtype"), ({"batch": -1}, ValueError, "batch"),
])
def test_kv_cache_bytes_rejects_bad_arguments(kwargs, error, match):
    args = {"n_layers": 2, "n_kv_heads": 2, "head_dim": 4, "seq_len": 8, "dtype": "float32", **kwargs}
    with pytest.raises(error, match=match):
        kv_cache_bytes(**args)


def test_update_errors_name_the_argument_and_the_shapes():
    rng = np.random.default_rng(5)
    cache = KVCache(2)
    k, v = kv(rng, 3)
    with pytest.raises(ValueError, match="layer must be an int in 0..1"):
        cache.update(2, k, v)
    with pytest.raises(ValueError, match=r"key must have shape \(\.\.\., h_kv, n_new, d_k\)"):
        cache.update(0, k[0], v)
    with pytest.raises(ValueError, match="key and value must agree"):
        cache.update(0, k, v[:, :2])
    cache.update(0, k, v)
    with pytest.raises(ValueError, match=r"only the sequence axis \(-2\) may differ"):
        cache.update(0, k[:1], v[:1])  # one head instead of two: appending along the head axis is refused
    with pytest.raises(ValueError, match="dtype"):
        cache.update(0, k.astype(np.float32), v.astype(np.float32))
    with pytest.raises(ValueError, match="window"):
        KVCache(2, window=[3])


def test_repr_says_what_is_cached():
    cache = KVCache(2, window=4)
    cache.update(0, np.ones((1, 2, 2)), np.ones((1, 2, 2)))
    assert repr(cache) == "KVCache(2 layers, 2 tokens seen, 64 bytes, windows [4, 4])"


def test_decode_step_equals_the_last_row_of_full_causal_attention_with_rope():
    from attention_course import apply_rope
    from attention_course.decoder import decode_step

    rng = np.random.default_rng(6)
    t, h_q, h_kv, d = 5, 6, 2, 8
    q, k = rng.standard_normal((h_q, t + 1, d)), rng.standard_normal((h_kv, t + 1, d))
    v = rng.standard_normal((h_kv, t + 1, 3))
    rotated_q, rotated_k = apply_rope(q), apply_rope(k)  # positions 0..t
    full = scaled_dot_product_attention(rotated_q, rotated_k, v, is_causal=True, enable_gqa=True)
    k_cache, v_cache = rotated_k[:, :t], v[:, :t]
    before = k_cache.copy()
    out, new_k, new_v = decode_step(q[:, t:], k[:, t:], v[:, t:], k_cache, v_cache)
    np.testing.assert_allclose(out, full[:, t:], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(new_k, rotated_k, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(new_v, v)
    np.testing.assert_array_equal(k_cache, before)
    with pytest.raises(ValueError, match="one token"):
        decode_step(q[:, :2], k[:, :1], v[:, :1], k_cache, v_cache)
    with pytest.raises(ValueError, match="k_cache must have shape"):
        decode_step(q[:, :1], k[:, :1], v[:, :1], k_cache[:1], v_cache)


def test_cache_bytes_counts_from_a_config_what_the_caches_keep():
    from attention_course.decoder import DecoderConfig, cache_bytes, latent_cache_bytes

    base = {"vocab_size": 10, "hidden_size": 16, "num_hidden_layers": 4, "num_attention_heads": 4, "intermediate_size": 8}
    gqa = DecoderConfig.from_dict({**base, "model_type": "gpt_oss", "num_key_value_heads": 2, "head_dim": 8,
                                   "sliding_window": 3, "torch_dtype": "bfloat16"})
    assert cache_bytes(gqa) == kv_cache_bytes(4, 2, 8, 1, "bfloat16")  # the checkpoint's dtype by default
    assert cache_bytes(gqa, 10, "float32", batch=3) == kv_cache_bytes(4, 2, 8, 10, "float32", batch=3)
    # sliding layers 0 and 2 keep window - 1 = 2 tokens
    assert cache_bytes(gqa, 10, "float32", keep_window=True) == kv_cache_bytes(1, 2, 8, 2 + 10 + 2 + 10, "float32")
    mla = DecoderConfig.from_dict({**base, "model_type": "deepseek_v3", "kv_lora_rank": 6, "qk_rope_head_dim": 2,
                                   "qk_nope_head_dim": 4, "v_head_dim": 3, "n_routed_experts": 4, "n_group": 2,
                                   "topk_group": 1, "num_experts_per_tok": 2})
    assert cache_bytes(mla, 5, "float32") == latent_cache_bytes(4, 6, 2, 5, "float32") == 4 * 8 * 5 * 4
    assert cache_bytes(mla, 5, "float32", latent=False) == 4 * 4 * (6 + 3) * 5 * 4
    with pytest.raises(ValueError, match="seq_len must be a positive integer"):
        cache_bytes(gqa, 0)
    with pytest.raises(TypeError, match="kv_lora_rank must be a positive integer"):
        latent_cache_bytes(4, 6.0, 2, 5)
