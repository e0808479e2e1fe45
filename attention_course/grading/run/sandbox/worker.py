"""The worker process that runs one student notebook for the batch grader.

Started by `process.WorkerProcess`, inside the bubblewrap sandbox (or, with
`--no-sandbox`, in an empty temporary folder). It reads one request frame
from stdin (the notebook's code cells and the calls to make), runs the cells
in an IPython shell with a time limit each, calls the student's functions
with `observe_call`, and reports every step on the result channel (a pipe
whose descriptor is in $ATTENTION_COURSE_RESULT_FD), with what `watch.Watch`
saw the notebook try. Only plain arrays go back, and the grader judges
them. A request with checks to follow up keeps stdin open: after the calls,
the worker says it is waiting and reads the grader's answer there, which of
those checks failed (the grader's verdict: the expected results never enter
the sandbox), so that a notebook that passes costs nothing more. For each
check the answer names, it looks closer, as a notebook's own check does
(`run.search`, after the check's verdict judged again here, as a guide, with
the course's code: the notebook may have changed anything in this process):
the student's helper at fault, or a smaller input that fails the same way,
which it sends for the grader to verify (`run.follow_up`). When it is done
it waits to be killed, so that the grader can see what the notebook left
running. A copy of it that the notebook forks (`os.fork()`)
ends with the cell, call or follow-up that made it: the grader's steps are
the worker's alone.
"""

from __future__ import annotations

import os
import sys
import time

WAIT_SECONDS = 30.0
"""How long a finished worker waits for the grader to end it."""
MAX_FOLLOW_UP_BYTES = 16 << 20
"""Largest follow-up sent (its swapped calls' results and the smaller input): a larger one is not sent."""


def _limit_resources(memory_bytes: int, file_bytes: int) -> None:
    import resource
    import signal

    if memory_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    if file_bytes > 0:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails with an error instead of killing us
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))


def _read_frame(fd: int, decode):
    """The next frame the grader writes on `fd` (header, arrays, end), or None if the pipe ends first or carries
    anything else.

    Reads go on through a signal the notebook's code set to interrupt them (an alarm whose handler raises): the
    grader, not the notebook, ends a worker that waits here too long."""
    data = bytearray()
    while True:
        try:
            frame = decode(data)
        except ValueError:  # not a frame of the grader's: someone else wrote on the pipe
            return None
        if frame is not None:
            return frame
        try:
            chunk = os.read(fd, 1 << 20)
        except OSError:
            return None
        except BaseException:  # noqa: BLE001 -- an alarm the notebook set
            continue
        if not chunk:
            return None
        data += chunk


def _now() -> float:
    """Seconds since boot, the clock of /proc/<pid>/stat's start times."""
    return time.clock_gettime(time.CLOCK_BOOTTIME) if hasattr(time, "CLOCK_BOOTTIME") else time.monotonic()


class _Findings:
    """Sends what the watch saw: each distinct finding once per step, at most `shown` of a kind; counts them all.

    The count of processes started is sent at once when it reaches `processes` (the sandbox's limit): a step that
    starts that many is often killed before its counts could be sent at its end.
    """

    def __init__(self, send, shown: int = 5, processes: int | None = None):
        import threading

        from ..status import Finding

        self._send, self._shown, self._processes = send, shown, processes
        self._kinds = (Finding.PROCESS, Finding.PROCESS_LIMIT)
        self._lock = threading.Lock()
        self._sent: set[tuple[str, str]] = set()
        self.counts: dict[str, int] = {}

    def __call__(self, kind: str, detail: str) -> None:
        with self._lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            if kind == self._kinds[0] and self.counts[kind] == self._processes:
                self._send({"event": "alert", "kind": self._kinds[1], "detail": f"{self._processes} started"})
            key = (kind, detail[:300])
            if key in self._sent or sum(k == kind for k, _ in self._sent) >= self._shown:
                return
            self._sent.add(key)
        self._send({"event": "alert", "kind": kind, "detail": key[1]})

    def end_step(self) -> dict[str, int]:
        with self._lock:
            counts, self.counts = self.counts, {}
            self._sent = set()
        return counts


