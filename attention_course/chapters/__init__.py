"""Helpers that exist for one chapter each: the data, traces, measurements and figures it shows.

- `worked_example`: the bank-bot example's vectors and the five-step trace (book/worked_example.ipynb).
- `scaling`: the spread of scores and the peakedness of their softmax against d_k (book/scaling.ipynb).
- `training`: learning W_q, W_k, W_v on a toy task, backward pass by hand (book/learned_projections.ipynb).
- `positions`: RoPE's decay with distance, its wavelengths and real models' bases (book/positions.ipynb).
- `cost`: FLOPs and bytes counted, time and memory measured, log-log slopes (book/cost.ipynb).
- `decoding`: published decoders' attention shapes, the work and time of a decoding step with and
  without the KV cache, head groups, the reach of sliding windows (book/decoding.ipynb).
- `frameworks`: what torch and transformers do (masked rows, masks, 16-bit kernels, layers without positions),
  measured where they are installed and stored with their versions for builds without them
  (book/stable_softmax.ipynb, masks.ipynb, low_precision.ipynb, positions.ipynb).
- `roofline`: FLOPs and bytes of prefill and decoding counted (MHA, GQA, MQA, MLA), the machine's
  bandwidth and matrix-product rate measured, the roofline (book/generating_cost.ipynb).
- `io_traffic`: the bytes the plain and the tiled attention move between slow and fast memory,
  counted on the tiled loop itself, and the FlashAttention papers' figures (book/generating_cost.ipynb).
- `kv_memory`: the memory a batch of requests' caches holds, and the logit error of a quantized
  cache, measured (book/generating_cost.ipynb).
- `todays_models`: which changes to the score a published configuration makes, RoPE's pairs under a
  scaling rule, QK-norm in a short training run, a checkpoint folder written (book/todays_models.ipynb).
- `without_all_scores`: a small lightning indexer, what top-k selection drops, a delta-rule state's recall against
  a cache's, the first token's weight without an output gate, the numbers each layer kind keeps and reads, one
  decoding step of each timed (book/without_all_scores.ipynb).
- `compression`: DeepSeek-V4's compressed keys: a gated pool on small numbers, one query's window and picked
  entries, the numbers its cache keeps per token against DeepSeek-V3's (book/without_all_scores.ipynb).
- `plots`: the figures several chapters draw (needs matplotlib, the `book` extra; not imported here).
"""

from .. import lazy_attributes

# Each helper is imported with its module on first use (`chapters.BANK_BOT` loads worked_example alone), as NumPy
# and SciPy load their submodules: the grader, which needs the bank-bot example, does not wait for the cost
# chapter's measurements or the decoders.
_NAMES = {
    "compression": ("DEEPSEEK_V4_FLASH", "SMALL_POOL", "SMALL_V4", "CacheRow", "QueryView", "SmallPool",
                    "cache_per_token", "entry_tokens", "pool_weights", "query_view"),
    "cost": ("attention_flops", "backward_flops", "loglog_slope", "measure", "score_matrix_bytes", "tile_count"),
    "decoding": ("PUBLISHED_CONFIGS", "ModelShape", "decode_flops", "filled_cache", "head_groups", "receptive_field"),
    "io_traffic": ("PUBLISHED_FLASH_FIGURES", "PublishedFigure", "SlowMemory", "Traffic", "flash_block_sizes",
                   "flash_io_formula", "plain_numbers", "plain_traffic", "tiled_traffic"),
    "kv_memory": ("logit_errors", "memory_held"),
    "positions": ("ROPE_MODELS", "RopeModel", "rope_decay", "rope_wavelengths", "slow_pairs"),
    # time_decode_step is the roofline's (a step after a context of n cached tokens); decoding's, with and without
    # the cache, is imported from chapters.decoding
    "roofline": ("H100_SXM", "LAYOUTS", "LLAMA_3_8B", "PUBLISHED_LAYOUTS", "AttentionLayout", "Ceilings",
                 "CitedCeilings", "Cost", "DecoderShape", "Rate", "RooflinePoint", "StepCost", "attention_cost",
                 "measure_bandwidth", "measure_ceilings", "measure_matmul_rate", "roofline_plot", "step_cost",
                 "time_decode_step", "time_prefill"),
    "scaling": ("PROJECTION_INITS", "jacobian_norm", "max_weight", "peakedness", "projected_score_std", "score_std",
                "softmax_entropy", "softmax_jacobian"),
    "todays_models": ("RescaledPairs", "SpreadRun", "model_changes", "rescaled_pairs", "train_spread",
                      "write_checkpoint"),
    "training": ("ToyTask", "gradient_check", "train"),
    "without_all_scores": ("BANK_BOT_INDEXER", "COST_MODELS", "FRONTIER_CONFIGS", "DecodeShape", "FirstTokenWeight",
                           "LayerKindCost", "LayerMemory", "SmallIndexer", "TopKLoss", "attention_sequence",
                           "first_token_weight", "layer_kind_costs", "layer_memories",
                           "line_fit", "measured_crossover", "predicted_crossover", "projected_indexer", "recall_error",
                           "sparse_decode_step", "time_decode_steps", "top_k_loss"),
    "worked_example": ("BANK_BOT", "BANK_BOT_QUERIES", "AttentionTrace", "WorkedExample", "trace_attention"),
}
__getattr__, __dir__ = lazy_attributes(__name__, _NAMES,
                                       {name: name for name in (*_NAMES, "frameworks", "plots", "precision")})


