"""Published configurations, as their config.json files give them: one table, one source per entry.

Each entry keeps the config.json fields `DecoderConfig.from_dict` reads, with
the values the model's repository on the Hugging Face Hub publishes (checked
against the defaults and docstrings of transformers' configuration classes
where those describe the same model: `DeepseekV3Config`, `GptOssConfig`).
Left out: fields that concern only training or serving. What the published
checkpoint's own config.json says beyond the fields is kept apart in
`PublishedConfig.checkpoint_fields`: the `quantization_config` of weights
stored in FP8 (DeepSeek-V3, which `load_decoder` widens to float32) or MXFP4
(gpt-oss's experts, which it refuses), and the `model_type` of Gemma 3 27B's
multimodal config.json, whose `text_config` the fields are.
`checkpoint_refusal(entry)` says why `load_decoder` would refuse the
published folder, or None.

Two tables: `PUBLISHED_CONFIGS`, the models of the chapter on today's
attention, and `GENERATION_CONFIGS`, the decoders whose caches the generation
chapter sizes (GPT-2 and Falcon 7B among them, in their own config.json
names), and `SPARSE_CONFIGS`, DeepSeek-V3.2 and GLM-5 (DeepSeek Sparse
Attention), from the defaults of transformers' configuration classes. A
further table, `DEFAULT_CONFIGS`, holds configurations taken from the
defaults of a transformers configuration class whose docstring names the
published model they describe (Llama 4 Scout's text model), with only the
fields those defaults give. `runs_here(entry)` says whether a checkpoint
runs with `load_decoder` on a 24 GiB machine, and why.
`published_config(name)` reads an entry into a `DecoderConfig`, from
which `cache.cache_bytes` and `size.parameter_count` count;
`model_shape(entry)` gives any entry's attention shape, as the generation
chapter's `chapters.decoding.PUBLISHED_CONFIGS` lists them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType

from .config import DecoderConfig
from .options import UnsupportedConfigError
from .size import parameter_count


@dataclass(frozen=True)
class PublishedConfig:
    """One published model's configuration."""

    name: str
    """The model's name on the Hugging Face Hub."""
    source: str
    """Where the values come from."""
    fields: MappingProxyType
    """The config.json fields, read-only."""
    checkpoint_fields: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    """Keys of the published checkpoint's config.json that override `fields` there: what makes the published
    folder differ from the architecture the fields describe (how its weights are stored, its multimodal wrapper)."""

    @property
    def config(self) -> DecoderConfig:
        """The fields read by `DecoderConfig.from_dict`."""
        return DecoderConfig.from_dict(dict(self.fields), f"{self.name} (published config.json)")


def _entry(name: str, source: str, checkpoint_fields: dict | None = None, **fields) -> PublishedConfig:
    return PublishedConfig(name, source, MappingProxyType(fields), MappingProxyType(checkpoint_fields or {}))


def _hub(name: str, part: str = "config.json") -> str:
    return f"https://huggingface.co/{name}/blob/main/{part}"


