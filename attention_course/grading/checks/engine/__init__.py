"""The check engine: the same in a student's notebook and in the batch grader.

- `cases`: the inputs a check tries (`Case`), where their random values come
  from (`Rngs`), and how inputs and results are shown;
- `calls`: calling a student's function and keeping plain data of what it did
  (an `Observation`, how the call ended a `CallOutcome`);
- `check`: a `Check` (a function's inputs, reference, mistakes and helpers,
  its optional hooks grouped as `Judging` and `Presenting`) and
  `case_verdict`, the verdict on what a call returned (`check_verdict`, on a
  check's calls);
- `run`: `check_in_process`, a check run in this process, then the follow-up of a
  failure (a helper at fault, the smallest input that still fails);
- `mistakes`: naming a wrong answer's likely mistake from what it returned;
- `differences`: the kind of difference a wrong answer shows, said as observed
  (a factor, another order, the first wrong row), and a helper at fault;
- `shrink`: cutting an input down, size by size;
- `results`: what a check returns (`CheckResult`, one `CaseResult` per input,
  each with its `Verdict` and a `CheckStatus`).

The audit of every claim a check's feedback makes (`tests/support/audit.py`)
is the tests' own, not shipped.

It imports no exercise: what a check needs of the others comes in with it.
"""
