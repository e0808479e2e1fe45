"""Tests for attention_course/decoder/config_json.py: config.json read per family, in both forms, as transformers reads it.

No torch needed: the expected values are transformers' configuration defaults
for each model type (test_decoder_transformers.py checks the whole reading
against transformers itself where it is installed).
"""

import pytest

from attention_course.core.rope_scaling import RopeScaling, yarn_mscale
from attention_course.decoder import DecoderConfig, UnsupportedConfigError
from attention_course.decoder.config_json import MODEL_TYPES
from decoder_models import ARCHITECTURES, DEEPSEEK_V4, GEMMA3N, HYBRIDS, MINIMAX_LLAMA4, config_json, older_form

BASE = {"vocab_size": 10, "hidden_size": 16, "num_hidden_layers": 4, "num_attention_heads": 2, "intermediate_size": 8}


def read(**fields):
    return DecoderConfig.from_dict({**BASE, **fields})


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_rope_parameters_and_the_older_top_level_keys_give_the_same_config(name):
    new, old = config_json(name), older_form(config_json(name))
    assert "rope_parameters" not in old
    assert DecoderConfig.from_dict(new) == DecoderConfig.from_dict(old)


def test_every_family_is_read():
    read_types = {DecoderConfig.from_dict(config_json(name)).model_type
                  for name in (*ARCHITECTURES, *MINIMAX_LLAMA4, *GEMMA3N, *HYBRIDS, *DEEPSEEK_V4)}
    assert read_types == set(MODEL_TYPES)


def test_llama_rope_scalings_in_both_forms():
    llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
              "original_max_position_embeddings": 8192}
    new = read(model_type="llama", max_position_embeddings=131072, rope_parameters={"rope_theta": 500000.0, **llama3})
    old = read(model_type="llama", max_position_embeddings=131072, rope_theta=500000.0, rope_scaling=llama3)
    assert new == old and new.rope_theta == 500000.0
    assert new.ropes == (RopeScaling("llama3", 500000.0, 8.0, 8192, 131072, 1.0, 4.0),) * 4
    linear = read(model_type="llama", rope_theta=1000.0, rope_scaling={"type": "linear", "factor": 2.0})  # "type": older still
    assert linear.ropes[0] == RopeScaling("linear", 1000.0, factor=2.0, max_positions=2048)  # LlamaConfig's default
    # a top-level original_max_position_embeddings wins over the one in rope_scaling, as transformers lets it
    top = read(model_type="llama", max_position_embeddings=64, original_max_position_embeddings=32, rope_scaling=llama3)
    assert top.ropes[0].original_context == 32


def test_yarn_takes_its_factor_from_the_two_context_lengths_when_config_json_gives_none():
    c = read(model_type="qwen3", max_position_embeddings=131072,
             rope_parameters={"rope_type": "yarn", "original_max_position_embeddings": 32768})
    assert c.ropes[0].factor == 4.0 and c.ropes[0].truncate


def test_qwen3_defaults_and_windows():
    c = read(model_type="qwen3")
    assert (c.head_dim, c.qk_norm, c.qkv_bias, c.o_bias, c.windows) == (128, True, False, False, (None,) * 4)
    windowed = read(model_type="qwen3", use_sliding_window=True, sliding_window=5, max_window_layers=2)
    assert windowed.windows == (None, None, 5, 5)
    assert read(model_type="qwen3", use_sliding_window=True, sliding_window=5).windows == (None,) * 4  # from layer 28 on
    assert read(model_type="qwen3", attention_bias=True).o_bias  # unlike Qwen2, attention_bias covers all four


def test_gemma2_defaults_as_its_configuration_class_has_them():
    c = read(model_type="gemma2")
    assert c.windows == (4096, None, 4096, None)  # sliding first, then alternating
    assert (c.attn_softcap, c.final_softcap, c.norm_offset, c.sandwich_norms, c.activation) == (50.0, 30.0, 1.0, True, "gelu_tanh")
    assert c.scale == 256 ** -0.5 and c.embed_scale == 4.0 and c.head_dim == 256 and c.tie_word_embeddings
    assert read(model_type="gemma2", query_pre_attn_scalar=144).scale == 1 / 12