def _shell():
    """The IPython shell the cells run in, with what a grader's run does not use left out: history, colours,
    the search for its folder (the grader names it, $IPYTHONDIR; the search imports tempfile for a fallback) and
    tab completion (the largest module the shell imports as it starts; nothing is typed into this one)."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    class Shell(InteractiveShell):
        def init_completer(self) -> None:
            pass

    config = Config()
    config.HistoryManager.enabled = False
    config.InteractiveShell.colors = "nocolor"
    folder = os.environ.get("IPYTHONDIR") or os.path.expanduser(os.path.join("~", ".ipython"))
    return Shell.instance(config=config, ipython_dir=folder)


def main() -> None:
    fd = int(os.environ.pop("ATTENTION_COURSE_RESULT_FD"))
    _limit_resources(int(os.environ.pop("ATTENTION_COURSE_MEMORY", "0")), int(os.environ.pop("ATTENTION_COURSE_FILE_SIZE", "0")))
    # Nothing is imported from the (student-writable) working folder.
    sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
    os.set_inheritable(fd, False)  # a program the notebook starts does not get the result channel

    # Everything the notebook's run needs is made ready first: the grader may start the worker before it has read
    # the notebook, and send the request when it has prepared it.
    import threading

    import attention_course  # noqa: F401 -- imported before any cell runs, so that it is in the snapshot (its names,
    # loaded on first use, are taken as they come: those the exercise provides before the first cell)
    import attention_course.grading  # noqa: F401

    from ...checks.engine import calls
    from ...checks.engine.run import checks_left_to_the_grader
    from ..status import CellOutcome
    from .watch import Watch
    from .protocol import CHANNEL_LOST, decode, encode, pack_follow_up, pack_observation, unpack_value

    write, lock, pid, leave = os.write, threading.Lock(), os.getpid(), os._exit  # bound before any student code runs
    observe_call = calls.observe_call
    os.register_at_fork(after_in_child=lambda: _close_quietly(fd))  # a forked child cannot write into the channel

    def only_the_worker() -> None:
        # A copy of the worker forked by the notebook (`os.fork()` in a cell or in its function) ends with the step
        # that made it: the grader's steps that follow are the worker's alone, and copies running them would take
        # the CPU from it (a fork bomb's 63 copies each calling the functions again).
        if os.getpid() != pid:
            leave(0)

    def send(header: dict, arrays=None) -> None:
        if os.getpid() != pid:
            return
        data = memoryview(encode(header, arrays))
        with lock:
            try:
                while data:
                    data = data[write(fd, data):]
            except OSError:  # the notebook closed the channel: nothing more can be reported, the grader says why
                leave(CHANNEL_LOST)

    shell = _shell()

    frame, answers = _request(decode)
    request, arrays, _ = frame
    os.register_at_fork(after_in_child=lambda: _close_quietly(answers))
    follow = _FollowUps(request, arrays, unpack_value)  # the checks taken from the registry before any cell runs
    findings = _Findings(send, processes=request.get("processes"))
    watch = Watch(findings, writable=request.get("writable", []), course=request.get("course", []),
                  visible=request.get("visible", []), provided=request.get("provided", []),
                  processes=request.get("processes"))
    watch.install()
    send({"event": "ready", "pid": pid})

    skip = set(request.get("skip", []))
    with checks_left_to_the_grader():  # the notebook's check cells return at once: the grader checks below
        for index, source in enumerate(request["cells"]):
            if index in skip:
                continue
            send({"event": "cell", "index": index, "t": _now()})
            status, error = _run_cell(shell, source, request["cell_seconds"], calls, CellOutcome)
            only_the_worker()
            watch.changes()
            send({"event": "cell_done", "index": index, "status": status, "error": error,
                  "alerts": findings.end_step()})

    timed_out_groups, observed = set(), {}
    for call in request["calls"]:
        send({"event": "call", "id": call["id"], "t": _now()})
        if call["group"] in timed_out_groups:
            obs = calls.Observation(calls.CallOutcome.SKIPPED, error="not tried: an earlier input ran out of time")
        else:
            fn = shell.user_ns.get(call["function"])
            if fn is None:
                obs = calls.Observation(calls.CallOutcome.MISSING)
            else:
                args = tuple(unpack_value(a, arrays) for a in call["args"])
                kwargs = {k: unpack_value(v, arrays) for k, v in call["kwargs"].items()}
                with watch.calls_watched(call["function"], fn) as outcome:
                    obs = observe_call(fn, args, kwargs, seconds=call["seconds"],
                                       measure_memory=call["measure_memory"], reraise_interrupt=False)
                    outcome["status"] = obs.status
                only_the_worker()
                watch.changes()
            if obs.status == calls.CallOutcome.TIMEOUT:
                timed_out_groups.add(call["group"])
        observed[call["id"]] = obs
        out: dict = {}
        send({"event": "result", "id": call["id"], "observation": pack_observation(obs, out),
              "alerts": findings.end_step()}, out)
    if answers >= 0:  # which checks failed: the grader judges the calls while this worker waits
        send({"event": "waiting"})
        follow.send_all(_asked(answers, decode), observed, shell.user_ns, send, watch, findings, pack_follow_up,
                        only_the_worker)
    send({"event": "done"})
    sys.stdout.flush()
    _wait_to_be_killed()


def _request(decode) -> tuple[tuple[dict, dict, int], int]:
    """The grader's request, read from stdin: (its frame, the descriptor its answer will come on, -1 if it has no
    checks to follow up). The grader's answer comes on the same pipe, after the calls, so the pipe is kept under
    another number (not inheritable: a program the notebook starts lacks it); the cells' own stdin is empty (input()
    gets an end of file)."""
    frame = _read_frame(0, decode)
    if frame is None:
        raise SystemExit("the grader sent an incomplete request")
    answers = os.dup(0) if frame[0].get("follow") else -1
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    return frame, answers


def _asked(fd: int, decode) -> list[int]:
    """The follow-ups the grader's answer asks for (indices among the request's), read from `fd`; none if the answer
    is not the grader's frame or never comes whole."""
    frame = _read_frame(fd, decode)
    asked = frame[0].get("follow") if frame is not None else None
    return [i for i in asked if type(i) is int] if isinstance(asked, list) else []


