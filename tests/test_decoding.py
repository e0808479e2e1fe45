"""Tests for attention_course/chapters/decoding.py: the generation chapter's counts and measurements."""

import dataclasses

import numpy as np
import pytest

import attention_course as ac
from attention_course.chapters import ROPE_MODELS
from attention_course.chapters.decoding import (
    PUBLISHED_CONFIGS, decode_flops, filled_cache, head_groups, receptive_field, time_decode_step,
)


@pytest.fixture(scope="module")
def model():
    return ac.random_decoder(np.random.default_rng(0), vocab_size=20, d_model=8, n_layers=2, n_heads=4, n_kv_heads=2,
                             d_ff=12)


def counted_flops(config, n_queries_keys: list[tuple[int, int]]) -> int:
    """2 FLOPs per multiply-add, counted matrix by matrix for queries that see the given numbers of keys."""
    c = config
    per_token = 0
    for d_in, d_out in ((c.d_model, c.n_heads * c.head_dim), (c.d_model, c.n_kv_heads * c.head_dim),
                        (c.d_model, c.n_kv_heads * c.head_dim), (c.n_heads * c.head_dim, c.d_model),
                        (c.d_model, c.d_ff), (c.d_model, c.d_ff), (c.d_ff, c.d_model)):
        per_token += 2 * d_in * d_out * c.n_layers
    per_token += 2 * c.d_model * c.vocab_size
    total = 0
    for n_tokens, keys in n_queries_keys:
        total += n_tokens * per_token
        for window in c.windows:
            seen = keys if window is None else min(keys, window)
            total += n_tokens * c.n_heads * (2 * c.head_dim * seen) * 2  # q . k and weights @ V
    return total


def test_decode_flops_counts_every_product(model):
    c = model.config
    assert decode_flops(c, 7, use_cache=True) == counted_flops(c, [(1, 7)])
    assert decode_flops(c, 7, use_cache=False) == counted_flops(c, [(1, i) for i in range(1, 8)])
    windowed = ac.random_decoder(np.random.default_rng(1), vocab_size=20, d_model=8, n_layers=2, window=3).config
    assert decode_flops(windowed, 9, use_cache=True) == counted_flops(windowed, [(1, 9)])
    assert decode_flops(windowed, 9, True) < decode_flops(dataclasses.replace(windowed, windows=(None, None)), 9, True)


def test_decode_flops_slopes_head_for_1_and_2():
    config = ac.random_decoder(np.random.default_rng(2), d_model=16, n_layers=1, n_heads=2, n_kv_heads=1).config
    sizes = [2**k for k in range(14, 18)]
    cached = ac.loglog_slope(sizes, [decode_flops(config, n, True) for n in sizes]).slope
    full = ac.loglog_slope(sizes, [decode_flops(config, n, False) for n in sizes]).slope
    assert 0.9 < cached < 1.0 and 1.9 < full < 2.0


def test_head_groups_are_consecutive():
    assert head_groups(4, 2) == [[0, 1], [2, 3]]
    assert head_groups(3, 3) == [[0], [1], [2]]
    assert head_groups(6, 1) == [list(range(6))]
    with pytest.raises(ValueError, match="multiple"):
        head_groups(6, 4)


@pytest.mark.parametrize("n, window, n_layers", [(12, 3, 3), (10, 4, 1), (9, 2, 4), (6, 8, 2)])
def test_receptive_field_is_what_perturbing_a_token_shows(n, window, n_layers):
    model = ac.random_decoder(np.random.default_rng(n + window), vocab_size=16, d_model=8, n_layers=n_layers,
                              n_heads=2, n_kv_heads=1, window=window)
    ids = np.arange(n) % 16
    last = model.forward(ids, need_weights=False).logits[-1]
    moved = []
    for p in range(n):
        changed = ids.copy()
        changed[p] = (changed[p] + 7) % 16
        moved.append(not np.array_equal(model.forward(changed, need_weights=False).logits[-1], last))
    reach = receptive_field(n, window, n_layers)
    assert moved == reach.tolist()
    assert reach.sum() == min(n, n_layers * (window - 1) + 1)


def test_filled_cache_has_the_model_shapes(model):
    cache = filled_cache(model, 5, np.random.default_rng(3))
    assert len(cache) == 5 and cache.keys(1).shape == (2, 5, 2) and cache.keys(0).dtype == np.float64
    assert cache.nbytes == ac.kv_cache_bytes(2, 2, 2, 5, "float64")


@pytest.mark.parametrize("use_cache", [True, False])
def test_time_decode_step_times_one_call_and_leaves_the_model_alone(model, use_cache):
    ids = np.arange(6) % 20
    before = model.forward(ids).logits
    seconds = time_decode_step(model, ids, use_cache=use_cache, repeat=2)
    assert isinstance(seconds, float) and seconds > 0
    np.testing.assert_array_equal(model.forward(ids).logits, before)
    assert time_decode_step(model, ids[:1], use_cache=use_cache, repeat=1) > 0  # a first token: nothing cached


def test_published_configs_are_consistent():
    names = [m.name for m in PUBLISHED_CONFIGS]
    assert len(set(names)) == len(names)
    for m in PUBLISHED_CONFIGS:
        assert m.n_heads % m.n_kv_heads == 0, m.name
        assert m.window is None or m.window < m.context
    kinds = {m.name: m.attention for m in PUBLISHED_CONFIGS}
    assert kinds["tiiuae/falcon-7b"] == "multi-query" and kinds["meta-llama/Llama-2-7b-hf"] == "multi-head"
    assert kinds["meta-llama/Meta-Llama-3-8B"] == "grouped-query (4 query heads per key/value head)"
    contexts = {m.name: m.context for m in PUBLISHED_CONFIGS}
    for rope in ROPE_MODELS:  # the positions chapter reads the same config.json files
        name = rope.source.split("huggingface.co/")[1].split("/blob/")[0]
        assert contexts[name] == rope.context, name
