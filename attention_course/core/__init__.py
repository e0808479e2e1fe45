"""What the book teaches, short enough to read in one sitting: softmax, masks, attention, multi-head, positions.

- `softmax`: the numerically stable softmax (book/stable_softmax.ipynb).
- `masks`: causal (top-left or lower-right), sliding-window, chunked and padding masks, PyTorch's convention (book/masks.ipynb).
- `attention`: scaled dot-product attention, the plain reference (book/worked_example.ipynb), with
  grouped-query attention (`enable_gqa`, `repeat_kv`; book/decoding.ipynb).
- `backward`: its gradients for Q, K and V, from the stored weights (book/backward.ipynb).
- `multi_head`: h heads side by side, with W_q, W_k, W_v and W_o (book/learned_projections.ipynb).
- `positions`: sinusoidal positions, RoPE and ALiBi, where position enters the scores (book/positions.ipynb).
- `rope_scaling`: RoPE's frequencies rescaled for longer contexts: linear, dynamic NTK, Llama 3.1's, YaRN.
- `norms`: RMSNorm, of the residual stream and of each query and key (QK-norm).
- `softcap`: c * tanh(s / c), Gemma 2's cap on scores and logits.
- `sinks`: a learned sink logit per head joined to every softmax row (gpt-oss).
- `sparse`: a lightning indexer's scores, each query's top-k keys, attention over those alone (DeepSeek-V3.2, GLM-5).
- `delta_rule`: the gated delta rule, a state per head instead of scores, token by token and chunk by chunk
  (Gated DeltaNet, Kimi Delta Attention).
- `short_conv`: the short causal depthwise convolution the delta-rule layers run on q, k and v.
- `gates`: an output gated by sigmoid(z), and the gated RMSNorm (Qwen3-Next).
- `compress`: windows of tokens pooled into one key by a per-coordinate softmax gate, side by side or
  overlapping (DeepSeek-V4's compressed keys).
- `temperature`: Llama 4's query scale that grows with position in its layers without RoPE.

`_checks` holds the input checks every public function shares, and the rule
for 16-bit inputs (float16, bfloat16): computed in float32, returned in their
dtype (book/low_precision.ipynb).
"""

from .. import lazy_attributes

# `import attention_course.core` loads this module alone; each name, and each module, is imported on first use,
# through the package's one mechanism: a check that needs a softmax does not wait for the delta rule.
# `core.softmax` and `core.softcap` are the functions, though their modules have the same names (the mechanism keeps
# them so).
__getattr__, __dir__ = lazy_attributes(__name__, {
    "attention": ("attention_scores", "attention_weights", "repeat_kv", "scaled_dot_product_attention"),
    "backward": ("attention_backward",),
    "compress": ("gated_pool", "overlapping_gated_pool"),
    "delta_rule": ("chunked_gated_delta_rule", "delta_rule_step", "gated_delta_rule", "l2_normalize"),
    "gates": ("gated_rms_norm", "output_gate"),
    "masks": ("causal_mask", "chunked_causal_mask", "padding_mask", "sliding_window_mask"),
    "multi_head": ("merge_heads", "multi_head_attention", "split_heads"),
    "norms": ("rms_norm",),
    "positions": ("alibi_bias", "alibi_slopes", "apply_rope", "rope_frequencies", "sinusoidal_positions"),
    "rope_scaling": ("RopeScaling",),
    "short_conv": ("causal_conv1d",),
    "sinks": ("sink_attention", "sink_softmax"),
    "softcap": ("softcap",),
    "softmax": ("softmax",),
    "sparse": ("indexer_scores", "sparse_attention", "top_k_mask"),
    "temperature": ("nope_temperature",),
}, {module: module for module in ("attention", "backward", "compress", "delta_rule", "gates", "masks", "multi_head",
                                  "norms", "positions", "rope_scaling", "short_conv", "sinks", "sparse",
                                  "temperature")})

__all__ = [
    "RopeScaling",
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "attention_backward",
    "attention_scores",
    "attention_weights",
    "causal_conv1d",
    "causal_mask",
    "chunked_causal_mask",
    "chunked_gated_delta_rule",
    "delta_rule_step",
    "gated_delta_rule",
    "gated_pool",
    "gated_rms_norm",
    "indexer_scores",
    "l2_normalize",
    "merge_heads",
    "multi_head_attention",
    "nope_temperature",
    "output_gate",
    "overlapping_gated_pool",
    "padding_mask",
    "repeat_kv",
    "rms_norm",
    "rope_frequencies",
    "scaled_dot_product_attention",
    "sink_attention",
    "sink_softmax",
    "sinusoidal_positions",
    "sliding_window_mask",
    "softcap",
    "softmax",
    "sparse_attention",
    "split_heads",
    "top_k_mask",
]
