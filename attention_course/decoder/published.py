"""Published configurations, as their config.json files give them: one table, one source per entry.

Each entry keeps the config.json fields `DecoderConfig.from_dict` reads, with
the values the model's repository on the Hugging Face Hub publishes (checked
against the defaults and docstrings of transformers' configuration classes
where those describe the same model: `DeepseekV3Config`, `GptOssConfig`).
Left out: fields that concern only training or serving, and the
`quantization_config` of checkpoints stored in FP8 (DeepSeek-V3) or MXFP4
(gpt-oss's experts), which this package does not run. Gemma 3 27B's fields
are the `text_config` of its multimodal config.json.

`published_config(name)` reads an entry into a `DecoderConfig`, from which
`cache.cache_bytes` and `size.parameter_count` count.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from .config import DecoderConfig


@dataclass(frozen=True)
class PublishedConfig:
    """One published model's configuration."""

    name: str
    """The model's name on the Hugging Face Hub."""
    source: str
    """Where the values come from."""
    fields: MappingProxyType
    """The config.json fields, read-only."""

    @property
    def config(self) -> DecoderConfig:
        """The fields read by `DecoderConfig.from_dict`."""
        return DecoderConfig.from_dict(dict(self.fields), f"{self.name} (published config.json)")


def _entry(name: str, source: str, **fields) -> PublishedConfig:
    return PublishedConfig(name, source, MappingProxyType(fields))


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
           attention_bias=False, bos_token_id=0, eos_token_id=1, torch_dtype="bfloat16"),
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
           eos_token_id=200002, pad_token_id=199999, torch_dtype="bfloat16"),
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


def published_config(name: str) -> DecoderConfig:
    """The `DecoderConfig` of a published model of `PUBLISHED_CONFIGS`, by its Hub name."""
    for entry in PUBLISHED_CONFIGS:
        if entry.name == name:
            return entry.config
    raise ValueError(f"name must be one of {', '.join(e.name for e in PUBLISHED_CONFIGS)}; got {name!r}")
