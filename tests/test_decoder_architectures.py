"""Every architecture load_decoder runs, in NumPy alone: random weights, the invariants a forward pass must keep.

For each configuration of tests/decoder_models.py (no torch: `config_json`
gives them as config.json would), a model with random weights in float64:
the cache, chunk by chunk, gives the numbers of one pass over everything;
greedy tokens are the same with and without it; weights are zero where a
window hides a key, rows sum to 1 (or less, with sinks). Then what each
option does, on its own: QK-norm, NoPE layers, soft-caps, sinks, Gemma's
scaled embeddings, latent attention's cache.
"""

import dataclasses

import numpy as np
import pytest

from attention_course.decoder import LatentCache, cache_bytes, random_decoder
from attention_course.decoder.model import DecoderModel
from decoder_models import ARCHITECTURES, GEMMA3N, MINIMAX_LLAMA4, config_json

IDS = np.array([5, 17, 3, 250, 9, 9, 44, 310, 2, 71, 8, 160, 33])


@pytest.fixture(scope="module", params=sorted((*ARCHITECTURES, *MINIMAX_LLAMA4, *GEMMA3N)))
def name(request):
    return request.param


@pytest.fixture(scope="module")
def model(name):
    return random_decoder(np.random.default_rng(len(name)), config=config_json(name))


def with_config(model, **changes):
    """The same weights under a changed config."""
    config = dataclasses.replace(model.config, **changes)
    return DecoderModel(dataclasses.replace(model.weights, config=config))


def with_layers(model, **changes):
    layers = tuple(dataclasses.replace(layer, **changes) for layer in model.weights.layers)
    return DecoderModel(dataclasses.replace(model.weights, layers=layers))


@pytest.mark.parametrize("keep_window", [False, True])
def test_the_cache_chunk_by_chunk_equals_one_pass_over_everything(model, keep_window):
    if any(r is not None and r.rope_type == "dynamic" for r in model.config.ropes):
        pytest.skip("dynamic RoPE: each call's frequencies depend on its longest position, by design")
    full = model.forward(IDS)
    cache = model.new_cache(keep_window=keep_window)
    start = 0
    for size in (5, 1, 4, 1, 2):
        out = model.forward(IDS[start:start + size], cache)
        stop = start + size
        np.testing.assert_allclose(out.logits, full.logits[start:stop], rtol=0, atol=1e-11)
        np.testing.assert_allclose(out.attentions, full.attentions[:, :, start:stop, :stop], rtol=0, atol=1e-13)
        start = stop
    assert len(cache) == len(IDS)
    assert cache.nbytes == cache_bytes(model.config, len(IDS), dtype="float64", keep_window=keep_window)


def test_greedy_tokens_are_the_same_with_and_without_the_cache(model):
    np.testing.assert_array_equal(model.generate(IDS[:4], 8), model.generate(IDS[:4], 8, use_cache=False))


def test_the_weights_respect_the_windows_and_sum_as_they_should(model):
    w = model.forward(IDS).attentions  # (L, h, n, n)
    n = len(IDS)
    for layer, window in enumerate(model.config.windows):
        i, j = np.indices((n, n))
        hidden = (j > i) if window is None else (j > i) | (j <= i - window)
        assert np.all(w[layer][:, hidden] == 0), f"layer {layer}"
    sums = w.sum(axis=-1)
    if model.config.sinks:
        assert np.all(sums < 1)
    else:
        np.testing.assert_allclose(sums, 1, rtol=1e-13)


def test_float32_weights_compute_in_float32(name):
    out = random_decoder(np.random.default_rng(0), config=config_json(name), dtype=np.float32).forward(IDS)
    assert out.logits.dtype == out.attentions.dtype == out.hidden_states.dtype == np.float32


