"""Tiny random decoders built by transformers, for the tests of attention_course.decoder.

No download: each model is built from a config, its weights re-drawn so that
attention is far from uniform (transformers' own initialisation, normal with
std 0.02, makes every score nearly 0), and saved with `save_pretrained` as a
checkpoint folder. Every architecture `load_decoder` runs is here, most in
several configurations (sizes, windows, RoPE scalings, expert counts, low-rank
queries or not), in ARCHITECTURES; VARIANTS adds options and corners each
family reads its own way (RoPE rules with their rarer keys, windows of 1 or
none, layer_types written out or left to the defaults). Used by
tests/test_decoder_transformers.py (ARCHITECTURES),
tests/test_decoder_transformers_variants.py (VARIANTS), by the NumPy-only
tests (`config_json` gives the same configurations without transformers) and
by tests/fixtures/make_decoder_checkpoint.py, which commits one of them.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np

SENTENCES = (
    "my card was blocked",
    "why is my card blocked",
    "the bank bot answers questions about cards, payments and accounts",
    "a blocked card cannot pay; unblock it in the app or call the bank",
    "the lessee shall indemnify the lessor",
)
"""What the tiny tokenizer is trained on."""

PROMPT = "why is my card blocked? the bank bot answers"
"""A prompt longer than every sliding window below."""

COMMON = dict(vocab_size=320, hidden_size=32, intermediate_size=48, num_attention_heads=4, max_position_embeddings=256,
              bos_token_id=None, eos_token_id=0, pad_token_id=None)

ARCHITECTURES = {
    # Llama 3's layout: GQA, untied output projection, a large RoPE base.
    "llama": ("LlamaForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=2,
                                        rope_parameters={"rope_type": "default", "rope_theta": 500000.0})),
    # Every Llama option: biases on every projection, tied embeddings, head_dim not hidden / heads.
    "llama-options": ("LlamaForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=4, head_dim=12,
                                                attention_bias=True, mlp_bias=True, tie_word_embeddings=True,
                                                rope_parameters={"rope_type": "default", "rope_theta": 100.0})),
    # Llama 3.1's RoPE: with d = 8 and base 10^4, one pair kept, one blended, two slowed by the factor.
    "llama3-rope": ("LlamaForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=2, max_position_embeddings=512,
                                              rope_parameters={"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0,
                                                               "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                               "original_max_position_embeddings": 64})),
    "llama-linear-rope": ("LlamaForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=1, head_dim=6,
                                                    rope_parameters={"rope_type": "linear", "rope_theta": 1000.0,
                                                                     "factor": 2.5})),
    # Dynamic NTK: a trained context of 8 tokens, shorter than the prompt, so the base grows with every token.
    "llama-dynamic-rope": ("LlamaForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=2, max_position_embeddings=8,
                                                     rope_parameters={"rope_type": "dynamic", "rope_theta": 10000.0,
                                                                      "factor": 3.0})),
    # Mistral: a sliding window much shorter than the prompt on every layer, multi-query attention.
    "mistral": ("MistralForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=1, sliding_window=4,
                                            rope_parameters={"rope_type": "default", "rope_theta": 10000.0})),
    # Qwen2: q/k/v biases, tied embeddings, full attention in layer 0 and a sliding window from layer 1 on.
    "qwen2": ("Qwen2ForCausalLM", dict(num_hidden_layers=3, num_key_value_heads=2, use_sliding_window=True,
                                        sliding_window=5, max_window_layers=1, tie_word_embeddings=True,
                                        rope_parameters={"rope_type": "default", "rope_theta": 1000.0})),
    # Qwen3: QK-norm, head_dim 12 (not 32 / 4).
    "qwen3": ("Qwen3ForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=2, head_dim=12,
                                        rope_parameters={"rope_type": "default", "rope_theta": 1000.0})),
    # Qwen3 with every option: biases, MQA, tied embeddings, a window from layer 1 on, YaRN.
    "qwen3-window-yarn": ("Qwen3ForCausalLM", dict(num_hidden_layers=3, num_key_value_heads=1, head_dim=6,
                                                    max_position_embeddings=64,
                                                    attention_bias=True, tie_word_embeddings=True,
                                                    use_sliding_window=True, sliding_window=5, max_window_layers=1,
                                                    rope_parameters={"rope_type": "yarn", "rope_theta": 1000.0,
                                                                     "factor": 4.0, "original_max_position_embeddings": 16})),
    # Gemma 2: sliding and global layers alternating, scores capped at 3 (they bend), logits at 5,
    # query_pre_attn_scalar 10 (not head_dim), head_dim 12.
    "gemma2": ("Gemma2ForCausalLM", dict(num_hidden_layers=3, num_key_value_heads=2, head_dim=12, sliding_window=4,
                                          query_pre_attn_scalar=10, attn_logit_softcapping=3.0,
                                          final_logit_softcapping=5.0,
                                          rope_parameters={"rope_type": "default", "rope_theta": 10000.0})),
    "gemma2-mqa": ("Gemma2ForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=1, head_dim=8, sliding_window=6,
                                              layer_types=["full_attention", "sliding_attention"],
                                              query_pre_attn_scalar=8, attn_logit_softcapping=20.0,
                                              final_logit_softcapping=None, tie_word_embeddings=False,
                                              rope_parameters={"rope_type": "default", "rope_theta": 100.0})),
    # Gemma 3: QK-norm, local and global layers, each kind with its own RoPE (the global one scaled).
    "gemma3": ("Gemma3ForCausalLM", dict(num_hidden_layers=4, num_key_value_heads=2, head_dim=12, sliding_window=4,
                                          layer_types=["sliding_attention", "sliding_attention", "full_attention",
                                                       "sliding_attention"], query_pre_attn_scalar=12,
                                          rope_parameters={"full_attention": {"rope_type": "linear", "factor": 4.0,
                                                                              "rope_theta": 1000000.0},
                                                           "sliding_attention": {"rope_type": "default",
                                                                                 "rope_theta": 10000.0}})),
    "gemma3-mqa": ("Gemma3ForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=1, head_dim=16, sliding_window=3,
                                              layer_types=["full_attention", "sliding_attention"],
                                              query_pre_attn_scalar=16, final_logit_softcapping=8.0,
                                              rope_parameters={"full_attention": {"rope_type": "default",
                                                                                  "rope_theta": 1000.0},
                                                               "sliding_attention": {"rope_type": "default",
                                                                                     "rope_theta": 50.0}})),
    # SmolLM3: layers without positions (NoPE) among RoPE layers.
    "smollm3": ("SmolLM3ForCausalLM", dict(num_hidden_layers=3, num_key_value_heads=2, no_rope_layers=[1, 0, 1],
                                            rope_parameters={"rope_type": "default", "rope_theta": 1000.0})),
    "smollm3-interval": ("SmolLM3ForCausalLM", dict(num_hidden_layers=4, num_key_value_heads=4, no_rope_layer_interval=2,
                                                     attention_bias=True, mlp_bias=True, tie_word_embeddings=False,
                                                     rope_parameters={"rope_type": "default", "rope_theta": 2000000.0})),
    # gpt-oss: sinks, sliding and full layers alternating, its YaRN, biases, 4 experts, 2 per token.
    "gpt-oss": ("GptOssForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=2, head_dim=8, sliding_window=4,
                                           num_local_experts=4, num_experts_per_tok=2, intermediate_size=24,
                                           max_position_embeddings=131072)),
    "gpt-oss-8e": ("GptOssForCausalLM", dict(num_hidden_layers=3, num_key_value_heads=1, head_dim=6, sliding_window=3,
                                              num_local_experts=8, num_experts_per_tok=3, intermediate_size=16,
                                              swiglu_limit=1.0, swiglu_alpha=1.2, max_position_embeddings=256,
                                              rope_parameters={"rope_type": "yarn", "rope_theta": 500.0, "factor": 8.0,
                                                               "beta_fast": 8.0, "beta_slow": 0.5, "truncate": True,
                                                               "original_max_position_embeddings": 32})),
    # DeepSeek-V3: latent attention with low-rank queries, YaRN with its mscale, a dense layer then experts
    # (sigmoid scores, the correction bias, 2 groups of 4 with 1 kept, a shared expert).
    "deepseek-v3": ("DeepseekV3ForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=4, q_lora_rank=12,
                                                   kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4,
                                                   v_head_dim=6, first_k_dense_replace=1, n_routed_experts=8,
                                                   num_experts_per_tok=2, n_group=2, topk_group=1, n_shared_experts=1,
                                                   moe_intermediate_size=16, max_position_embeddings=64,
                                                   rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0,
                                                                    "factor": 4.0, "mscale": 0.707,
                                                                    "mscale_all_dim": 1.0, "beta_fast": 32, "beta_slow": 1,
                                                                    "original_max_position_embeddings": 16})),
    # DeepSeek-V3 with one query projection (q_lora_rank null), rotate-half RoPE, 16 experts in 4 groups.
    "deepseek-v3-plain-q": ("DeepseekV3ForCausalLM", dict(num_hidden_layers=3, num_key_value_heads=2, num_attention_heads=2,
                                                           q_lora_rank=None, kv_lora_rank=12, qk_nope_head_dim=6,
                                                           qk_rope_head_dim=6, v_head_dim=10, first_k_dense_replace=1,
                                                           n_routed_experts=16, num_experts_per_tok=3, n_group=4,
                                                           topk_group=2, n_shared_experts=2, moe_intermediate_size=8,
                                                           norm_topk_prob=False, routed_scaling_factor=1.5,
                                                           attention_bias=True, rope_interleave=False,
                                                           rope_parameters={"rope_type": "default", "rope_theta": 100.0})),
    # DeepSeek Sparse Attention (tests/test_decoder_sparse.py has more): an indexer keeps 4 of the prompt's keys
    # per query in DeepSeek-V3.2 (half-split RoPE in the indexer); GLM-5 (interleaved) reuses layer 0's choice in layer 1.
    "deepseek-v32": ("DeepseekV32ForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=4, q_lora_rank=12,
                                                    kv_lora_rank=8, qk_nope_head_dim=4, qk_rope_head_dim=4, v_head_dim=6,
                                                    n_routed_experts=4, num_experts_per_tok=2, n_group=2, topk_group=1,
                                                    moe_intermediate_size=16, first_k_dense_replace=1, index_n_heads=8,
                                                    index_head_dim=8, index_topk=4,
                                                    rope_parameters={"rope_type": "default", "rope_theta": 1000.0})),
    "glm-moe-dsa": ("GlmMoeDsaForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=4, q_lora_rank=10,
                                                 kv_lora_rank=8, qk_nope_head_dim=6, qk_rope_head_dim=4, v_head_dim=8,
                                                 n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                                                 first_k_dense_replace=1, index_n_heads=8, index_head_dim=6,
                                                 index_topk=6, indexer_types=["full", "shared"],
                                                 rope_parameters={"rope_type": "default", "rope_theta": 500.0})),
}
"""name -> (transformers class, config options beside COMMON): each architecture, several configurations of most."""

_DEEPSEEK = dict(num_hidden_layers=2, num_key_value_heads=4, kv_lora_rank=8, qk_nope_head_dim=4, qk_rope_head_dim=4,
                 v_head_dim=6, n_routed_experts=4, num_experts_per_tok=2, n_group=2, topk_group=1, n_shared_experts=1,
                 moe_intermediate_size=8, max_position_embeddings=64)

VARIANTS = {
    # Multi-head (h_kv = h_q), head_dim 10 with every bias, tied; YaRN with mscale and mscale_all_dim (their ratio
    # is the attention factor), a factor apart from max / original positions, a ramp not rounded (truncate false).
    "llama-mha-yarn": ("LlamaForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=4, head_dim=10,
                                                 attention_bias=True, mlp_bias=True, tie_word_embeddings=True,
                                                 rope_parameters={"rope_type": "yarn", "rope_theta": 1000.0, "factor": 4.0,
                                                                  "original_max_position_embeddings": 16, "mscale": 0.9,
                                                                  "mscale_all_dim": 1.1, "beta_fast": 8.0, "beta_slow": 0.5,
                                                                  "truncate": False})),
    # Multi-query; Llama 3.1's RoPE with other frequency factors: base 100, so pairs fall in all three bands.
    "llama-mqa-llama3": ("LlamaForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=1, mlp_bias=True,
                                                   rope_parameters={"rope_type": "llama3", "rope_theta": 100.0,
                                                                    "factor": 32.0, "low_freq_factor": 0.5,
                                                                    "high_freq_factor": 4.0,
                                                                    "original_max_position_embeddings": 32})),
    # YaRN's attention factor given outright, and original_max_position_embeddings at the top level, which
    # transformers puts above the one inside rope_parameters.
    "llama-yarn-attention-factor": ("LlamaForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=2,
                                                              original_max_position_embeddings=8,
                                                              rope_parameters={"rope_type": "yarn", "rope_theta": 100.0,
                                                                               "factor": 3.0, "attention_factor": 1.3,
                                                                               "original_max_position_embeddings": 16})),
    # Mistral without a window, head_dim 12, and dynamic NTK past a trained context of 8 tokens.
    "mistral-no-window-dynamic": ("MistralForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=2, head_dim=12,
                                                              sliding_window=None, max_position_embeddings=8,
                                                              rope_parameters={"rope_type": "dynamic", "rope_theta": 500.0,
                                                                               "factor": 2.0})),
    # A window of 1: each token sees itself alone, and the cache keeps nothing.
    "mistral-window-1": ("MistralForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=4, sliding_window=1,
                                                     rope_parameters={"rope_type": "linear", "rope_theta": 100.0,
                                                                      "factor": 2.0})),
    # Qwen2's layer_types written out (sliding, full, sliding), multi-query, untied.
    "qwen2-layer-types": ("Qwen2ForCausalLM", dict(num_hidden_layers=3, num_key_value_heads=1, use_sliding_window=True,
                                                    sliding_window=3, tie_word_embeddings=False,
                                                    layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                                                    rope_parameters={"rope_type": "linear", "rope_theta": 1000.0,
                                                                     "factor": 1.5})),
    # Qwen3 with every layer sliding (max_window_layers 0), biases, multi-head, head_dim 6, Llama 3.1's RoPE.
    "qwen3-all-sliding": ("Qwen3ForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=4, head_dim=6,
                                                    attention_bias=True, use_sliding_window=True, sliding_window=4,
                                                    max_window_layers=0,
                                                    rope_parameters={"rope_type": "llama3", "rope_theta": 10000.0,
                                                                     "factor": 8.0, "low_freq_factor": 1.0,
                                                                     "high_freq_factor": 4.0,
                                                                     "original_max_position_embeddings": 16})),
    # Gemma 2 without caps, its default alternation (no layer_types), a window of 2, biases, YaRN.
    "gemma2-no-caps-yarn": ("Gemma2ForCausalLM", dict(num_hidden_layers=3, num_key_value_heads=2, head_dim=8,
                                                       sliding_window=2, query_pre_attn_scalar=100,
                                                       attn_logit_softcapping=None, final_logit_softcapping=None,
                                                       attention_bias=True, tie_word_embeddings=False,
                                                       rope_parameters={"rope_type": "yarn", "rope_theta": 100.0,
                                                                        "factor": 4.0,
                                                                        "original_max_position_embeddings": 16})),
    # Gemma 3 given one RoPE dict: transformers keeps its keys beside the per-type defaults it fills in, and
    # uses the defaults. Layer types from sliding_window_pattern 2.
    "gemma3-single-rope-dict": ("Gemma3ForCausalLM", dict(num_hidden_layers=3, num_key_value_heads=2, head_dim=8,
                                                           sliding_window=3, sliding_window_pattern=2,
                                                           attention_bias=True,
                                                           rope_parameters={"rope_type": "linear", "factor": 2.0,
                                                                            "rope_theta": 1000.0})),
    # Gemma 3 with a scaled RoPE of another kind on each layer type, multi-query, capped logits.
    "gemma3-scaled-per-type": ("Gemma3ForCausalLM", dict(num_hidden_layers=3, num_key_value_heads=1, head_dim=8,
                                                          sliding_window=3, final_logit_softcapping=6.0,
                                                          layer_types=["full_attention", "sliding_attention",
                                                                       "full_attention"],
                                                          rope_parameters={
                                                              "full_attention": {"rope_type": "yarn", "rope_theta": 1e5,
                                                                                 "factor": 8.0, "beta_fast": 4.0,
                                                                                 "original_max_position_embeddings": 8},
                                                              "sliding_attention": {"rope_type": "dynamic", "factor": 2.0,
                                                                                    "rope_theta": 100.0}})),
    # SmolLM3 with sliding windows on its NoPE layers, YaRN on the others.
    "smollm3-windows": ("SmolLM3ForCausalLM", dict(num_hidden_layers=4, num_key_value_heads=2, no_rope_layers=[1, 0, 0, 1],
                                                    use_sliding_window=True, sliding_window=3,
                                                    rope_parameters={"rope_type": "yarn", "rope_theta": 1000.0,
                                                                     "factor": 2.0,
                                                                     "original_max_position_embeddings": 16})),
    # gpt-oss with its default RoPE (no rope_parameters), layer_types written out, every token to both experts.
    "gpt-oss-defaults": ("GptOssForCausalLM", dict(num_hidden_layers=3, num_key_value_heads=4, head_dim=8,
                                                    sliding_window=3, num_local_experts=2, num_experts_per_tok=2,
                                                    intermediate_size=16,
                                                    layer_types=["full_attention", "sliding_attention", "sliding_attention"])),
    # gpt-oss with a linear RoPE, multi-query, one expert of 4 per token.
    "gpt-oss-linear": ("GptOssForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=1, head_dim=6, sliding_window=2,
                                                  num_local_experts=4, num_experts_per_tok=1, intermediate_size=16,
                                                  rope_parameters={"rope_type": "linear", "rope_theta": 100.0,
                                                                   "factor": 2.0})),
    # DeepSeek-V3's softmax scale times yarn_mscale(factor, mscale_all_dim)^2 under a linear RoPE too;
    # low-rank queries, experts from layer 0, no shared expert, weights not normalised.
    "deepseek-linear-mscale": ("DeepseekV3ForCausalLM", dict(_DEEPSEEK, q_lora_rank=6, first_k_dense_replace=0,
                                                              n_shared_experts=0, norm_topk_prob=False,
                                                              rope_parameters={"rope_type": "linear", "rope_theta": 100.0,
                                                                               "factor": 4.0, "mscale_all_dim": 0.8})),
    # The same with Llama 3.1's RoPE, one query projection, rotate-half pairs, values wider than keys, all dense.
    "deepseek-llama3-mscale": ("DeepseekV3ForCausalLM", dict(_DEEPSEEK, q_lora_rank=None, rope_interleave=False,
                                                              v_head_dim=10, first_k_dense_replace=2,
                                                              rope_parameters={"rope_type": "llama3", "rope_theta": 100.0,
                                                                               "factor": 4.0, "low_freq_factor": 1.0,
                                                                               "high_freq_factor": 4.0,
                                                                               "original_max_position_embeddings": 16,
                                                                               "mscale_all_dim": 1.0})),
    # YaRN with mscale alone: the attention factor is yarn_mscale(factor), the softmax scale is left alone.
    "deepseek-yarn-mscale-only": ("DeepseekV3ForCausalLM", dict(_DEEPSEEK, q_lora_rank=12, n_group=1, topk_group=1,
                                                                 first_k_dense_replace=1,
                                                                 rope_parameters={"rope_type": "yarn", "rope_theta": 1000.0,
                                                                                  "factor": 8.0, "mscale": 0.707,
                                                                                  "original_max_position_embeddings": 16})),
}
"""name -> (transformers class, config options beside COMMON): options and corners beyond ARCHITECTURES."""


MODEL_TYPES = {"LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral", "Qwen2ForCausalLM": "qwen2",
               "Qwen3ForCausalLM": "qwen3", "Gemma2ForCausalLM": "gemma2", "Gemma3ForCausalLM": "gemma3_text",
               "SmolLM3ForCausalLM": "smollm3", "GptOssForCausalLM": "gpt_oss", "DeepseekV3ForCausalLM": "deepseek_v3",
               "DeepseekV32ForCausalLM": "deepseek_v32", "GlmMoeDsaForCausalLM": "glm_moe_dsa"}
"""config.json's model_type of each transformers class above."""