PUBLISHED_CONFIGS: tuple[PublishedConfig, ...] = (
    _entry("deepseek-ai/DeepSeek-V3", _hub("deepseek-ai/DeepSeek-V3"),
           model_type="deepseek_v3", vocab_size=129280, hidden_size=7168, intermediate_size=18432,
           moe_intermediate_size=2048, num_hidden_layers=61, num_attention_heads=128, num_key_value_heads=128,
           n_shared_experts=1, n_routed_experts=256, routed_scaling_factor=2.5, kv_lora_rank=512, q_lora_rank=1536,
           qk_rope_head_dim=64, v_head_dim=128, qk_nope_head_dim=128, topk_method="noaux_tc", n_group=8,
           topk_group=4, num_experts_per_tok=8, first_k_dense_replace=3, norm_topk_prob=True, scoring_func="sigmoid",
           max_position_embeddings=163840, rope_theta=10000,
           rope_scaling={"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
                         "original_max_position_embeddings": 4096, "type": "yarn"},
           rms_norm_eps=1e-06, tie_word_embeddings=False, num_nextn_predict_layers=1, hidden_act="silu",
           attention_bias=False, bos_token_id=0, eos_token_id=1, torch_dtype="bfloat16",
           checkpoint_fields={"quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3",
                                                      "quant_method": "fp8", "weight_block_size": [128, 128]}}),
    _entry("meta-llama/Llama-3.1-8B", _hub("meta-llama/Llama-3.1-8B"),
           model_type="llama", vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
           num_attention_heads=32, num_key_value_heads=8, head_dim=128, max_position_embeddings=131072,
           rms_norm_eps=1e-05, rope_theta=500000.0,
           rope_scaling={"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"},
           tie_word_embeddings=False, attention_bias=False, mlp_bias=False, hidden_act="silu",
           bos_token_id=128000, eos_token_id=128001, torch_dtype="bfloat16"),
    _entry("Qwen/Qwen3-8B", _hub("Qwen/Qwen3-8B"),
           model_type="qwen3", vocab_size=151936, hidden_size=4096, intermediate_size=12288, num_hidden_layers=36,
           num_attention_heads=32, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
           max_window_layers=36, rms_norm_eps=1e-06, rope_scaling=None, rope_theta=1000000, sliding_window=None,
           use_sliding_window=False, tie_word_embeddings=False, attention_bias=False, hidden_act="silu",
           bos_token_id=151643, eos_token_id=151645, torch_dtype="bfloat16"),
    _entry("google/gemma-3-27b-it", _hub("google/gemma-3-27b-it") + ", text_config",
           checkpoint_fields={"model_type": "gemma3"},
           model_type="gemma3_text", vocab_size=262208, hidden_size=5376, intermediate_size=21504,
           num_hidden_layers=62, num_attention_heads=32, num_key_value_heads=16, head_dim=128,
           query_pre_attn_scalar=168, sliding_window=1024, sliding_window_pattern=6, rope_theta=1000000.0,
           rope_local_base_freq=10000.0, rope_scaling={"factor": 8.0, "rope_type": "linear"},
           max_position_embeddings=131072, rms_norm_eps=1e-06, hidden_activation="gelu_pytorch_tanh",
           final_logit_softcapping=None, attn_logit_softcapping=None, tie_word_embeddings=True,
           eos_token_id=1, bos_token_id=2, torch_dtype="bfloat16"),
    _entry("openai/gpt-oss-120b", _hub("openai/gpt-oss-120b"),
           model_type="gpt_oss", vocab_size=201088, hidden_size=2880, intermediate_size=2880, num_hidden_layers=36,
           num_attention_heads=64, num_key_value_heads=8, head_dim=64, num_local_experts=128, num_experts_per_tok=4,
           sliding_window=128, layer_types=["sliding_attention", "full_attention"] * 18,
           max_position_embeddings=131072, initial_context_length=4096, rope_theta=150000,
           rope_scaling={"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0, "original_max_position_embeddings": 4096,
                         "rope_type": "yarn", "truncate": False},
           swiglu_limit=7.0, rms_norm_eps=1e-05, attention_bias=True, tie_word_embeddings=False, hidden_act="silu",
           eos_token_id=200002, pad_token_id=199999, torch_dtype="bfloat16",
           checkpoint_fields={"quantization_config": {
               "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                          "model.embed_tokens", "lm_head"],
               "quant_method": "mxfp4"}}),
    _entry("google/gemma-2-2b-it", _hub("google/gemma-2-2b-it"),
           model_type="gemma2", vocab_size=256000, hidden_size=2304, intermediate_size=9216, num_hidden_layers=26,
           num_attention_heads=8, num_key_value_heads=4, head_dim=256, query_pre_attn_scalar=256, sliding_window=4096,
           attn_logit_softcapping=50.0, final_logit_softcapping=30.0, max_position_embeddings=8192,
           rope_theta=10000.0, rms_norm_eps=1e-06, hidden_act="gelu_pytorch_tanh",
           hidden_activation="gelu_pytorch_tanh", attention_bias=False, bos_token_id=2, eos_token_id=[1, 107],
           pad_token_id=0, torch_dtype="bfloat16"),
    _entry("HuggingFaceTB/SmolLM3-3B", _hub("HuggingFaceTB/SmolLM3-3B"),
           model_type="smollm3", vocab_size=128256, hidden_size=2048, intermediate_size=11008, num_hidden_layers=36,
           num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=65536, rope_theta=5000000.0,
           rope_scaling=None, no_rope_layer_interval=4, use_sliding_window=False, sliding_window=None,
           rms_norm_eps=1e-06, tie_word_embeddings=True, attention_bias=False, hidden_act="silu",
           eos_token_id=128001, pad_token_id=128004, torch_dtype="bfloat16"),
    _entry("Qwen/Qwen3-0.6B", _hub("Qwen/Qwen3-0.6B"),
           model_type="qwen3", vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
           num_attention_heads=16, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
           max_window_layers=28, rms_norm_eps=1e-06, rope_scaling=None, rope_theta=1000000, sliding_window=None,
           use_sliding_window=False, tie_word_embeddings=True, attention_bias=False, hidden_act="silu",
           bos_token_id=151643, eos_token_id=151645, torch_dtype="bfloat16"),
    _entry("google/gemma-3-270m", _hub("google/gemma-3-270m"),
           model_type="gemma3_text", vocab_size=262144, hidden_size=640, intermediate_size=2048, num_hidden_layers=18,
           num_attention_heads=4, num_key_value_heads=1, head_dim=256, query_pre_attn_scalar=256, sliding_window=512,
           layer_types=(["sliding_attention"] * 5 + ["full_attention"]) * 3, rope_theta=1000000.0,
           rope_local_base_freq=10000.0, rope_scaling=None, max_position_embeddings=32768, rms_norm_eps=1e-06,
           hidden_activation="gelu_pytorch_tanh", final_logit_softcapping=None, attn_logit_softcapping=None,
           tie_word_embeddings=True, eos_token_id=1, bos_token_id=2, pad_token_id=0, torch_dtype="bfloat16"),
)
"""Published configurations: the models of the chapter on today's attention (book/todays_models.ipynb), Gemma 2's
soft-capping and SmolLM3's layers without positions among them, and last two small ones a reader can run."""


