"""Tests for attention_course/decoder/latent.py and latent_decode_step: the absorbed computation equals the expanded one."""

import numpy as np
import pytest

from attention_course.core import causal_mask, sliding_window_mask
from attention_course.core.positions import apply_rope
from attention_course.decoder import LatentCache, random_decoder
from attention_course.decoder.latent import absorbed_attention, expanded_attention
from attention_course.decoder.step import latent_decode_step
from decoder_models import config_json


def latent_inputs(rng, h=4, n=5, n_k=9, r=16, d_nope=8, d_rope=4, d_v=6):
    return (rng.standard_normal((h, n, d_nope)), rng.standard_normal((h, n, d_rope)), rng.standard_normal((n_k, r)),
            rng.standard_normal((1, n_k, d_rope)), rng.standard_normal((h, r, d_nope)), rng.standard_normal((h, r, d_v)))


@pytest.mark.parametrize("shape", [dict(), dict(h=1, n=1, n_k=1), dict(h=3, n=7, n_k=7, r=5, d_nope=12, d_rope=2, d_v=16)])
@pytest.mark.parametrize("window", [None, 3])
def test_absorbed_attention_equals_the_expanded_one(shape, window):
    rng = np.random.default_rng(0)
    args = latent_inputs(rng, **shape)
    n, n_k = args[0].shape[1], args[2].shape[0]
    mask = causal_mask(n, n_k, lower_right=True) if window is None else sliding_window_mask(n, n_k, window)
    out_e, w_e = expanded_attention(*args, scale=0.3, mask=mask)
    out_a, w_a = absorbed_attention(*args, scale=0.3, mask=mask)
    assert out_a.shape == (args[0].shape[0], n, args[5].shape[-1])
    np.testing.assert_allclose(w_a, w_e, rtol=0, atol=1e-14)
    np.testing.assert_allclose(out_a, out_e, rtol=0, atol=1e-12)


def test_the_model_with_its_latent_cache_equals_the_model_rebuilding_every_key():
    """Without a cache the model rebuilds per-head keys and values; with one it absorbs: the same numbers."""
    for name in ("deepseek-v3", "deepseek-v3-plain-q"):
        model = random_decoder(np.random.default_rng(1), config=config_json(name))
        ids = np.arange(11) * 7 % 320
        full = model.forward(ids)
        cache = model.new_cache()
        out = [model.forward(ids[:4], cache)] + [model.forward(ids[i:i + 1], cache) for i in range(4, 11)]
        np.testing.assert_allclose(np.concatenate([o.logits for o in out]), full.logits, rtol=0, atol=1e-11)
        last = out[-1].attentions[:, :, 0]  # (L, h, n_k) of the last token
        np.testing.assert_allclose(last, full.attentions[:, :, -1], rtol=0, atol=1e-13)


def test_latent_decode_step_is_the_last_row_of_full_latent_attention():
    rng = np.random.default_rng(2)
    h, t, r, d_nope, d_rope, d_v = 4, 6, 16, 8, 4, 6
    q_nope, q_rope = rng.standard_normal((h, t + 1, d_nope)), rng.standard_normal((h, t + 1, d_rope))
    latents, k_rope = rng.standard_normal((t + 1, r)), rng.standard_normal((1, t + 1, d_rope))
    w_uk, w_uv = rng.standard_normal((h, r, d_nope)), rng.standard_normal((h, r, d_v))
    pos = np.arange(t + 1)
    rotated_q = apply_rope(q_rope, pos, base=100.0, interleaved=True)
    rotated_k = apply_rope(k_rope, pos, base=100.0, interleaved=True)
    full, _ = expanded_attention(q_nope, rotated_q, latents, rotated_k, w_uk, w_uv, 0.25, causal_mask(t + 1))
    out, latent_cache, rope_cache = latent_decode_step(
        q_nope[:, t:], q_rope[:, t:], latents[t:], k_rope[:, t:], latents[:t], rotated_k[:, :t], w_uk, w_uv, 0.25,
        base=100.0)
    np.testing.assert_allclose(out, full[:, t:], rtol=0, atol=1e-12)
    assert latent_cache.shape == (t + 1, r) and rope_cache.shape == (1, t + 1, d_rope)
    np.testing.assert_allclose(rope_cache, rotated_k, rtol=0, atol=1e-14)
    with pytest.raises(ValueError, match="latent must have 2 axes"):
        latent_decode_step(q_nope[:, t:], q_rope[:, t:], latents[None, t:], k_rope[:, t:], latents[:t], rotated_k[:, :t],
                           w_uk, w_uv, 0.25)


def test_a_latent_cache_has_the_kv_cache_interface():
    cache = LatentCache(n_layers=2)
    latents, rope_keys = cache.update(0, np.ones((1, 3, 8)), np.zeros((1, 3, 2)))
    assert latents.shape == (1, 3, 8) and rope_keys.shape == (1, 3, 2) and len(cache) == 3
    cache.update(0, np.ones((1, 1, 8)), np.zeros((1, 1, 2)))
    assert cache.latents(0).shape == (1, 4, 8) and cache.rope_keys(1) is None
    assert cache.nbytes == 4 * (8 + 2) * 8 and "LatentCache(2 layers, 4 tokens seen" in repr(cache)
    with pytest.raises(ValueError, match="only the sequence axis"):
        cache.update(0, np.ones((1, 1, 5)), np.zeros((1, 1, 2)))


def test_qkv_of_a_latent_layer_gives_each_heads_rebuilt_keys_and_values():
    model = random_decoder(np.random.default_rng(5), config=config_json("deepseek-v3"))
    c, m = model.config, model.config.latent
    ids = np.arange(6) * 11
    x = model.forward(ids).hidden_states[1]
    q, k, v = model.qkv(1, x, np.arange(6))
    assert q.shape == k.shape == (c.n_heads, 6, m.qk_head_dim) and v.shape == (c.n_heads, 6, m.v_head_dim)
    assert np.array_equal(k[0, :, m.qk_nope_head_dim:], k[3, :, m.qk_nope_head_dim:])  # one RoPE key for every head
    q_raw, k_raw, v_raw = model.qkv(1, x, np.arange(6), rotate=False)
    np.testing.assert_array_equal(v_raw, v)
    np.testing.assert_array_equal(k_raw[..., :m.qk_nope_head_dim], k[..., :m.qk_nope_head_dim])
    factor = c.ropes[1].frequencies(m.qk_rope_head_dim)[1]  # YaRN's: not applied without the rotation
    np.testing.assert_allclose(np.linalg.norm(k[..., m.qk_nope_head_dim:], axis=-1),
                               factor * np.linalg.norm(k_raw[..., m.qk_nope_head_dim:], axis=-1), rtol=1e-12)