__all__ = [
    "PROJECTION_INITS",
    "BANK_BOT",
    "BANK_BOT_QUERIES",
    "PUBLISHED_CONFIGS",
    "ROPE_MODELS",
    "AttentionTrace",
    "ModelShape",
    "RopeModel",
    "ToyTask",
    "WorkedExample",
    "attention_flops",
    "backward_flops",
    "decode_flops",
    "filled_cache",
    "gradient_check",
    "head_groups",
    "jacobian_norm",
    "loglog_slope",
    "max_weight",
    "measure",
    "peakedness",
    "projected_score_std",
    "receptive_field",
    "rope_decay",
    "rope_wavelengths",
    "score_matrix_bytes",
    "score_std",
    "slow_pairs",
    "softmax_entropy",
    "softmax_jacobian",
    "tile_count",
    "time_decode_step",
    "trace_attention",
    "train",
    "H100_SXM",
    "LAYOUTS",
    "LLAMA_3_8B",
    "PUBLISHED_FLASH_FIGURES",
    "PUBLISHED_LAYOUTS",
    "AttentionLayout",
    "Ceilings",
    "CitedCeilings",
    "Cost",
    "DecoderShape",
    "PublishedFigure",
    "Rate",
    "RooflinePoint",
    "SlowMemory",
    "StepCost",
    "Traffic",
    "attention_cost",
    "flash_block_sizes",
    "flash_io_formula",
    "logit_errors",
    "measure_bandwidth",
    "measure_ceilings",
    "measure_matmul_rate",
    "memory_held",
    "plain_numbers",
    "plain_traffic",
    "roofline_plot",
    "step_cost",
    "tiled_traffic",
    "time_decode_step",
    "time_prefill",
    "RescaledPairs",
    "SpreadRun",
    "model_changes",
    "rescaled_pairs",
    "train_spread",
    "write_checkpoint",
    "BANK_BOT_INDEXER",
    "COST_MODELS",
    "FRONTIER_CONFIGS",
    "DecodeShape",
    "FirstTokenWeight",
    "LayerKindCost",
    "LayerMemory",
    "SmallIndexer",
    "TopKLoss",
    "attention_sequence",
    "first_token_weight",
    "layer_kind_costs",
    "layer_memories",
    "line_fit",
    "measured_crossover",
    "predicted_crossover",
    "projected_indexer",
    "recall_error",
    "sparse_decode_step",
    "time_decode_steps",
    "top_k_loss",
    "DEEPSEEK_V4_FLASH",
    "SMALL_POOL",
    "SMALL_V4",
    "CacheRow",
    "QueryView",
    "SmallPool",
    "cache_per_token",
    "entry_tokens",
    "pool_weights",
    "query_view",
]
