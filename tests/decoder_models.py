"""Tiny random decoders built by transformers, for the tests of attention_course.decoder.

No download: each model is built from a config, its weights re-drawn so that
attention is far from uniform (transformers' own initialisation, normal with
std 0.02, makes every score nearly 0), and saved with `save_pretrained` as a
checkpoint folder. Every architecture `load_decoder` runs is here, most in
several configurations (sizes, windows, RoPE scalings, expert counts, low-rank
queries or not): in ARCHITECTURES, or, for MiniMax-M2 and Llama 4, in
MINIMAX_LLAMA4 and, for Gemma 3n, in GEMMA3N (each with checks of its own);
VARIANTS adds options and corners each family reads its own way (RoPE rules
with their rarer keys, windows of 1 or none, layer_types written out or left
to the defaults). Used by tests/test_decoder_transformers.py (ARCHITECTURES),
tests/test_decoder_transformers_variants.py (VARIANTS),
tests/test_decoder_minimax_llama4.py (MINIMAX_LLAMA4),
tests/test_decoder_gemma3n.py (GEMMA3N), tests/test_decoder_v4.py (DEEPSEEK_V4), by the NumPy-only
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

MINIMAX_LLAMA4 = {
    # MiniMax-M2: half of each head rotated (the released config's legacy rotary_dim), QK-norm over all heads,
    # sigmoid routing with a correction bias.
    "minimax_m2": ("MiniMaxM2ForCausalLM", dict(hidden_size=48, intermediate_size=20, num_hidden_layers=3,
                                                num_key_value_heads=2, head_dim=12, num_local_experts=6,
                                                num_experts_per_tok=2, rotary_dim=6,
                                                rope_parameters={"rope_type": "default", "rope_theta": 10000.0})),
    # A quarter of each head rotated (partial_rotary_factor), multi-head attention, one expert per token, tied.
    "minimax_m2-factor-mha": ("MiniMaxM2ForCausalLM", dict(
        intermediate_size=16, num_hidden_layers=2, num_key_value_heads=4, head_dim=8, num_local_experts=4,
        num_experts_per_tok=1, tie_word_embeddings=True,
        rope_parameters={"rope_type": "default", "rope_theta": 1000.0, "partial_rotary_factor": 0.25})),
    # Llama 4: chunks of 5 tokens on the RoPE layers, the fourth layer NoPE over every token with a temperature
    # that changes every 3 positions, experts on every second layer.
    "llama4_text": ("Llama4ForCausalLM", dict(hidden_size=48, intermediate_size=20, intermediate_size_mlp=28,
                                              num_hidden_layers=4, num_key_value_heads=2, head_dim=12,
                                              num_local_experts=4, num_experts_per_tok=2, attention_chunk_size=5,
                                              interleave_moe_layer_step=2, floor_scale=3, attn_scale=0.5,
                                              rope_parameters={"rope_type": "default", "rope_theta": 10000.0})),
    # Chunks of 3, NoPE on the second layer, multi-query attention, biases, no QK-norm, experts on layers 0 and 2,
    # Llama 3.1's RoPE, tied.
    "llama4_text-mqa-bias": ("Llama4ForCausalLM", dict(
        hidden_size=48, intermediate_size=16, intermediate_size_mlp=24, num_hidden_layers=4, num_attention_heads=6,
        num_key_value_heads=1, head_dim=8, num_local_experts=3, num_experts_per_tok=1, attention_chunk_size=3,
        moe_layers=[0, 2], no_rope_layers=[1, 0, 1, 1], attention_bias=True, use_qk_norm=False, floor_scale=2,
        tie_word_embeddings=True,
        rope_parameters={"rope_type": "llama3", "rope_theta": 10000.0, "factor": 4.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 8})),
}
"""name -> (transformers class, config options beside COMMON): MiniMax-M2 and Llama 4 (text), checked by
tests/test_decoder_minimax_llama4.py (a chunked layer's cache keeps less than transformers' does)."""

GEMMA3N = {
    # Sliding and full layers alternating, the last two reading the keys and values of layers 2 and 3, three AltUp
    # copies, sparse gates on the first two layers, an MLP width per layer, a window shorter than the prompt.
    "gemma3n": ("Gemma3nForCausalLM", dict(
        hidden_size=32, vocab_size_per_layer_input=300, hidden_size_per_layer_input=8,
        intermediate_size=[40, 48, 40, 40, 32, 40], num_hidden_layers=6, num_key_value_heads=2, head_dim=8,
        layer_types=["sliding_attention", "full_attention"] * 3, sliding_window=4, num_kv_shared_layers=2,
        laurel_rank=6, altup_num_inputs=3, activation_sparsity_pattern=[0.9, 0.8, 0.0, 0.0, 0.0, 0.0],
        pad_token_id=None, eos_token_id=0, bos_token_id=None)),
    # Four copies with the second active, no sharing, one MLP width, no sparsity, biases, untied, multi-query,
    # a linear RoPE scaling on the full layers, the default layer pattern (every fifth layer full).
    "gemma3n-bias-untied": ("Gemma3nForCausalLM", dict(
        hidden_size=32, vocab_size_per_layer_input=320, hidden_size_per_layer_input=6, intermediate_size=36,
        num_hidden_layers=5, num_key_value_heads=1, head_dim=8, sliding_window=3, num_kv_shared_layers=0,
        laurel_rank=4, altup_num_inputs=4, altup_active_idx=1, altup_correct_scale=False,
        activation_sparsity_pattern=[0.0] * 5, attention_bias=True, tie_word_embeddings=False,
        final_logit_softcapping=50.0, pad_token_id=None, eos_token_id=0, bos_token_id=None,
        rope_parameters={"full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1000.0},
                         "sliding_attention": {"rope_type": "default", "rope_theta": 100.0}})),
}
"""name -> (transformers class, config options beside COMMON): Gemma 3n's text model, checked by
tests/test_decoder_gemma3n.py (its hidden states are AltUp's copies, its shared layers cache nothing)."""
HYBRIDS = {
    # Qwen3-Next: three Gated DeltaNet layers then gated softmax attention, 2 key heads shared by 4 value heads
    # (d_k 8, d_v 6), partial RoPE on a quarter of head_dim 16, experts behind a softmax router with a gated
    # shared expert in every layer but layer 1 (mlp_only_layers).
    "qwen3-next": ("Qwen3NextForCausalLM", dict(num_hidden_layers=4, num_key_value_heads=2, head_dim=16,
                                                 linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=8,
                                                 linear_value_head_dim=6, num_experts=4, num_experts_per_tok=2,
                                                 moe_intermediate_size=16, shared_expert_intermediate_size=24,
                                                 mlp_only_layers=[1],
                                                 rope_parameters={"rope_type": "default", "rope_theta": 1000.0,
                                                                  "partial_rotary_factor": 0.25})),
    # Qwen3-Next with its other options: layer_types written out (softmax first), biases, tied embeddings, half of
    # each head rotated, a convolution of 3 taps, as many value heads as key heads, experts every second layer
    # (decoder_sparse_step) with their weights not renormalised.
    "qwen3-next-options": ("Qwen3NextForCausalLM", dict(num_hidden_layers=5, num_key_value_heads=1, head_dim=8,
                                                         layer_types=["full_attention", "linear_attention",
                                                                      "linear_attention", "full_attention",
                                                                      "linear_attention"],
                                                         attention_bias=True, tie_word_embeddings=True,
                                                         linear_num_key_heads=2, linear_num_value_heads=2,
                                                         linear_key_head_dim=4, linear_value_head_dim=8,
                                                         linear_conv_kernel_dim=3, num_experts=6, num_experts_per_tok=3,
                                                         moe_intermediate_size=8, shared_expert_intermediate_size=12,
                                                         decoder_sparse_step=2, norm_topk_prob=False,
                                                         rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                                          "partial_rotary_factor": 0.5})),
    # Qwen3.5 (text): the same layers with split projections, a dense MLP, multi-query softmax layers, its
    # multimodal RoPE sections (one position for text: plain RoPE).
    "qwen3.5": ("Qwen3_5ForCausalLM", dict(num_hidden_layers=4, num_key_value_heads=1, head_dim=8,
                                            linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=6,
                                            linear_value_head_dim=4,
                                            rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                             "partial_rotary_factor": 0.5, "mrope_section": [1, 1, 0],
                                                             "mrope_interleaved": True})),
    # OLMo hybrid: b up to 2, QK-norm over all heads, post-norms on the softmax layers, defaults for the sizes.
    "olmo-hybrid": ("OlmoHybridForCausalLM", dict(num_hidden_layers=4, num_key_value_heads=2,
                                                   rope_parameters={"rope_type": "default", "rope_theta": 500.0})),
    # OLMo hybrid without positions in its softmax layers (rope_theta null), b in (0, 1), two key heads for four
    # value heads, biases, layer_types written out.
    "olmo-hybrid-nope": ("OlmoHybridForCausalLM", dict(num_hidden_layers=4, num_key_value_heads=4, attention_bias=True,
                                                        linear_allow_neg_eigval=False, linear_num_key_heads=2,
                                                        linear_num_value_heads=4, linear_key_head_dim=8,
                                                        linear_value_head_dim=4,
                                                        layer_types=["linear_attention", "full_attention",
                                                                     "linear_attention", "full_attention"],
                                                        rope_parameters={"rope_type": "default", "rope_theta": None})),
    # Kimi Linear: Kimi Delta Attention (a decay per key channel, low-rank decay and gate, a sigmoid-gated norm)
    # in four layers, then latent attention without positions; a dense first layer, then DeepSeek's experts.
    "kimi-linear": ("KimiLinearForCausalLM", dict(num_hidden_layers=5, num_key_value_heads=4, kv_lora_rank=8,
                                                   qk_nope_head_dim=4, qk_rope_head_dim=4, v_head_dim=6,
                                                   linear_num_heads=2, linear_head_dim=6, num_local_experts=4,
                                                   num_experts_per_tok=2, moe_intermediate_size=8,
                                                   routed_scaling_factor=1.5)),
    # Kimi Linear with low-rank queries, layer_types and mlp_layer_types written out, biases, 8 experts in 2
    # groups with 1 kept and weights not renormalised, 3 heads of 4 in its delta-rule layers, 3 taps.
    "kimi-linear-options": ("KimiLinearForCausalLM", dict(num_hidden_layers=4, num_key_value_heads=4, q_lora_rank=12,
                                                           kv_lora_rank=8, qk_nope_head_dim=6, qk_rope_head_dim=2,
                                                           v_head_dim=4, attention_bias=True,
                                                           layer_types=["full_attention", "linear_attention",
                                                                        "linear_attention", "full_attention"],
                                                           mlp_layer_types=["sparse", "dense", "sparse", "sparse"],
                                                           linear_num_heads=3, linear_head_dim=4,
                                                           linear_conv_kernel_dim=3, num_local_experts=8, n_group=2,
                                                           topk_group=1, num_experts_per_tok=2, moe_intermediate_size=8,
                                                           n_shared_experts=2, norm_topk_prob=False)),
}
"""name -> (transformers class, config options beside COMMON): decoders whose layers mostly keep a state instead
of scores (Gated DeltaNet) beside softmax attention."""