def _wait_to_be_killed() -> None:
    """Wait while the grader looks at what is still running and ends the worker; then exit at once."""
    end = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < end:
        try:
            time.sleep(0.1)
        except BaseException:  # noqa: BLE001 -- an alarm the notebook set; nothing is left to report
            pass
    os._exit(0)  # skip atexit handlers and threads the notebook may have left behind


class _FollowUps:
    """The worker's closer look at failed checks: each check of the request's "follow" list, with its calls'
    arguments as its cases, judged here as a guide (see the module docstring)."""

    def __init__(self, request: dict, arrays: dict, unpack_value):
        import dataclasses

        from ...checks.engine import check, code, results, run
        from ...checks.engine.cases import Case, Rngs
        from ...checks.exercises import BY_ID, authored

        # bound before any cell runs
        self._verdict, self._code_of, self._search, self._time = check.check_verdict, code.code_of, run.search, time
        self._failed = results.CheckStatus.FAILED
        self._seconds = float(request.get("follow_seconds", 5.0))
        args = {c["id"]: (tuple(unpack_value(a, arrays) for a in c["args"]),
                          {k: unpack_value(v, arrays) for k, v in c["kwargs"].items()}, c["measure_memory"])
                for c in request["calls"]}
        self._follows = []
        for follow in request.get("follow", []):
            exercise = BY_ID.get(follow["exercise"])
            packaged = next((c for c in exercise.checks if c.name == follow["check"]), None) if exercise else None
            made = [(i, c) for i, c in zip(follow["calls"], follow["cases"]) if i in args]
            if follow.get("check_file") is not None:  # an instructor's own exercise: the inputs its check file answers
                packaged, answered = authored.follow_up_check(follow["check_file"])
                made = [(i, c) for i, c in made if answered(*args[i][:2])]
            if packaged is None or not made:
                self._follows.append(None)
                continue
            cases = [Case(c["label"], *args[i][:2], hidden=c["hidden"], measure_memory=args[i][2],
                          precision=None if c["precision"] is None else tuple(c["precision"]), saturated=c["saturated"])
                     for i, c in made]
            # No mistakes to predict (the costliest part of a verdict, several seconds for a backward pass): which
            # inputs fail does not depend on them, and a smaller input is looked for whenever none is recognised,
            # which is whenever the grader's verdict wants one. Nor are the grader's inputs' scores read again to
            # find which are saturated (most of the rest of the cost): that came with them, from the grader; a
            # smaller input made here is still read.
            mine = dataclasses.replace(packaged, make_cases=lambda rngs, cases=cases: cases, hidden_rngs=Rngs(),
                                       seconds=min(float(follow["seconds"]), self._seconds), mistakes=(), refine=None,
                                       scores=_scores_unless(packaged.scores, cases))
            self._follows.append((mine, [i for i, _ in made]))

    def made(self, asked: list[int], observed: dict) -> list[int]:
        """Indices of the follow-ups the grader `asked` for that this worker can make: those whose every call it
        made, in order."""
        return [index for index, follow in enumerate(self._follows)
                if index in asked and follow is not None and all(i in observed for i in follow[1])]

    def send_all(self, asked: list[int], observed: dict, namespace: dict, send, watch, findings, pack,
                 only_the_worker) -> None:
        """Make every follow-up the grader asked for that this worker can, each a step of its own on the result
        channel."""
        for index in self.made(asked, observed):
            send({"event": "follow", "index": index, "t": _now()})
            out: dict = {}
            found = self.look(index, observed, namespace, pack, out)
            only_the_worker()
            watch.changes()
            send({"event": "followed", "index": index, "found": found, "alerts": findings.end_step()}, out)

    def look(self, index: int, observed: dict, namespace: dict, pack, out: dict) -> dict | None:
        """Follow-up `index`: its calls judged here (`run.search` needs the verdict: which inputs failed, the one shown,
        its mistake), then, if they failed, what `run.search` finds, packed (its arrays put in `out`); None if
        nothing was found or anything went wrong."""
        check, ids = self._follows[index]
        fn, deadline = namespace.get(check.function), self._time.perf_counter() + self._seconds  # the step's own
        try:
            observations = {j: observed[i] for j, i in enumerate(ids)}
            result = self._verdict(check, observations, self._code_of(fn))
            if result.status != self._failed:
                return None
            found = self._search(check, fn, result, observations, deadline=deadline)
            packed = pack(found, ids, out)
        except BaseException:  # noqa: BLE001 -- the notebook's code may raise anything, even KeyboardInterrupt
            out.clear()
            return None
        if sum(a.nbytes for a in out.values()) > MAX_FOLLOW_UP_BYTES:
            out.clear()
            return None
        return packed