def test_gemma3_has_local_and_global_layers_each_with_its_own_rope():
    c = read(model_type="gemma3_text", num_hidden_layers=12)
    assert c.windows == ((4096,) * 5 + (None,)) * 2  # five local layers, then one global
    local, full = c.ropes[0], c.ropes[5]
    assert (local.base, full.base, c.rope_theta) == (10000.0, 1000000.0, 1000000.0)
    assert c.qk_norm and c.attn_softcap is None and c.final_softcap is None
    # the older form: rope_local_base_freq, and rope_scaling for the global layers only
    old = read(model_type="gemma3_text", num_hidden_layers=6, rope_theta=1e6, rope_local_base_freq=1e4,
               rope_scaling={"rope_type": "linear", "factor": 8.0}, sliding_window_pattern=3)
    assert old.windows == (4096, 4096, None) * 2
    assert old.ropes[2] == RopeScaling("linear", 1e6, factor=8.0, max_positions=131072)
    assert old.ropes[0].rope_type == "default"
    # {"type": "linear"} without rope_type: transformers 5 keeps Gemma 3's global RoPE plain, and so does this reader
    assert read(model_type="gemma3_text", num_hidden_layers=6, rope_scaling={"type": "linear", "factor": 8.0}).ropes[5].rope_type == "default"


def test_smollm3_leaves_every_fourth_layer_without_positions():
    c = read(model_type="smollm3", num_hidden_layers=8)
    assert [r is None for r in c.ropes] == [False, False, False, True] * 2
    assert c.rope_theta == 2_000_000.0
    given = read(model_type="smollm3", no_rope_layers=[0, 1, 1, 0])
    assert [r is None for r in given.ropes] == [True, False, False, True]


def test_gpt_oss_defaults_as_its_configuration_class_has_them():
    c = read(model_type="gpt_oss", num_hidden_layers=4)
    assert c.windows == (128, None, 128, None) and c.sinks and c.qkv_bias and c.o_bias and c.head_dim == 64
    assert c.ropes[0] == RopeScaling("yarn", 150000.0, 32.0, 4096, 131072, beta_fast=32.0, beta_slow=1.0, truncate=False)
    assert (c.moe.router, c.moe.n_experts, c.moe.top_k, c.moe.d_expert) == ("softmax_top_k", 128, 4, 8)
    assert (c.moe.swiglu_alpha, c.moe.swiglu_limit, c.rms_norm_eps) == (1.702, 7.0, 1e-5)