DEEPSEEK_V4 = {
    # DeepSeek-V4: a sliding-only layer, compressed sparse attention (entries every 2 tokens, windows of 4, the
    # indexer keeping 3 of up to 9), heavily compressed attention (every 4); 2 residual streams, a hashed first layer.
    "deepseek-v4": ("DeepseekV4ForCausalLM", dict(
        num_hidden_layers=3, head_dim=16, q_lora_rank=12, partial_rotary_factor=0.5, intermediate_size=16,
        n_routed_experts=4, num_experts_per_tok=2,
        layer_types=["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"],
        compress_rates={"compressed_sparse_attention": 2, "heavily_compressed_attention": 4}, hc_mult=2,
        hc_sinkhorn_iters=3, mlp_layer_types=["hash_moe", "moe", "moe"], sliding_window=4, o_groups=2, o_lora_rank=8,
        index_n_heads=4, index_head_dim=8, index_topk=3)),
    # Its other options: the default layer_types and mlp_layer_types (two heavily compressed layers, then
    # compressed sparse and heavily compressed in turn; three hashed layers), 3 streams, sigmoid scores, YaRN on
    # the compressed layers' RoPE, 4 output groups, tied embeddings, a window of 5, biases on the shared expert.
    "deepseek-v4-options": ("DeepseekV4ForCausalLM", dict(
        num_hidden_layers=4, head_dim=8, q_lora_rank=10, partial_rotary_factor=0.5, intermediate_size=12,
        n_routed_experts=5, num_experts_per_tok=3, scoring_func="sigmoid",
        compress_rates={"compressed_sparse_attention": 3, "heavily_compressed_attention": 5}, hc_mult=3,
        hc_sinkhorn_iters=5, sliding_window=5, o_groups=4, o_lora_rank=6, index_n_heads=3, index_head_dim=6,
        index_topk=2, tie_word_embeddings=True, rope_theta=1000.0, compress_rope_theta=20000.0, mlp_bias=True,
        rope_parameters={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64})),
}
"""name -> (transformers class, config options beside COMMON): DeepSeek-V4, checked by tests/test_decoder_v4.py."""