_TRANSFORMERS_DEFAULTS = "transformers 5's {} defaults (its docstring's checkpoint: {}); RoPE left at those defaults"


SPARSE_CONFIGS: tuple[PublishedConfig, ...] = (
    _entry("deepseek-ai/DeepSeek-V3.2-Exp", _TRANSFORMERS_DEFAULTS.format("DeepseekV32Config", "deepseek-ai/DeepSeek-V3.2-Exp"),
           model_type="deepseek_v32", vocab_size=129280, hidden_size=7168, intermediate_size=18432,
           moe_intermediate_size=2048, num_hidden_layers=61, num_attention_heads=128, num_key_value_heads=128,
           n_shared_experts=1, n_routed_experts=256, routed_scaling_factor=2.5, kv_lora_rank=512, q_lora_rank=1536,
           qk_rope_head_dim=64, v_head_dim=128, qk_nope_head_dim=128, n_group=8, topk_group=4, num_experts_per_tok=8,
           first_k_dense_replace=3, norm_topk_prob=True, max_position_embeddings=163840, rms_norm_eps=1e-06,
           index_topk=2048, index_head_dim=128, index_n_heads=64, tie_word_embeddings=False, hidden_act="silu",
           bos_token_id=0, eos_token_id=1),
    _entry("zai-org/GLM-5", _TRANSFORMERS_DEFAULTS.format("GlmMoeDsaConfig", "zai-org/GLM-5"),
           model_type="glm_moe_dsa", vocab_size=154880, hidden_size=6144, intermediate_size=12288,
           moe_intermediate_size=2048, num_hidden_layers=78, num_attention_heads=64, num_key_value_heads=64,
           n_shared_experts=1, n_routed_experts=256, routed_scaling_factor=2.5, kv_lora_rank=512, q_lora_rank=2048,
           qk_rope_head_dim=64, v_head_dim=256, qk_nope_head_dim=192, n_group=1, topk_group=1, num_experts_per_tok=8,
           first_k_dense_replace=3, norm_topk_prob=True, max_position_embeddings=202752, rms_norm_eps=1e-05,
           index_topk=2048, index_head_dim=128, index_n_heads=32, tie_word_embeddings=False, hidden_act="silu",
           bos_token_id=0, eos_token_id=1),
)
"""The models with DeepSeek Sparse Attention, from the defaults of transformers' configuration classes, which name
these checkpoints (their RoPE scaling is not among those defaults; it changes no size)."""

