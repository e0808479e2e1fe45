"""The hybrid decoders in NumPy alone (decoder/delta.py, decoder/hybrid_cache.py, decoder/config_hybrid.py):
random models of each configuration in tests/decoder_models.py's HYBRIDS, their cache, their layouts and the
config.json options they refuse. tests/test_decoder_hybrid.py compares them with transformers."""

import dataclasses
import doctest

import numpy as np
import pytest

from attention_course.decoder import (
    DecoderConfig, HybridCache, KVCache, UnsupportedConfigError, cache_bytes, random_decoder,
)
from attention_course.decoder import delta, hybrid_cache
from attention_course.decoder.config_hybrid import DeltaRuleConfig
from attention_course.decoder.size import parameter_count
from decoder_models import HYBRIDS, config_json

IDS = np.random.default_rng(0).integers(0, 320, 80)


@pytest.fixture(scope="module", params=sorted(HYBRIDS))
def model(request):
    return random_decoder(np.random.default_rng(len(request.param)), config=config_json(request.param))


def test_the_cache_call_by_call_equals_one_pass_over_everything(model):
    full = model.forward(IDS)
    cache = model.new_cache()
    assert isinstance(cache, HybridCache)
    start = 0
    for size in (5, 1, 67, 1, 6):  # 67: a full chunk of 64 and a part, after a state was carried
        out = model.forward(IDS[start:start + size], cache)
        stop = start + size
        np.testing.assert_allclose(out.logits, full.logits[start:stop], rtol=0, atol=1e-10)
        np.testing.assert_allclose(out.hidden_states, full.hidden_states[:, start:stop], rtol=0, atol=1e-10)
        np.testing.assert_allclose(out.attentions, full.attentions[:, :, start:stop, :stop], rtol=0, atol=1e-12)
        start = stop
    assert len(cache) == len(IDS)
    assert cache.nbytes == cache_bytes(model.config, len(IDS), dtype="float64")


def test_a_delta_rule_layer_keeps_the_same_bytes_whatever_the_length(model):
    c = model.config
    short, long = model.new_cache(), model.new_cache()
    model.forward(IDS[:3], short)
    model.forward(IDS, long)
    for layer in range(c.n_layers):
        if c.delta.is_delta_layer(layer):
            conv, state = long.state(layer)
            assert state.shape == (c.delta.n_v_heads, c.delta.d_k, c.delta.d_v)
            assert conv.shape == (c.delta.conv_width - 1, 2 * c.delta.key_dim + c.delta.value_dim)
            assert [a.shape for a in short.state(layer)] == [conv.shape, state.shape]
            assert long.kept(layer) == 0 and long.keys(layer) is None
        else:
            assert long.kept(layer) == len(IDS) and short.kept(layer) == 3
    softmax_layers = sum(not c.delta.is_delta_layer(i) for i in range(c.n_layers))
    per_layer = c.latent.kv_lora_rank + c.latent.qk_rope_head_dim if c.latent else c.n_kv_heads * (c.head_dim + c.v_head_dim)
    per_token = softmax_layers * per_layer * 8  # float64 keys and values (latents and RoPE keys for Kimi)
    assert long.nbytes - short.nbytes == (len(IDS) - 3) * per_token


def test_delta_rule_layers_weigh_no_keys_and_softmax_rows_sum_to_one(model):
    out = model.forward(IDS[:12])
    for layer in range(model.config.n_layers):
        if model.config.delta.is_delta_layer(layer):
            assert not np.any(out.attentions[layer])
        else:
            np.testing.assert_allclose(out.attentions[layer].sum(-1), 1, atol=1e-12)


def test_the_layout_counts_what_the_loader_takes(model):
    from attention_course.decoder.layout import checkpoint_shapes
    from attention_course.decoder.weights import decoder_weights

    shapes = checkpoint_shapes(model.config)
    assert parameter_count(model.config) == sum(int(np.prod(s)) for s in shapes.values())
    tensors = {name: np.zeros(shape) for name, shape in shapes.items()}
    decoder_weights(tensors, model.config, np.float64)  # every tensor used, none missing
    with pytest.raises(UnsupportedConfigError, match="would not use"):
        decoder_weights({**tensors, "model.layers.0.linear_attn.extra": np.zeros(3)}, model.config, np.float64)