def test_qk_norm_makes_the_scores_blind_to_the_scale_of_the_projections():
    model = random_decoder(np.random.default_rng(1), config=config_json("qwen3"))

    def scaled(m):  # queries 50 times, keys 7 times larger
        layers = tuple(dataclasses.replace(p, w_q=p.w_q * 50.0, w_k=p.w_k * 7.0) for p in m.weights.layers)
        return DecoderModel(dataclasses.replace(m.weights, layers=layers))

    # equal but for the eps inside the norm, 1e-6 against mean squares of about 1
    np.testing.assert_allclose(scaled(model).forward(IDS).logits, model.forward(IDS).logits, rtol=0, atol=1e-5)
    plain = with_layers(model, q_norm=None, k_norm=None)  # without QK-norm the same change moves everything
    assert np.abs(scaled(plain).forward(IDS).logits - plain.forward(IDS).logits).max() > 0.1


def test_a_layer_without_positions_does_not_rotate():
    model = random_decoder(np.random.default_rng(2), config=config_json("smollm3"))
    x = model.forward(IDS).hidden_states
    positions = np.arange(len(IDS))
    for layer, rope in enumerate(model.config.ropes):
        rotated, raw = model.qkv(layer, x[layer], positions), model.qkv(layer, x[layer], positions, rotate=False)
        same = all(np.array_equal(a, b) for a, b in zip(rotated, raw))
        assert same == (rope is None), f"layer {layer}"
    assert model.config.ropes[1] is None  # no_rope_layers = [1, 0, 1]


def test_soft_caps_bound_the_scores_and_the_logits():
    model = random_decoder(np.random.default_rng(3), config=config_json("gemma2"))
    logits = model.forward(IDS).logits
    assert np.abs(logits).max() < model.config.final_softcap
    uncapped = with_config(model, final_softcap=None).forward(IDS).logits
    np.testing.assert_allclose(logits, 5.0 * np.tanh(uncapped / 5.0), rtol=1e-13)


def test_sinks_take_weight_from_every_row():
    model = random_decoder(np.random.default_rng(4), config=config_json("gpt-oss"))
    layers = tuple(dataclasses.replace(p, sinks=np.full(p.sinks.shape, 3.0)) for p in model.weights.layers)
    strong = DecoderModel(dataclasses.replace(model.weights, layers=layers))
    weak = with_layers(model, sinks=np.full(model.config.n_heads, -np.inf))  # no sink at all
    assert np.all(strong.forward(IDS).attentions.sum(axis=-1) < 1)
    np.testing.assert_allclose(weak.forward(IDS).attentions.sum(axis=-1), 1, rtol=1e-13)


def test_gemma_scales_its_embeddings_by_sqrt_d_model_rounded_to_float32():
    model = random_decoder(np.random.default_rng(5), config=config_json("gemma3"))
    x = model.embed(IDS)
    scale = np.float64(np.float32(np.sqrt(32)))
    np.testing.assert_array_equal(x, model.weights.embeddings[IDS] * scale)


def test_latent_attention_caches_only_the_latents_and_the_shared_rope_keys():
    model = random_decoder(np.random.default_rng(6), config=config_json("deepseek-v3"))
    c, m = model.config, model.config.latent
    cache = model.new_cache()
    model.forward(IDS, cache)
    assert isinstance(cache, LatentCache)
    for layer in range(c.n_layers):
        assert cache.latents(layer).shape == (1, len(IDS), m.kv_lora_rank)
        assert cache.rope_keys(layer).shape == (1, len(IDS), m.qk_rope_head_dim)
    per_token = c.n_layers * (m.kv_lora_rank + m.qk_rope_head_dim) * 8
    assert cache.nbytes == len(IDS) * per_token
    per_head = c.n_layers * c.n_heads * (m.qk_head_dim + m.v_head_dim) * 8
    assert cache_bytes(c, len(IDS), "float64", latent=False) == len(IDS) * per_head > cache.nbytes


def test_repr_names_each_architecture(model):
    text = repr(model)
    assert model.config.model_type in text and f"{model.config.n_layers} layers" in text
    if model.config.moe is not None:
        assert f"{model.config.moe.n_experts} experts" in text