def test_deepseek_v3_latent_attention_and_its_softmax_scale():
    yarn = {"type": "yarn", "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096}
    c = read(model_type="deepseek_v3", num_attention_heads=128, rope_theta=10000, rope_scaling=yarn,
             max_position_embeddings=163840, num_key_value_heads=128)
    m = c.latent
    assert (m.kv_lora_rank, m.qk_rope_head_dim, m.qk_nope_head_dim, m.v_head_dim, m.q_lora_rank) == (512, 64, 128, 128, 1536)
    assert c.head_dim == 192 and c.rope_dim == 64 and c.v_head_dim == 128 and c.rope_interleaved
    assert c.scale == pytest.approx(192 ** -0.5 * yarn_mscale(40, 1.0) ** 2, rel=1e-15)
    assert c.ropes[0].frequencies(64)[1] == 1.0  # the attention factor: mscale / mscale_all_dim
    assert (c.moe.first_layer, c.moe.n_group, c.moe.topk_group, c.moe.n_shared_experts) == (3, 8, 4, 1)
    assert c.attention_kind == "multi-head latent" and c.extra_layers == 1
    plain = read(model_type="deepseek_v3", q_lora_rank=None, rope_interleave=False)
    assert plain.latent.q_lora_rank is None and not plain.rope_interleaved and plain.scale == 192 ** -0.5


@pytest.mark.parametrize("rope", [{"rope_type": "linear", "factor": 4.0}, {"rope_type": "dynamic", "factor": 4.0},
                                  {"rope_type": "llama3", "factor": 4.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                   "original_max_position_embeddings": 16}])
def test_deepseek_v3_scales_its_softmax_by_mscale_all_dim_under_every_scaled_rope(rope):
    c = read(model_type="deepseek_v3", num_key_value_heads=2, rope_parameters={**rope, "mscale_all_dim": 0.8})
    assert c.scale == pytest.approx(192 ** -0.5 * yarn_mscale(4.0, 0.8) ** 2, rel=1e-15)
    assert c.ropes[0].frequencies(64)[1] == 1.0  # the attention factor is YaRN's alone
    unscaled = read(model_type="deepseek_v3", num_key_value_heads=2, rope_parameters={"rope_type": "default",
                                                                                        "mscale_all_dim": 0.8})
    assert unscaled.scale == 192 ** -0.5


def test_gemma3_reads_the_per_type_rope_dicts_beside_the_keys_of_a_single_one():
    """What transformers saves for Gemma 3 given one dict: its keys, and the per-type defaults it uses."""
    given = {"rope_type": "linear", "factor": 2.0, "rope_theta": 1000.0,
             "full_attention": {"rope_type": "default", "rope_theta": 1e6},
             "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}
    c = read(model_type="gemma3_text", layer_types=["sliding_attention", "full_attention"] * 2, rope_parameters=given)
    assert [r.base for r in c.ropes] == [1e4, 1e6] * 2 and {r.rope_type for r in c.ropes} == {"default"}


@pytest.mark.parametrize("fields, match", [
    ({"model_type": "gemma3"}, "text_config"),
    ({"model_type": "phi3"}, "model_type 'phi3' is not one this package runs"),
    ({"model_type": "llama", "quantization_config": {"quant_method": "fp8"}}, r"quantization_config\.weight_block_size"),
    ({"model_type": "gpt_oss", "quantization_config": {"quant_method": "mxfp4"}}, r"quantization_config \('mxfp4'\).*MXFP4"),
    ({"model_type": "llama", "quantization_config": {"quant_method": "bitsandbytes"}}, r"quantization_config \('bitsandbytes'\)"),
    ({"model_type": "llama", "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128],
                                                     "activation_scheme": "static"}}, "activation_scheme = 'static'"),
    ({"model_type": "gemma3_text", "use_bidirectional_attention": True}, "use_bidirectional_attention"),
    ({"model_type": "llama", "partial_rotary_factor": 0.5}, "partial_rotary_factor = 0.5"),
    ({"model_type": "llama", "rope_parameters": {"rope_type": "yarn", "factor": 2.0, "partial_rotary_factor": 0.25}},
     r"rope_parameters\.partial_rotary_factor"),
    ({"model_type": "llama", "rope_scaling": {"rope_type": "longrope", "factor": 2.0}}, r"rope_scaling\.rope_type = 'longrope'"),
    ({"model_type": "llama", "rope_scaling": {"rope_type": "llama3", "factor": 8.0}}, "'low_freq_factor' is missing"),
    ({"model_type": "llama", "rope_scaling": {"rope_type": "linear"}}, r"rope_scaling\.factor is missing"),
    ({"model_type": "llama", "hidden_act": "gelu"}, "hidden_act 'gelu'"),
    ({"model_type": "gemma2", "hidden_activation": "gelu"}, "hidden_activation 'gelu'"),
    ({"model_type": "deepseek_v3", "scoring_func": "softmax"}, "scoring_func = 'softmax'"),
    ({"model_type": "deepseek_v3", "topk_method": "greedy"}, "topk_method = 'greedy'"),
    ({"model_type": "deepseek_v3", "num_key_value_heads": 1}, "num_key_value_heads must equal"),
    ({"model_type": "deepseek_v3", "n_routed_experts": 10, "n_group": 4}, "n_routed_experts = 10"),
    ({"model_type": "deepseek_v3", "n_routed_experts": 8, "n_group": 2, "topk_group": 1, "num_experts_per_tok": 5},
     "num_experts_per_tok = 5"),
    ({"model_type": "gpt_oss", "layer_types": ["full_attention"] * 3}, "layer_types has 3 entries for 4 layers"),
    ({"model_type": "gpt_oss", "layer_types": ["chunked_attention"] * 4}, r"layer_types \['chunked_attention'\]"),
    ({"model_type": "smollm3", "no_rope_layers": [1, 0]}, "no_rope_layers has 2 entries"),
    ({"model_type": "gemma3_text", "rope_parameters": {"full_attention": {"rope_type": "default"}}},
     r"no entry for the layer types \['sliding_attention'\]"),
    ({"model_type": "qwen2", "layer_types": ["sliding_attention"] * 4}, "sliding_window is null"),
    ({"model_type": "qwen3", "layer_types": ["sliding_attention"] * 4, "sliding_window": 4},
     r"null \(use_sliding_window is false"),
    ({"model_type": "gemma3_text", "rope_parameters": {"rope_type": "linear", "factor": 2.0}},
     "rope_parameters for gemma3_text needs one dict per layer type"),
])
def test_what_is_not_implemented_is_refused_naming_the_key(fields, match):
    with pytest.raises(UnsupportedConfigError, match=match):
        read(**fields)
