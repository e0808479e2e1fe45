"""Graded exercises: checks that teach, and the tools to release and grade them.

In a notebook, check a function you wrote:

>>> from attention_course.grading import check_softmax
>>> def softmax(x, axis=-1):
...     raise NotImplementedError()
>>> print(check_softmax(softmax).status)
not attempted

From a shell: `attention-course check NOTEBOOK`, `attention-course release`,
`attention-course grade SUBMISSION... --out gradebook.csv`.

Three rooms, each named by what it does, and the tools beside them:

- `checks`: what is checked, what a notebook's check cell runs: `engine` (the
  check engine) and `exercises` (the registry and each exercise's checks). It
  imports nothing of the other two rooms.
- `run`: runs one untrusted notebook in its sandbox and judges it, for a
  student's `attention-course check` and for the grader alike: `plan`,
  `sandbox`, `judge`, `notebook`. It imports nothing of the classroom.
- `classroom`: grades a class: `intake` of LMS downloads, `people`, `roster`,
  `batch`, `cluster`, `score`, `report`, `write` (gradebook, LMS files,
  feedback, summary) and `cli` (the instructor's commands).
- `authored` (an instructor's own exercises, from their source notebooks),
  `release` (students' notebooks from solutions), `handout` (exercise 0 for
  one student) and `cli` (the `check`, `release`, `exercises` and `answers`
  commands).
"""

from .. import lazy_attributes
from .checks.engine.results import CaseResult, CheckResult
from .checks.exercises import EXERCISES

# `import attention_course.grading` loads the registry alone: each check_<name> is imported from its exercise's
# module on first use, so that a notebook's check cell, and `attention-course check`, wait for their own exercise's
# inputs and references only (not the decoders, nor the roofline's counts, of another).
# Looked up each time, never written into this package's namespace (keep=False): in a grader's worker, a name
# added to the grading package after the notebook started would look like the notebook's doing.
_CHECKS = {f"checks.exercises.{module}": tuple(f for e in EXERCISES if e.module == module for f in e.check_functions)
           for module in dict.fromkeys(e.module for e in EXERCISES)}  # one module of checks per exercise group
__getattr__, __dir__ = lazy_attributes(__name__, _CHECKS, {}, keep=False)


__all__ = ["CaseResult", "CheckResult", *(f for e in EXERCISES for f in e.check_functions)]