MACHINE_MEMORY = 24 * 2 ** 30
"""The memory of the machine `runs_here` asks about: 24 GiB."""

@dataclass(frozen=True)
class MemoryFit:
    """Whether a published checkpoint runs with `load_decoder` on a machine of MACHINE_MEMORY bytes, and why."""

    name: str
    """The model's name on the Hugging Face Hub."""
    parameters: int
    """Numbers its checkpoint stores (`size.parameter_count`)."""
    loaded_bytes: int
    """What load_decoder holds: every parameter in float32 (FP8 and bfloat16 files are widened)."""
    runs: bool
    """Loaded, it fits in the memory, and its stored format is one load_decoder reads."""
    reason: str
    """Why, in a few words."""


def runs_here(entry: PublishedConfig, memory: int = MACHINE_MEMORY) -> MemoryFit:
    """Whether `entry`'s checkpoint runs on a machine with `memory` bytes: its float32 weights must fit (loading
    reads one tensor at a time, so that is what it needs), and a published folder `load_decoder` refuses
    (`checkpoint_refusal`: gpt-oss's MXFP4 experts, Gemma 3's multimodal wrapper) does not run whatever the size."""
    n = parameter_count(entry.config)
    loaded = 4 * n
    gib = f"{loaded / 2 ** 30:,.1f} GiB in float32"
    refusal = checkpoint_refusal(entry)
    if refusal is not None:
        key = re.split(r"[:;]", refusal.split(": ", 1)[-1])[0]  # "quantization_config ('mxfp4')", after the source
        return MemoryFit(entry.name, n, loaded, False, f"refused, {key}; {gib}")
    if loaded > memory:
        return MemoryFit(entry.name, n, loaded, False, f"{gib} > {memory / 2 ** 30:g} GiB")
    return MemoryFit(entry.name, n, loaded, True, gib)


