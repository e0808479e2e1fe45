"""chapters.compression: the small pool, one query's view of a DeepSeek-V4 layer, the cache per token.

The view is checked against the decoder's own V4 attention (`decoder.v4_attention`) run directly on the same
model, and the default configuration against transformers' DeepseekV4Config defaults where transformers is
installed.
"""

import numpy as np
import pytest

from attention_course.chapters.compression import (DEEPSEEK_V4_FLASH, SMALL_POOL, SMALL_V4, cache_per_token,
                                                   entry_tokens, pool_weights, query_view)
from attention_course.core.compress import gated_pool, overlapping_gated_pool
from attention_course.decoder.cache import cache_bytes
from attention_course.decoder.load import random_decoder
from attention_course.decoder.published import published_config

N = 96


@pytest.fixture(scope="module")
def view():
    return query_view(np.random.default_rng(0), N)


def test_the_small_pool_weights_sum_to_one_per_coordinate_and_make_gated_pools_entry():
    p = SMALL_POOL
    w = pool_weights(p.kv, p.gate, p.position_bias)
    np.testing.assert_allclose(w.sum(axis=0), 1.0)
    np.testing.assert_allclose(w[:, 0], [0.125, 0.125, 0.125, 0.625])  # the bias log 5 on the last place
    np.testing.assert_allclose((w * p.kv).sum(axis=0), p.entry())
    np.testing.assert_allclose(p.entry(), gated_pool(p.kv, p.gate, 4, p.position_bias)[0])
    with pytest.raises(ValueError, match="position_bias"):
        pool_weights(p.kv, p.gate, p.position_bias[:3])


def test_entry_tokens_are_the_slots_overlapping_gated_pool_reads():
    rng = np.random.default_rng(1)
    m, d = 4, 3
    kv, gate = rng.normal(size=(4 * m, 2 * d)), rng.normal(size=(4 * m, 2 * d))
    bias = rng.normal(size=(m, 2 * d))
    entries = overlapping_gated_pool(kv, gate, m, bias)
    for w in range(4):
        moved = kv.copy()
        outside = [t for t in range(4 * m) if t not in entry_tokens(w, m, overlapping=True)]
        moved[outside] += 10.0  # tokens the entry does not read: the entry must not change
        np.testing.assert_allclose(overlapping_gated_pool(moved, gate, m, bias)[w], entries[w])
    assert entry_tokens(2, 4, overlapping=False) == range(8, 12)
    assert entry_tokens(0, 4, overlapping=True) == range(0, 4)
    with pytest.raises(ValueError, match="entry"):
        entry_tokens(-1, 4, overlapping=True)


def test_the_view_is_the_window_and_the_indexers_top_k(view):
    assert view.position == N - 1 and view.ratio == 4 and view.overlapping
    np.testing.assert_array_equal(view.window, np.arange(N - SMALL_V4["sliding_window"], N))
    assert view.n_closed == N // 4
    assert len(view.picked) == SMALL_V4["index_topk"] and view.picked.max() < view.n_closed
    assert 0 < view.weight_window + view.weight_entries <= 1  # the sink takes the rest


def test_the_view_is_what_the_decoders_v4_attention_gives(view):
    from attention_course.decoder.v4_attention import v4_attention

    rng = np.random.default_rng(0)
    model = random_decoder(rng, config=dict(SMALL_V4))
    ids = rng.integers(1, model.config.vocab_size, N)  # the same draws as query_view's
    captured = {}

    def attend(i, p, h, positions, state):  # the model's own call of the layer, its weights kept
        out, tok_w, ent_w = v4_attention(model.config, p, i, h, positions, state)
        captured["tokens"], captured["entries"] = tok_w[:, -1], ent_w[:, -1]  # (h, n_k), (h, T): the last query
        return out, (tok_w, ent_w)

    model._attend = attend
    model.forward(ids)
    tokens, entries = captured["tokens"], captured["entries"]
    np.testing.assert_array_equal(np.flatnonzero(tokens[0] > 0), view.window)
    np.testing.assert_array_equal(np.flatnonzero(entries[0] > 0), view.picked)
    assert entries.shape[-1] == view.n_closed
    np.testing.assert_allclose(tokens.sum(-1).mean(), view.weight_window)
    np.testing.assert_allclose(entries.sum(-1).mean(), view.weight_entries)


def test_the_cache_rows_are_cache_bytes_per_token():
    n = 1 << 20
    rows = {r.name: r.per_token for r in cache_per_token(n)}
    v4, v3 = DEEPSEEK_V4_FLASH.config, published_config("deepseek-ai/DeepSeek-V3")
    assert rows["DeepSeek-V4 (window + compressed)"] == cache_bytes(v4, n, dtype="bfloat16") / 2 / n
    assert rows["DeepSeek-V4's keys, every token"] == 43 * 512
    assert rows["DeepSeek-V3 latent"] == 61 * (512 + 64)
    assert rows["DeepSeek-V3 per-head keys, values"] == 61 * 128 * (128 + 64 + 128)
    # by hand: 20 CSA layers (m = 4, an entry of 512 and an indexer key of 128), 23 HCA (m' = 128), windows of 127
    o = v4.v4
    assert o.ratios.count(4) == 20 and o.ratios.count(128) == 23
    by_hand = 43 * 127 * 512 + 20 * (n // 4 * (512 + 128) + 2 * 4 * (512 + 128)) + 23 * n // 128 * 512
    assert rows["DeepSeek-V4 (window + compressed)"] * n == by_hand
    with pytest.raises(TypeError, match="v4"):
        cache_per_token(n, v4=v3)


def test_the_default_configuration_is_transformers_deepseekv4config():
    transformers = pytest.importorskip("transformers",
                                       reason="transformers is not installed: pip install -e '.[torch]'")
    reference = transformers.DeepseekV4Config()
    assert "deepseek-ai/DeepSeek-V4-Flash-Base" in transformers.DeepseekV4Config.__doc__
    for key, value in DEEPSEEK_V4_FLASH.fields.items():
        if key not in ("model_type", "partial_rotary_factor"):
            assert getattr(reference, key) == value, key
    from attention_course.decoder.config import DecoderConfig

    ours, theirs = DEEPSEEK_V4_FLASH.config, DecoderConfig.from_dict(reference.to_dict())
    assert ours.v4 == theirs.v4 and ours.head_dim == theirs.head_dim and ours.n_layers == theirs.n_layers
