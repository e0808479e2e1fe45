"""Running an untrusted notebook for the batch grader, and nothing else.

- `runner`: `run_notebook`, one notebook until it finishes, again without a
  cell or call that killed its process;
- `process`: `WorkerProcess`, one worker process started, watched and killed
  from outside, with its `Limits`;
- `worker`: what runs inside that process (the cells, then the calls);
- `protocol`: the frames between the two (plain numbers only).

Only observations cross back; every verdict is made outside, by `engine`.
"""