def _grouped(d: DeltaRuleConfig, w_q, w_k, w_v, w_z, w_b, w_a):
    """Qwen3-Next's in_proj_qkvz and in_proj_ba (out, in) from the (in, out) projections: rows per key head."""
    g, n_k = d.n_v_heads // d.n_k_heads, d.n_k_heads
    per_head = [np.concatenate([w_q.T.reshape(n_k, d.d_k, -1)[i], w_k.T.reshape(n_k, d.d_k, -1)[i],
                                w_v.T.reshape(n_k, g * d.d_v, -1)[i], w_z.T.reshape(n_k, g * d.d_v, -1)[i]])
                for i in range(n_k)]
    ba = [np.concatenate([w_b.T.reshape(n_k, g, -1)[i], w_a.T.reshape(n_k, g, -1)[i]]) for i in range(n_k)]
    return np.concatenate(per_head), np.concatenate(ba)


def test_the_three_layouts_read_into_the_same_weights():
    d = DeltaRuleConfig(("linear_attention",), n_k_heads=2, n_v_heads=6, d_k=3, d_v=2, conv_width=4,
                        projections="grouped", norm_eps=1e-6)
    rng = np.random.default_rng(1)
    d_model = 5
    ws = {x: rng.standard_normal((d_model, width)) for x, width in
          (("q", d.key_dim), ("k", d.key_dim), ("v", d.value_dim), ("z", d.value_dim), ("b", 6), ("a", 6))}
    common = {"conv1d.weight": rng.standard_normal((2 * d.key_dim + d.value_dim, 1, 4)), "A_log": np.zeros(6),
              "dt_bias": np.zeros(6)}
    qkvz, ba = _grouped(d, *(ws[x] for x in "qkvzba"))
    files = {
        "grouped": {"in_proj_qkvz.weight": qkvz, "in_proj_ba.weight": ba, "norm.weight": np.ones(2),
                    "out_proj.weight": np.ones((d_model, d.value_dim))},
        "split": {"in_proj_qkv.weight": np.concatenate([ws["q"].T, ws["k"].T, ws["v"].T]),
                  "in_proj_z.weight": ws["z"].T, "in_proj_b.weight": ws["b"].T, "in_proj_a.weight": ws["a"].T,
                  "norm.weight": np.ones(2), "out_proj.weight": np.ones((d_model, d.value_dim))},
        "separate": {**{f"{'g' if x == 'z' else x}_proj.weight": ws[x].T for x in "qkvzba"},
                     "o_norm.weight": np.ones(2), "o_proj.weight": np.ones((d_model, d.value_dim))},
    }
    for projections, tensors in files.items():
        layer = dataclasses.replace(d, projections=projections)
        stored = {"p." + k: v for k, v in {**tensors, **common}.items()}
        assert {k: v.shape for k, v in stored.items()} == delta.delta_layer_shapes(layer, d_model, "p.")
        got = delta.read_delta_weights(layer, "p.", stored.__getitem__, np.asarray)
        for x in "qkvzba":
            np.testing.assert_array_equal(getattr(got, f"w_{x}"), ws[x], err_msg=f"{projections}: w_{x}")


def test_olmo_hybrid_file_names_read_as_transformers_module_names():
    conv = [np.full((2, 1, 4), i) for i in range(3)]
    names = delta.canonical_names({"model.layers.0.attention_layer_norm.weight": 1,
                                   "model.layers.0.feedforward_layer_norm.weight": 2,
                                   **{f"model.layers.0.linear_attn.{x}_conv1d.weight": c for x, c in zip("qkv", conv)},
                                   "model.language_model.norm.weight": 3})
    assert set(names) == {"model.layers.0.input_layernorm.weight", "model.layers.0.post_attention_layernorm.weight",
                          "model.layers.0.linear_attn.conv1d.weight", "model.norm.weight"}
    np.testing.assert_array_equal(names["model.layers.0.linear_attn.conv1d.weight"][:, 0, 0], [0, 0, 1, 1, 2, 2])


def test_the_hybrid_cache_keeps_each_kind_apart():
    cache = HybridCache(2, [True, False])
    with pytest.raises(ValueError, match="delta-rule layer"):
        cache.update(0, np.ones((1, 2, 3)), np.ones((1, 2, 3)))
    with pytest.raises(ValueError, match="softmax-attention layer"):
        cache.state(1)
    assert cache.state(0) == (None, None)
    conv, state = np.ones((3, 4)), np.ones((2, 3, 3))
    cache.set_state(0, conv, state, n_new=7)
    conv[:] = 0  # the cache keeps its own copy
    kept_conv, kept_state = cache.state(0)
    assert kept_conv.sum() == 12 and not kept_conv.flags.writeable and len(cache) == 7
    with pytest.raises(ValueError, match="one entry per layer"):
        HybridCache(3, [True])
    model = random_decoder(np.random.default_rng(0), config=config_json("qwen3.5"))
    with pytest.raises(TypeError, match="HybridCache"):
        model.forward(IDS[:2], KVCache(model.config.n_layers))
    assert doctest.testmod(hybrid_cache, optionflags=doctest.ELLIPSIS).failed == 0