MODEL_TYPES = {"LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral", "Qwen2ForCausalLM": "qwen2",
               "Qwen3ForCausalLM": "qwen3", "Gemma2ForCausalLM": "gemma2", "Gemma3ForCausalLM": "gemma3_text",
               "SmolLM3ForCausalLM": "smollm3", "GptOssForCausalLM": "gpt_oss", "DeepseekV3ForCausalLM": "deepseek_v3",
               "DeepseekV32ForCausalLM": "deepseek_v32", "GlmMoeDsaForCausalLM": "glm_moe_dsa",
               "MiniMaxM2ForCausalLM": "minimax_m2", "Llama4ForCausalLM": "llama4_text",
               "Gemma3nForCausalLM": "gemma3n_text",
               "Qwen3NextForCausalLM": "qwen3_next", "Qwen3_5ForCausalLM": "qwen3_5_text",
               "OlmoHybridForCausalLM": "olmo_hybrid", "KimiLinearForCausalLM": "kimi_linear",
               "DeepseekV4ForCausalLM": "deepseek_v4"}
"""config.json's model_type of each transformers class above."""


def _spec(name: str) -> tuple[str, dict]:
    """(transformers class, a copy of the options) of `name` in ARCHITECTURES, VARIANTS, MINIMAX_LLAMA4, GEMMA3N,
    HYBRIDS or DEEPSEEK_V4."""
    class_name, options = next(specs[name] for specs in (ARCHITECTURES, VARIANTS, MINIMAX_LLAMA4, GEMMA3N, HYBRIDS,
                                                         DEEPSEEK_V4) if name in specs)
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
    # Gemma 2 and 3 and Qwen3-Next store gain - 1 (Gemma 3n's norms multiply by their weight itself)
    gain_minus_one = config.model_type in ("gemma2", "gemma3_text", "qwen3_next", "qwen3_5_text")
    # the hybrids' norms of small vectors (L2 on q and k, the gated norm per head) amplify float32's rounding:
    # smaller projections keep their residual stream, and so the two sides' rounding, in the range of the others'
    spread = 1.0 if config.model_type in ("qwen3_next", "qwen3_5_text", "olmo_hybrid", "kimi_linear") else 1.5
    with torch.no_grad():
        for param_name, p in model.named_parameters():
            if p.numel() == 0:
                continue  # DeepSeek's shared experts when there are none: stored with zero width
            if param_name.endswith("norm.weight"):
                # RMSNorm gains near 1, each different (Gemma and Qwen3-Next store gain - 1, but for their gated norm)
                p.copy_((0 if gain_minus_one and "linear_attn." not in param_name else 1) + 0.3 * torch.randn_like(p))
            elif param_name.endswith("A_log"):
                p.normal_(-1.5, 1.0)  # state decays from about 0.99 to 0.5 per token, head by head
            elif param_name.endswith("embed_tokens.weight"):
                p.normal_(0, 1)
            elif p.ndim == 2:
                p.normal_(0, spread / np.sqrt(p.shape[1]))  # (out, in): large enough for peaked attention
            elif p.ndim == 3:  # stacked experts: gpt-oss and Llama 4 store them (E, in, out), the others (E, out, in)
                p.normal_(0, spread / np.sqrt(p.shape[1] if config.model_type in ("gpt_oss", "llama4_text") else p.shape[2]))
            elif param_name.endswith("sinks"):
                p.normal_(0, 1.5)  # comparable to the scores: the sink takes a visible share
            else:
                p.normal_(0, 0.5)  # biases
        for buffer_name, b in model.named_buffers():
            if buffer_name.endswith("e_score_correction_bias"):
                b.normal_(0, 0.3)  # large enough to change which experts are chosen
            elif buffer_name.endswith("tid2eid"):  # DeepSeek-V4's hashed layers: each token id's experts, drawn
                b.copy_(torch.randint(0, config.n_routed_experts, b.shape))
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