GENERATION_CONFIGS: tuple[PublishedConfig, ...] = (
    _entry("openai-community/gpt2", _hub("openai-community/gpt2"),
           model_type="gpt2", vocab_size=50257, n_embd=768, n_layer=12, n_head=12, n_positions=1024, n_ctx=1024,
           activation_function="gelu_new", layer_norm_epsilon=1e-05, bos_token_id=50256, eos_token_id=50256),
    _entry("meta-llama/Llama-2-7b-hf", _hub("meta-llama/Llama-2-7b-hf"),
           model_type="llama", vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
           num_attention_heads=32, num_key_value_heads=32, max_position_embeddings=4096, rms_norm_eps=1e-05,
           rope_scaling=None, tie_word_embeddings=False, hidden_act="silu", bos_token_id=1, eos_token_id=2,
           torch_dtype="float16"),
    _entry("tiiuae/falcon-7b", _hub("tiiuae/falcon-7b"),
           model_type="falcon", vocab_size=65024, hidden_size=4544, num_hidden_layers=32, num_attention_heads=71,
           multi_query=True, new_decoder_architecture=False, parallel_attn=True, alibi=False, bias=False,
           layer_norm_epsilon=1e-05, bos_token_id=11, eos_token_id=11, torch_dtype="bfloat16"),
    _entry("mistralai/Mistral-7B-v0.1", _hub("mistralai/Mistral-7B-v0.1"),
           model_type="mistral", vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
           num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=32768, sliding_window=4096,
           rope_theta=10000.0, rms_norm_eps=1e-05, tie_word_embeddings=False, hidden_act="silu", bos_token_id=1,
           eos_token_id=2, torch_dtype="bfloat16"),
    _entry("meta-llama/Meta-Llama-3-8B", _hub("meta-llama/Meta-Llama-3-8B"),
           model_type="llama", vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
           num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=8192, rms_norm_eps=1e-05,
           rope_theta=500000.0, rope_scaling=None, tie_word_embeddings=False, attention_bias=False,
           hidden_act="silu", bos_token_id=128000, eos_token_id=128001, torch_dtype="bfloat16"),
    _entry("meta-llama/Meta-Llama-3-70B", _hub("meta-llama/Meta-Llama-3-70B"),
           model_type="llama", vocab_size=128256, hidden_size=8192, intermediate_size=28672, num_hidden_layers=80,
           num_attention_heads=64, num_key_value_heads=8, max_position_embeddings=8192, rms_norm_eps=1e-05,
           rope_theta=500000.0, rope_scaling=None, tie_word_embeddings=False, attention_bias=False,
           hidden_act="silu", bos_token_id=128000, eos_token_id=128001, torch_dtype="bfloat16"),
    # The base model; Qwen2-7B-Instruct's config.json says max_position_embeddings 32768.
    _entry("Qwen/Qwen2-7B", _hub("Qwen/Qwen2-7B"),
           model_type="qwen2", vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
           num_attention_heads=28, num_key_value_heads=4, max_position_embeddings=131072, max_window_layers=28,
           sliding_window=131072, use_sliding_window=False, rms_norm_eps=1e-06, rope_theta=1000000.0,
           tie_word_embeddings=False, hidden_act="silu", bos_token_id=151643, eos_token_id=151643,
           torch_dtype="bfloat16"),
    _entry("HuggingFaceTB/SmolLM2-135M", _hub("HuggingFaceTB/SmolLM2-135M"),
           model_type="llama", vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
           num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=8192, rms_norm_eps=1e-05,
           rope_theta=100000, rope_scaling=None, tie_word_embeddings=True, attention_bias=False, hidden_act="silu",
           bos_token_id=0, eos_token_id=0, torch_dtype="bfloat16"),
)
"""The decoders whose caches the generation chapter sizes (book/decoding.ipynb), from GPT-2 to SmolLM2: multi-head,
multi-query (Falcon) and grouped-query attention, and Mistral's sliding window. GPT-2 and Falcon are model types
`DecoderConfig.from_dict` does not run: `model_shape` reads their attention fields."""