def _spec(name: str) -> tuple[str, dict]:
    """(transformers class, a copy of the options) of `name` in ARCHITECTURES or VARIANTS."""
    class_name, options = ARCHITECTURES[name] if name in ARCHITECTURES else VARIANTS[name]
    return class_name, copy.deepcopy(options)  # transformers' configs fill in nested dicts they are given


def config_json(name: str) -> dict:
    """The config.json fields of architecture `name` as written above, without transformers' defaults filled in."""
    class_name, options = _spec(name)
    return {"model_type": MODEL_TYPES[class_name], **COMMON, **options}


def older_form(cfg: dict) -> dict:
    """config.json with its RoPE settings written the older way: top-level rope_theta and rope_scaling.

    Gemma 3 writes its sliding layers' base as rope_local_base_freq, and its
    full-attention layers' scaling (if any) as rope_scaling.
    """
    cfg = dict(cfg)
    params = cfg.pop("rope_parameters", None) or {}
    if "full_attention" in params or "sliding_attention" in params:
        full, local = dict(params.get("full_attention") or {}), dict(params.get("sliding_attention") or {})
        cfg["rope_theta"] = full.pop("rope_theta")
        cfg["rope_local_base_freq"] = local.pop("rope_theta")
        cfg["rope_scaling"] = full if full.get("rope_type", "default") != "default" else None
        return cfg
    params = dict(params)
    if "rope_theta" in params:
        cfg["rope_theta"] = params.pop("rope_theta")
    cfg["rope_scaling"] = params if params.get("rope_type", "default") != "default" else None
    return cfg


