"""Graded exercises: checks that teach, and the tools to release and grade them.

In a notebook, check a function you wrote:

>>> from attention_course.grading import check_softmax
>>> def softmax(x, axis=-1):
...     raise NotImplementedError()
>>> check_softmax(softmax).status
'not attempted'

From a shell: `attention-course check NOTEBOOK`, `attention-course release`,
`attention-course grade SUBMISSION... --out gradebook.csv`.

Modules: `results` (what a check returns), `calls` (calling the student's
function), `cases` and `check` (inputs and the engine), `mistakes` (diagnosis),
one `*_checks` module per exercise group, `exercises` (the registry),
`release`, `runner`, `sandbox` and `worker` (sandboxed execution), `batch`,
`gradebook` and `cli`.
"""

from .attention_checks import check_attention
from .flash_checks import check_flash_attention
from .mask_checks import check_causal_mask, check_masked_attention, check_padded_attention, check_padding_mask
from .multi_head_checks import check_multi_head_attention
from .results import CaseResult, CheckResult
from .scores_checks import check_dot_product_spread, check_dot_scores, check_scale_scores
from .softmax_checks import check_softmax

__all__ = [
    "CaseResult",
    "CheckResult",
    "check_attention",
    "check_causal_mask",
    "check_dot_product_spread",
    "check_dot_scores",
    "check_flash_attention",
    "check_masked_attention",
    "check_multi_head_attention",
    "check_padded_attention",
    "check_padding_mask",
    "check_scale_scores",
    "check_softmax",
]