def _read(**changes):
    return DecoderConfig.from_dict({**config_json("qwen3-next"), **changes})


@pytest.mark.parametrize("changes, key", [
    ({"layer_types": ["linear_attention", "mamba", "full_attention", "full_attention"]}, "layer_types"),
    ({"layer_types": ["full_attention"]}, "layer_types"),
    ({"linear_num_value_heads": 3}, "linear_num_value_heads"),
    ({"hidden_act": "gelu"}, "hidden_act"),
    ({"rope_parameters": {"rope_type": "default", "rope_theta": 100.0, "partial_rotary_factor": 0.1}},
     "partial_rotary_factor"),
    ({"num_experts_per_tok": 9}, "num_experts_per_tok"),
    ({"model_type": "qwen3_5"}, "text_config"),
])
def test_what_is_not_implemented_is_refused_naming_the_key(changes, key):
    with pytest.raises(UnsupportedConfigError, match=key):
        _read(**changes)


def test_the_families_defaults_are_transformers():
    c = DecoderConfig.from_dict({"model_type": "qwen3_next"})  # Qwen3-Next-80B-A3B's shape, every key left out
    assert (c.n_layers, c.head_dim, c.rope_dim, c.moe.n_experts, c.moe.top_k) == (48, 256, 64, 512, 10)
    assert c.delta.layer_types[:4] == ("linear_attention",) * 3 + ("full_attention",)
    assert (c.delta.n_k_heads, c.delta.n_v_heads, c.delta.d_k, c.delta.d_v) == (16, 32, 128, 128)
    o = DecoderConfig.from_dict({"model_type": "olmo_hybrid", "num_hidden_layers": 3})
    assert o.delta.layer_types == ("linear_attention", "linear_attention", "full_attention")  # the last one at least
    assert (o.delta.d_k, o.delta.d_v, o.delta.beta_scale, o.delta.norm_eps) == (96, 192, 2.0, 1e-5)
    assert o.qk_norm_scope == "projection" and o.delta.attention_post_norms and o.rotary_dim is None
    k = DecoderConfig.from_dict({"model_type": "kimi_linear", "num_key_value_heads": 32})  # Kimi Linear 48B's shape
    assert k.delta.layer_types[:5] == ("linear_attention",) * 4 + ("full_attention",) and k.ropes == (None,) * 27
    assert (k.delta.n_v_heads, k.delta.d_k, k.delta.per_channel_decay, k.delta.gate_activation) == (32, 128, True, "sigmoid")
    assert (k.latent.kv_lora_rank, k.moe.n_experts, k.moe.top_k, k.is_moe_layer(0), k.is_moe_layer(1)) == (512, 256, 8, False, True)
    renamed = DecoderConfig.from_dict({"model_type": "kimi_linear", "num_hidden_layers": 4, "num_experts": 16,
                                       "num_experts_per_token": 3, "model_max_length": 4096,
                                       "linear_attn_config": {"head_dim": 16, "num_heads": 2, "short_conv_kernel_size": 2,
                                                              "full_attn_layers": [2], "kda_layers": [1, 3, 4]}})
    assert (renamed.moe.n_experts, renamed.moe.top_k, renamed.max_positions) == (16, 3, 4096)
    assert renamed.delta.layer_types == ("linear_attention", "full_attention", "linear_attention", "linear_attention")
    assert (renamed.delta.d_k, renamed.delta.n_v_heads, renamed.delta.conv_width) == (16, 2, 2)


@pytest.mark.parametrize("name", [n for n in sorted(HYBRIDS) if "kimi" not in n])
def test_the_older_top_level_rope_keys_read_the_same(name):
    """Qwen3-Next's published config.json: rope_theta and partial_rotary_factor at the top level, rope_scaling null."""
    new = config_json(name)
    old = {k: v for k, v in new.items() if k != "rope_parameters"}
    params = dict(new["rope_parameters"])
    old["rope_theta"] = params.pop("rope_theta")
    if "partial_rotary_factor" in params:
        old["partial_rotary_factor"] = params.pop("partial_rotary_factor")
    old["rope_scaling"] = None
    assert DecoderConfig.from_dict(old) == DecoderConfig.from_dict(new)