DEFAULT_CONFIGS: tuple[PublishedConfig, ...] = (
    # Llama4TextConfig's defaults: 107.8 billion parameters in the text model (`size.parameter_count`), 16.1 billion
    # active besides the embeddings, for the model card's 109 billion with the vision tower and 17 billion active.
    # Not among them: the Hub file's RoPE scaling for long contexts, its context length and its token ids.
    _entry("meta-llama/Llama-4-Scout-17B-16E",
           "transformers 5.24, Llama4TextConfig's defaults (its docstring names meta-llama/Llama-4-Scout-17B-16E)",
           model_type="llama4_text", vocab_size=202048, hidden_size=5120, intermediate_size=8192,
           intermediate_size_mlp=16384, num_hidden_layers=48, num_attention_heads=40, num_key_value_heads=8,
           head_dim=128, hidden_act="silu", max_position_embeddings=131072, rms_norm_eps=1e-5,
           tie_word_embeddings=False, num_experts_per_tok=1, num_local_experts=16, interleave_moe_layer_step=1,
           use_qk_norm=True, no_rope_layer_interval=4, attention_chunk_size=8192, attn_temperature_tuning=True,
           floor_scale=8192, attn_scale=0.1, attention_bias=False, rope_theta=500000.0),
    # Qwen3NextConfig's sizes; not among them: the Hub file's context length and RoPE base (the defaults' 32,768
    # and 10,000 are the class's, not the checkpoint's), left to the reader's defaults: they change no size.
    _entry("Qwen/Qwen3-Next-80B-A3B-Instruct",
           "transformers 5.24, Qwen3NextConfig's defaults (its docstring names Qwen/Qwen3-Next-80B-A3B-Instruct); "
           "context length and RoPE not among them",
           model_type="qwen3_next", vocab_size=151936, hidden_size=2048, intermediate_size=5632, num_hidden_layers=48,
           num_attention_heads=16, num_key_value_heads=2, head_dim=256, hidden_act="silu", rms_norm_eps=1e-6,
           tie_word_embeddings=False, attention_bias=False, linear_conv_kernel_dim=4, linear_key_head_dim=128,
           linear_value_head_dim=128, linear_num_key_heads=16, linear_num_value_heads=32, decoder_sparse_step=1,
           moe_intermediate_size=512, shared_expert_intermediate_size=512, num_experts_per_tok=10, num_experts=512,
           norm_topk_prob=True),
    # KimiLinearConfig's sizes; its layer pattern is the class's fallback (a full-attention layer every fourth,
    # from the fifth): the checkpoint's own linear_attn_config lists its layers, which the defaults do not give.
    _entry("moonshotai/Kimi-Linear-48B-A3B-Instruct",
           "transformers 5.24, KimiLinearConfig's defaults (its docstring names "
           "moonshotai/Kimi-Linear-48B-A3B-Instruct); layer pattern the class's fallback",
           model_type="kimi_linear", vocab_size=163840, hidden_size=2304, intermediate_size=9216,
           moe_intermediate_size=1024, num_hidden_layers=27, num_attention_heads=32, num_key_value_heads=32,
           n_shared_experts=1, routed_scaling_factor=2.446, kv_lora_rank=512, q_lora_rank=None, qk_rope_head_dim=64,
           v_head_dim=128, qk_nope_head_dim=128, n_group=1, topk_group=1, num_experts_per_tok=8, norm_topk_prob=True,
           hidden_act="silu", max_position_embeddings=1048576, rms_norm_eps=1e-5, tie_word_embeddings=False,
           attention_bias=False, num_local_experts=256, linear_head_dim=128, linear_num_heads=32,
           linear_conv_kernel_dim=4),
)
"""Configurations read from transformers' configuration defaults where the class's docstring names the model: Llama 4
Scout's text model, Qwen3-Next 80B-A3B and Kimi Linear 48B-A3B (the hybrids' delta-rule layers), with only the
fields those defaults give. MiniMax-M2 is not here: MiniMaxM2Config's docstring names MiniMax-Text-01, and its
defaults leave out the partial RoPE (rotary_dim) the released config.json gives. Nor is Qwen3.5: Qwen3_5TextConfig's
docstring names two checkpoints (Qwen/Qwen3.5-27B above, a "Qwen3.5-9B style configuration" in its example), so its
defaults are no one model's; Qwen3_5MoeTextConfig names Qwen/Qwen3.5-35B-A3B throughout, but its model_type
(qwen3_5_moe_text) is not one `DecoderConfig.from_dict` reads."""

_ATTRIBUTE_NAMES = {
    "gpt2": {"num_hidden_layers": "n_layer", "num_attention_heads": "n_head", "hidden_size": "n_embd",
             "max_position_embeddings": "n_positions"},
}
"""config.json's own names for the usual fields, per model type (transformers' `GPT2Config.attribute_map`)."""

_DEFAULT_FIELDS = {
    "falcon": {"max_position_embeddings": 2048},
}
"""Fields a config.json leaves out, at the default of transformers' configuration class (`FalconConfig`'s
max_position_embeddings: falcon-7b's config.json gives none)."""


