"""Running an untrusted notebook for the grader, and nothing else.

- `runner`: `run_notebook`, one notebook until it finishes, again without a
  cell or call that killed its process; what it tried, as incidents and flags;
- `process`: `WorkerProcess`, one worker process started, watched and stopped
  from outside, with its `Limits`;
- `channel`: the worker's reports on its result channel, each frame checked to
  come in its turn;
- `tree`: the sandbox's processes seen from outside (psutil): their memory,
  what is left running;
- `bubblewrap`: the sandbox around each worker (`bwrap`): its namespaces, its
  read-only view, its limits, and whether this machine can make one;
- `worker`: what runs inside that process (the cells, then the calls);
- `watch`: what the notebook tries, seen from inside the worker (an audit hook,
  snapshots of the course's code, a profiler during the calls);
- `protocol`: the frames between the two (plain numbers only).

Only observations cross back; every verdict is made outside, by `judge`.
"""
