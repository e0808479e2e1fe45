"""Graded exercises: checks that teach, and the tools to release and grade them.

In a notebook, check a function you wrote:

>>> from attention_course.grading import check_softmax
>>> def softmax(x, axis=-1):
...     raise NotImplementedError()
>>> check_softmax(softmax).status
'not attempted'

From a shell: `attention-course check NOTEBOOK`, `attention-course release`,
`attention-course grade SUBMISSION... --out gradebook.csv`.

Two rooms, on either side of the trust boundary, and the tools beside them:

- `checks`: the student's room, what a notebook's check cell runs: `engine`
  (the check engine) and `exercises` (the registry and each exercise's
  checks). It imports nothing of the other room.
- `kit`: the instructor's room, what grades a class of untrusted notebooks:
  `intake`, `sandbox`, `batch`, `cluster`, `assignment`, `write` (gradebook,
  LMS files, feedback, summary) and `cli` (the instructor's commands).
- `release` (exercises/ from solutions/, and the packaged copies) and `cli`
  (the `check`, `release` and `exercises` commands).
"""

from .checks.engine.results import CaseResult, CheckResult
from .checks.exercises.attention import check_attention
from .checks.exercises.backward import check_backward_query_tile
from .checks.exercises.by_hand import check_worked_example
from .checks.exercises.decoding import check_decode_step
from .checks.exercises.flash import check_flash_attention
from .checks.exercises.masks import check_causal_mask, check_masked_attention, check_padded_attention, check_padding_mask
from .checks.exercises.multi_head import check_multi_head_attention
from .checks.exercises.positions import check_apply_rope, check_rope_attention
from .checks.exercises.scores import check_dot_product_spread, check_dot_scores, check_scale_scores
from .checks.exercises.sinks import check_sink_attention
from .checks.exercises.softmax import check_softmax
from .checks.exercises.step_cost import check_decode_attention_cost, check_decode_step_cost

__all__ = [
    "CaseResult",
    "CheckResult",
    "check_apply_rope",
    "check_attention",
    "check_backward_query_tile",
    "check_causal_mask",
    "check_decode_step",
    "check_dot_product_spread",
    "check_dot_scores",
    "check_flash_attention",
    "check_masked_attention",
    "check_multi_head_attention",
    "check_padded_attention",
    "check_padding_mask",
    "check_rope_attention",
    "check_scale_scores",
    "check_softmax",
    "check_worked_example",
    "check_sink_attention",
    "check_decode_attention_cost",
    "check_decode_step_cost",
]