def tiny_tokenizer():
    """A byte-level BPE tokenizer of 320 tokens trained on SENTENCES (`tokenizers`, no download)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=COMMON["vocab_size"], special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(list(SENTENCES) * 4, trainer=trainer)
    return tokenizer


def tiny_model(name: str, seed: int = 0):
    """A transformers causal LM of architecture `name` (ARCHITECTURES or VARIANTS) with re-drawn random weights, float32, eager."""
    import torch
    import transformers

    class_name, options = _spec(name)
    model_class = getattr(transformers, class_name)
    config = model_class.config_class(**{**COMMON, **options})
    config._attn_implementation = "eager"  # returns the attention weights
    torch.manual_seed(seed)
    model = model_class(config).eval()
    gemma = config.model_type.startswith("gemma")
    with torch.no_grad():
        for param_name, p in model.named_parameters():
            if p.numel() == 0:
                continue  # DeepSeek's shared experts when there are none: stored with zero width
            if param_name.endswith("norm.weight"):
                # RMSNorm gains near 1, each different (Gemma stores gain - 1)
                p.copy_((0 if gemma else 1) + 0.3 * torch.randn_like(p))
            elif param_name.endswith("embed_tokens.weight"):
                p.normal_(0, 1)
            elif p.ndim == 2:
                p.normal_(0, 1.5 / np.sqrt(p.shape[1]))  # (out, in): large enough for peaked attention
            elif p.ndim == 3:  # stacked experts: gpt-oss stores them (E, in, out), DeepSeek (E, out, in)
                p.normal_(0, 1.5 / np.sqrt(p.shape[1] if config.model_type == "gpt_oss" else p.shape[2]))
            elif param_name.endswith("sinks"):
                p.normal_(0, 1.5)  # comparable to the scores: the sink takes a visible share
            else:
                p.normal_(0, 0.5)  # biases
        for buffer_name, b in model.named_buffers():
            if buffer_name.endswith("e_score_correction_bias"):
                b.normal_(0, 0.3)  # large enough to change which experts are chosen
    return model


def save(model, folder: Path, tokenizer=None) -> Path:
    """save_pretrained into `folder` (config.json, model.safetensors), with tokenizer.json if given."""
    folder = Path(folder)
    model.save_pretrained(folder)
    if tokenizer is not None:
        tokenizer.save(str(folder / "tokenizer.json"))
    return folder


def reference_run(model, ids: np.ndarray, max_new_tokens: int) -> dict[str, np.ndarray]:
    """What transformers computes for `ids`: logits, attention weights, greedy tokens with and without its cache.

    Each of the three runs uses a fresh copy of `model`: a dynamic RoPE keeps,
    between calls, the frequencies of the longest sequence it has seen.
    """
    import torch

    t = torch.tensor(ids)[None]  # (1, n)
    with torch.no_grad():
        out = copy.deepcopy(model)(t, output_attentions=True)
        generated = {}
        for use_cache in (True, False):
            generated[use_cache] = copy.deepcopy(model).generate(
                t, max_new_tokens=max_new_tokens, do_sample=False, use_cache=use_cache,
                attention_mask=torch.ones_like(t))[0].numpy()
    return {
        "logits": out.logits[0].numpy(),  # (n, vocab)
        "attentions": torch.stack(out.attentions)[:, 0].numpy(),  # (L, h, n, n)
        "generated_with_cache": generated[True],
        "generated_without_cache": generated[False],
    }
