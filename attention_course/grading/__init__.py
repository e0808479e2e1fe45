"""Graded exercises: checks that teach, and the tools to release and grade them.

In a notebook, check a function you wrote:

>>> from attention_course.grading import check_softmax
>>> def softmax(x, axis=-1):
...     raise NotImplementedError()
>>> check_softmax(softmax).status
'not attempted'

From a shell: `attention-course check NOTEBOOK`, `attention-course release`,
`attention-course grade SUBMISSION... --out gradebook.csv`.

Three parts, and the tools beside them:

- `engine`: the check engine, the same in a notebook and in the grader:
  `results` (what a check returns), `calls` (calling the student's function),
  `cases` (inputs and how they are shown), `check` (the engine) and
  `mistakes` (diagnosis).
- `exercises`: the registry of exercises (`EXERCISES`) and one module of
  checks per exercise group.
- `sandbox`: running an untrusted notebook: `runner` (one notebook, restarts),
  `process` (one worker process, watched from outside), `bubblewrap` (the
  sandbox around it), `worker` (what runs inside it), `audit` (what the
  notebook tried, seen from inside) and `protocol` (the wire format between
  them).
- `release` (exercises/ from solutions/), `batch` (a class at once),
  `gradebook` (CSV, JSON and the text report) and `cli` (the commands).
"""

from .engine.results import CaseResult, CheckResult
from .exercises.attention import check_attention
from .exercises.backward import check_backward_query_tile
from .exercises.decoding import check_decode_step
from .exercises.flash import check_flash_attention
from .exercises.masks import check_causal_mask, check_masked_attention, check_padded_attention, check_padding_mask
from .exercises.multi_head import check_multi_head_attention
from .exercises.positions import check_apply_rope, check_rope_attention
from .exercises.scores import check_dot_product_spread, check_dot_scores, check_scale_scores
from .exercises.softmax import check_softmax

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
]
