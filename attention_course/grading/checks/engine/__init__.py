"""The check engine: the same in a student's notebook and in the batch grader.

- `cases`: the inputs a check tries, and how inputs and results are shown;
- `calls`: calling a student's function and keeping plain data of what it did;
- `check`: a `Check` (a function's inputs, reference and mistakes) and the
  engine that runs and judges it;
- `mistakes`: naming a wrong answer's likely mistake from what it returned;
- `observe`: the kind of difference a wrong answer shows, said as observed
  (a factor, another order, the first wrong row), and a helper at fault;
- `shrink`: the smallest input that still fails, shown first;
- `results`: what a check returns (`CheckResult`, one `CaseResult` per input);
- `audit`: verifying, on a submission, every claim its feedback makes.
"""
