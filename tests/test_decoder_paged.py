"""Tests for attention_course/decoder/paged.py and reserved.py: blocks, a block table, and attention over them
equal the contiguous KVCache."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_course import causal_mask, scaled_dot_product_attention, sliding_window_mask
from attention_course.decoder import KVCache, LayerCache, PagedKVCache, ReservedKVCache, random_decoder


def kv(rng, n, h_kv=2, d=4, d_v=None, dtype=np.float64):
    return (rng.standard_normal((h_kv, n, d)).astype(dtype), rng.standard_normal((h_kv, n, d_v or d)).astype(dtype))


@settings(max_examples=60, deadline=None)
@given(block_size=st.integers(1, 7), window=st.one_of(st.none(), st.integers(1, 9)),
       chunks=st.lists(st.integers(1, 6), min_size=1, max_size=8), h_kv=st.sampled_from([1, 2]),
       seed=st.integers(0, 2**16))
def test_update_returns_what_the_contiguous_cache_returns(block_size, window, chunks, h_kv, seed):
    rng = np.random.default_rng(seed)
    contiguous, paged = KVCache(2, window=window), PagedKVCache(2, block_size=block_size, window=window)
    reserved = ReservedKVCache(2, max_tokens=sum(chunks), window=window)
    for n in chunks:
        k, v = kv(rng, n, h_kv=h_kv, d_v=3)
        want = contiguous.update(1, k, v)
        for cache in (paged, reserved):
            got = cache.update(1, k, v)
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
            assert np.array_equal(cache.keys(1), contiguous.keys(1))
            assert np.array_equal(cache.values(1), contiguous.values(1))
            assert cache.kept(1) == contiguous.kept(1) and cache.seen(1) == contiguous.seen(1)
    assert len(paged) == len(contiguous) == 0 and paged.keys(0) is None  # layer 0 never updated
    # whole blocks: at most one partly filled block at each end of the kept tokens
    assert paged.blocks(1) * block_size >= paged.kept(1)
    assert paged.blocks(1) <= -(-paged.kept(1) // block_size) + 1
    slot = h_kv * 4 * 8 + h_kv * 3 * 8  # one token's key (d = 4) and value (d_v = 3), float64
    assert paged.nbytes == paged.blocks(1) * block_size * slot


def test_blocks_are_taken_only_when_the_previous_one_is_full_and_freed_blocks_are_reused():
    rng = np.random.default_rng(0)
    cache = PagedKVCache(1, block_size=4, window=6)  # keeps 5 tokens
    cache.update(0, *kv(rng, 3))
    assert cache.block_table(0) == [0] and cache.blocks(0) == 1
    cache.update(0, *kv(rng, 1))
    assert cache.block_table(0) == [0]  # the fourth token fills block 0
    cache.update(0, *kv(rng, 1))
    assert cache.block_table(0) == [0, 1]
    for _ in range(4):
        cache.update(0, *kv(rng, 1))  # 9 tokens seen, 5 kept: positions 4..8, block 0 (0..3) is free
    assert cache.kept(0) == 5 and cache.block_table(0) == [1, 2]
    for _ in range(4):
        cache.update(0, *kv(rng, 1))  # positions 9..12: 12 needs a new block, block 0 from the free list
    assert cache.block_table(0) == [2, 0] and cache.kept(0) == 5
    one_block = 2 * (2 * 4 * 4 * 8)  # keys and values: 2 heads x 4 slots x d = 4, float64
    assert cache.nbytes == 2 * one_block
    assert "blocks of 4" in repr(cache) and "windows [6]" in repr(cache)


def test_nbytes_counts_whole_blocks_and_the_reserved_cache_its_whole_buffer():
    rng = np.random.default_rng(1)
    paged, reserved, contiguous = PagedKVCache(3, block_size=16), ReservedKVCache(3, max_tokens=100), KVCache(3)
    for layer in range(3):
        k, v = kv(rng, 17, h_kv=2, d=8, dtype=np.float32)
        for cache in (paged, reserved, contiguous):
            cache.update(layer, k, v)
    per_token = 3 * 2 * 2 * 8 * 4  # layers x (keys, values) x h_kv x d x float32
    assert contiguous.nbytes == 17 * per_token
    assert paged.nbytes == 32 * per_token  # two blocks of 16
    assert reserved.nbytes == 100 * per_token


@pytest.mark.parametrize("cache_cls", [PagedKVCache, ReservedKVCache])
@pytest.mark.parametrize("window", [None, 3])
def test_the_decoder_writes_the_same_logits_with_any_cache(cache_cls, window):
    model = random_decoder(np.random.default_rng(5), n_layers=2, n_heads=4, n_kv_heads=2, window=window)
    ids = np.random.default_rng(6).integers(0, 64, 23)
    contiguous = model.new_cache(keep_window=True)
    other = (PagedKVCache(2, block_size=5, window=model.config.windows) if cache_cls is PagedKVCache
             else ReservedKVCache(2, max_tokens=23, window=model.config.windows))
    assert isinstance(other, LayerCache)
    for chunk in (ids[:9], ids[9:10], ids[10:14], *[ids[i:i + 1] for i in range(14, 23)]):
        a = model.forward(chunk, contiguous)
        b = model.forward(chunk, other)
        np.testing.assert_array_equal(a.logits, b.logits)
        np.testing.assert_array_equal(a.attentions, b.attentions)
    generated = model.generate(ids[:5], 6)
    assert generated.shape == (11,)


@settings(max_examples=60, deadline=None)
@given(block_size=st.integers(1, 9), window=st.one_of(st.none(), st.integers(1, 12)),
       chunks=st.lists(st.integers(1, 5), min_size=1, max_size=6), groups=st.sampled_from([(1, 1), (4, 2), (3, 1), (2, 2)]),
       keep_window=st.booleans(), seed=st.integers(0, 2**16))
def test_attention_over_the_blocks_equals_attention_over_the_contiguous_cache(block_size, window, chunks, groups,
                                                                               keep_window, seed):
    rng = np.random.default_rng(seed)
    h_q, h_kv = groups
    kept = window if keep_window else None
    paged, contiguous = PagedKVCache(1, block_size=block_size, window=kept), KVCache(1, window=kept)
    for n in chunks:
        q = rng.standard_normal((h_q, n, 5))
        k, v = kv(rng, n, h_kv=h_kv, d=5, d_v=3)
        keys, values = contiguous.update(0, k, v)
        n_k = keys.shape[-2]
        mask = causal_mask(n, n_k, lower_right=True) if window is None else sliding_window_mask(n, n_k, window, lower_right=True)
        want = scaled_dot_product_attention(q, keys, values, attn_mask=mask, enable_gqa=True)
        got = paged.attend(0, q, k, v, window=window)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
        assert paged.kept(0) == contiguous.kept(0)


def test_attend_checks_its_input():
    cache = PagedKVCache(1, block_size=4)
    rng = np.random.default_rng(2)
    k, v = kv(rng, 2, h_kv=2, d=4)
    with pytest.raises(ValueError, match="h_q a multiple of h_kv"):
        cache.attend(0, rng.standard_normal((3, 2, 4)), k, v)
    with pytest.raises(ValueError, match="n_new"):
        cache.attend(0, rng.standard_normal((2, 1, 4)), k, v)
    with pytest.raises(ValueError, match="window must be a positive integer"):
        cache.attend(0, rng.standard_normal((2, 2, 4)), k, v, window=0)
    assert cache.kept(0) == 0  # nothing was stored by the refused calls


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="block_size"):
        PagedKVCache(2, block_size=0)
    with pytest.raises(ValueError, match="max_tokens"):
        ReservedKVCache(2, max_tokens=0)
    with pytest.raises(ValueError, match="window"):
        PagedKVCache(2, window=[3])
    cache = PagedKVCache(2)
    rng = np.random.default_rng(3)
    with pytest.raises(ValueError, match="layer must be an int in 0..1"):
        cache.update(2, *kv(rng, 1))
    cache.update(0, *kv(rng, 2, d=4))
    with pytest.raises(ValueError, match="only the sequence axis"):
        cache.update(0, *kv(rng, 1, d=8))
    reserved = ReservedKVCache(1, max_tokens=3)
    reserved.update(0, *kv(rng, 2))
    with pytest.raises(ValueError, match="reserved room for max_tokens = 3"):
        reserved.update(0, *kv(rng, 2))


def test_the_model_refuses_a_cache_without_the_interface():
    model = random_decoder(np.random.default_rng(0))
    with pytest.raises(TypeError, match="cache must be a KVCache.*got dict"):
        model.forward([1, 2], {})


def test_a_reserved_sliding_window_cache_moves_its_tokens_back_to_the_front():
    rng = np.random.default_rng(4)
    reserved, contiguous = ReservedKVCache(1, max_tokens=4, window=3), KVCache(1, window=3)  # keeps 2, room for 4
    for _ in range(9):
        k, v = kv(rng, 1)
        want, got = contiguous.update(0, k, v), reserved.update(0, k, v)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert reserved.nbytes == 2 * 2 * 4 * 4 * 8


def test_the_docstring_examples_run():
    import doctest

    from attention_course.decoder import paged, quantized, reserved

    for module in (paged, quantized, reserved):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__
