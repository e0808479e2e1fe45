"""Helpers that exist for one chapter each: the data, traces, measurements and figures it shows.

- `worked_example`: the bank-bot example's vectors and the five-step trace (book/worked_example.ipynb).
- `scaling`: the spread of scores and the peakedness of their softmax against d_k (book/scaling.ipynb).
- `training`: learning W_q, W_k, W_v on a toy task, backward pass by hand (book/learned_projections.ipynb).
- `positions`: RoPE's decay with distance, its wavelengths and real models' bases (book/positions.ipynb).
- `cost`: FLOPs and bytes counted, time and memory measured, log-log slopes (book/cost.ipynb).
- `plots`: the figures several chapters draw (needs matplotlib, the `book` extra; not imported here).
"""

from .cost import attention_flops, backward_flops, loglog_slope, measure, score_matrix_bytes, tile_count
from .positions import ROPE_MODELS, RopeModel, rope_decay, rope_wavelengths, slow_pairs
from .scaling import jacobian_norm, max_weight, peakedness, score_std, softmax_entropy, softmax_jacobian
from .training import ToyTask, gradient_check, train
from .worked_example import BANK_BOT, AttentionTrace, WorkedExample, trace_attention

__all__ = [
    "BANK_BOT",
    "ROPE_MODELS",
    "AttentionTrace",
    "RopeModel",
    "ToyTask",
    "WorkedExample",
    "attention_flops",
    "backward_flops",
    "gradient_check",
    "jacobian_norm",
    "loglog_slope",
    "max_weight",
    "measure",
    "peakedness",
    "rope_decay",
    "rope_wavelengths",
    "score_matrix_bytes",
    "score_std",
    "slow_pairs",
    "softmax_entropy",
    "softmax_jacobian",
    "tile_count",
    "trace_attention",
    "train",
]