def _scores_unless(scores, known):
    """The check's `scores`, except for the inputs of `known`, whose saturation the grader sent (None for them)."""
    if scores is None:
        return None
    sent = {id(case) for case in known}
    return lambda case: None if id(case) in sent else scores(case)


def _close_quietly(fd: int) -> None:
    """Close the result channel in a forked child (already closed in a child of a child)."""
    try:
        os.close(fd)
    except OSError:
        pass


def _run_cell(shell, source: str, seconds: float, calls, outcomes) -> tuple[str, str]:
    """Run one cell: (how it ended, a `status.CellOutcome` given as `outcomes`: ok, error, timeout, memory or exit;
    the error's text)."""
    try:
        with calls.time_limit(seconds):
            result = shell.run_cell(source, store_history=False)
        error = result.error_before_exec or result.error_in_exec
    except BaseException as exc:  # the alarm can land outside the cell's own code
        error = exc
    if error is None:
        return outcomes.OK, ""
    if isinstance(error, calls.TimeLimitExceeded):
        return outcomes.TIMEOUT, f"ran past its {seconds:g} s time limit"
    if isinstance(error, MemoryError):
        return outcomes.MEMORY, "ran out of memory"
    if isinstance(error, SystemExit):
        return outcomes.EXIT, f"called sys.exit({error.code!r})"
    return outcomes.ERROR, calls.format_exception(error)


if __name__ == "__main__":
    main()