@dataclass(frozen=True)
class ModelShape:
    """The attention shape of a published decoder, from its config.json (the generation chapter's table)."""

    name: str
    """The model's name on the Hugging Face Hub."""
    n_layers: int
    """num_hidden_layers."""
    n_heads: int
    """num_attention_heads: query heads per layer."""
    n_kv_heads: int
    """num_key_value_heads: h_q for multi-head attention, 1 for multi-query, in between for grouped-query."""
    head_dim: int
    """d: hidden_size / num_attention_heads (or head_dim)."""
    context: int
    """max_position_embeddings: the longest sequence the configuration allows."""
    window: int | None = None
    """sliding_window, if every layer uses one."""
    dtype: str = "bfloat16"
    """The dtype its weights are published in (torch_dtype in config.json; float32 where it names none, as
    transformers then loads them)."""

    @property
    def attention(self) -> str:
        """"multi-head", "multi-query" or "grouped-query (g query heads per key/value head)"."""
        if self.n_kv_heads == self.n_heads:
            return "multi-head"
        if self.n_kv_heads == 1:
            return "multi-query"
        return f"grouped-query ({self.n_heads // self.n_kv_heads} query heads per key/value head)"


def model_shape(entry: PublishedConfig) -> ModelShape:
    """The attention shape of a published configuration: from its `DecoderConfig`, or, for GPT-2 and Falcon (model
    types this package does not run), from their config.json fields read as transformers' configuration classes
    read them."""
    fields = dict(entry.fields)
    model_type = fields.get("model_type")
    if model_type not in _ATTRIBUTE_NAMES and model_type not in _DEFAULT_FIELDS:
        c = entry.config
        windows = set(c.windows)
        return ModelShape(entry.name, c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim, c.max_positions,
                          windows.pop() if len(windows) == 1 else None, c.dtype)
    fields = {**_DEFAULT_FIELDS.get(model_type, {}), **fields}
    for name, own in _ATTRIBUTE_NAMES.get(model_type, {}).items():
        fields.setdefault(name, fields[own])
    n_heads = int(fields["num_attention_heads"])
    n_kv_heads = int(fields.get("num_key_value_heads") or n_heads)
    if model_type == "falcon" and fields.get("multi_query") and not fields.get("new_decoder_architecture"):
        n_kv_heads = 1  # FalconAttention: one key/value head for multi_query, unless the new decoder architecture
    return ModelShape(entry.name, int(fields["num_hidden_layers"]), n_heads, n_kv_heads,
                      int(fields["hidden_size"]) // n_heads, int(fields["max_position_embeddings"]), None,
                      str(fields.get("torch_dtype") or "float32"))


def published_entry(name: str) -> PublishedConfig:
    """The entry of `PUBLISHED_CONFIGS`, `GENERATION_CONFIGS`, `SPARSE_CONFIGS` or `DEFAULT_CONFIGS` of a published
    model, by its Hub name."""
    entries = PUBLISHED_CONFIGS + GENERATION_CONFIGS + SPARSE_CONFIGS + DEFAULT_CONFIGS
    for entry in entries:
        if entry.name == name:
            return entry
    raise ValueError(f"name must be one of {', '.join(e.name for e in entries)}; got {name!r}")


def checkpoint_refusal(entry: PublishedConfig) -> str | None:
    """Why `load_decoder` refuses the published checkpoint of `entry` (its `UnsupportedConfigError`), or None.

    The entry's fields with its `checkpoint_fields` over them, read as `load_decoder` reads the folder's
    config.json: a quantized storage or a multimodal wrapper is refused, naming the key.
    """
    if not isinstance(entry, PublishedConfig):
        raise TypeError(f"entry must be a PublishedConfig (an entry of PUBLISHED_CONFIGS); got {type(entry).__name__}")
    try:
        DecoderConfig.from_dict({**entry.fields, **entry.checkpoint_fields}, f"{entry.name} (published config.json)")
    except UnsupportedConfigError as error:
        return str(error)
    return None


def published_config(name: str) -> DecoderConfig:
    """The `DecoderConfig` of a published model of `PUBLISHED_CONFIGS`, `GENERATION_CONFIGS` or `DEFAULT_CONFIGS`, by
    its Hub name.

    UnsupportedConfigError for a model type this package does not run (GPT-2, Falcon).
    """
    return published_entry(name).config
