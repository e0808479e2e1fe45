"""Calling a student's function and keeping only plain data of what happened.

The same `observe_call` runs inside a notebook (the in-notebook checks) and
inside the batch grader's sandboxed worker process. Either way the result is
an `Observation` holding plain arrays, so the comparison with the reference
can happen somewhere the student's code cannot reach.

An exercise answered by hand has no function: its notebook fills in a dict,
an answer sheet, and "calling" the sheet with the names of its entries reads
them (`read_answers`), in the same places and under the same limits.
"""

from __future__ import annotations

import signal
import threading
import time
import tracemalloc
import warnings
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum

import numpy as np


class CallOutcome(StrEnum):
    """How one call of the student's function ended (`Observation.status`); its value is the word the worker's
    frames carry."""

    RETURNED = "returned"
    NOT_IMPLEMENTED = "not_implemented"
    """It raised NotImplementedError: the stub is not written yet."""
    RAISED = "raised"
    TIMEOUT = "timeout"
    OUT_OF_MEMORY = "memory"
    EXITED = "exited"
    """It called sys.exit."""
    MISSING = "missing"
    """The notebook defines no function of that name."""
    SKIPPED = "skipped"
    """Not tried: an earlier input of the same check ran out of time or ended the process."""
    CRASHED = "crashed"
    """The process running the notebook died during the call (or before it)."""


MAX_ELEMENTS = 20_000_000
"""Returned arrays larger than this are described, not kept (they are never right)."""

class TimeLimitExceeded(BaseException):
    """Raised inside student code when its time is up.

    A BaseException, so that `except Exception:` in student code does not
    swallow it.
    """


@dataclass(frozen=True)
class Opaque:
    """A returned value that is not numbers, described in words."""

    description: str
    """What it was, e.g. "a dict" or "a string"."""

    def __str__(self) -> str:
        return self.description


@dataclass(frozen=True)
class Observation:
    """What one call of the student's function did, as plain data."""

    status: CallOutcome
    """How the call ended: returned, raised, timed out, ..."""
    value: object = None
    """The return value made plain: an ndarray, a tuple of plain values, None or an Opaque."""
    error: str = ""
    """The exception as "TypeError: message", or what happened to the process."""
    args_after: tuple = ()
    """Each argument as it was after the call (arrays only; None for other arguments)."""
    seconds: float = 0.0
    """Wall-clock time of the call."""
    peak_bytes: int | None = None
    """Peak memory allocated during the call (tracemalloc), when it was measured."""
    overflowed: bool = False
    """NumPy reported a floating-point overflow during the call (an exp that gave inf), silenced but recorded: a
    task that forbids overflow grades it (`Check.after_pass`)."""


def to_plain(value, _depth: int = 0):
    """Turn a return value into arrays, tuples of them, None or an Opaque description.

    Lists of numbers become arrays; a tuple, a list of arrays (`[out, w]`, a
    pair written with brackets) and a list that is not one array become a
    tuple of plain items (the check stacks them back where one array is
    expected). Nothing but numbers and booleans survives.
    """
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return _plain_array(value)
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return np.asarray(value)
    if isinstance(value, list) and _depth == 0 and 0 < len(value) <= 8 and all(isinstance(v, np.ndarray) for v in value):
        value = tuple(value)
    if isinstance(value, tuple) and _depth == 0:
        return tuple(to_plain(v, 1) for v in value[:8]) + ((Opaque(f"{len(value) - 8} more items"),) if len(value) > 8 else ())
    if isinstance(value, (list, tuple)) or hasattr(value, "__array__"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                arr = np.asarray(value)
        except (ValueError, TypeError, RecursionError, OverflowError):  # ragged lists, for example
            arr = None
        if arr is not None and arr.dtype.kind in "biuf":
            return _plain_array(arr)
        if isinstance(value, list) and _depth == 0:
            return tuple(to_plain(v, 1) for v in value[:8])
    return Opaque(_describe_type(value))


def _plain_array(arr: np.ndarray):
    if arr.dtype.kind not in "biuf":
        return Opaque(f"an array of dtype {arr.dtype}")
    if arr.size > MAX_ELEMENTS:
        return Opaque(f"an array of shape {arr.shape} (too large to compare)")
    out = np.array(arr, copy=True)  # a copy the caller owns, whatever the student does next
    return np.ascontiguousarray(out)


def _describe_type(value) -> str:
    name = type(value).__name__
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return f"{article} {name}"


def read_answers(sheet: Mapping, names: tuple) -> tuple:
    """The entries `names` of an answer sheet (a dict a notebook fills in by hand), in that order.

    Numbers written by hand have no dtype to keep: ints, floats, lists and
    numpy arrays of numbers (float32 ones too) all become float64 arrays. An
    entry that is missing, None or still `...` (the notebook's placeholder)
    is None; anything else is kept as it is, for `to_plain` to describe. A
    sheet with no entry answered raises NotImplementedError: not attempted.
    """
    entries = []
    for name in names:
        value = sheet.get(name)
        if value is Ellipsis:
            value = None
        if value is not None:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    value = np.asarray(value, dtype=np.float64)
            except (TypeError, ValueError, OverflowError):  # words, `...` in a list, ragged lists: described
                pass
        entries.append(value)
    if all(value is None for value in entries):
        raise NotImplementedError("no entry of the answer sheet is filled in yet")
    return tuple(entries)


def copy_args(args: tuple) -> tuple:
    """Fresh writeable copies of the array arguments; other arguments as they are."""
    return tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args)


@contextmanager
def time_limit(seconds: float | None):
    """Raise TimeLimitExceeded in the main thread after `seconds` (no-op elsewhere)."""
    usable = (
        seconds is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def on_alarm(signum, frame):
        raise TimeLimitExceeded(f"took longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def observe_call(fn, args: tuple, kwargs: dict | None = None, *, seconds: float | None = None,
                 measure_memory: bool = False, reraise_interrupt: bool = True) -> Observation:
    """Call `fn(*args, **kwargs)` on copies of the arguments and record what happened.

    An answer sheet (a Mapping) is read instead of called: `read_answers(fn, args)`.
    Never raises for anything the function does (except KeyboardInterrupt when
    `reraise_interrupt`, so a student can stop a check that hangs). Numpy
    warnings are silenced during the call: the diagnosis explains overflow
    better than a RuntimeWarning does; an overflow is recorded (`overflowed`).
    """
    kwargs = dict(kwargs or {})
    call_args = copy_args(args)
    peak = None
    start = time.perf_counter()
    tracing_before = tracemalloc.is_tracing()
    # NumPy's overflow is reported as a warning recorded by the warnings module, never through a callback of this
    # package's: code of the course's that ran inside the student's call would be seen by the sandbox's watch as
    # the notebook using the course's code
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore", over="warn"), \
                time_limit(seconds):
            warnings.simplefilter("always")
            if measure_memory:
                if tracing_before:
                    tracemalloc.reset_peak()
                else:
                    tracemalloc.start()
                base = tracemalloc.get_traced_memory()[0]
            try:
                returned = read_answers(fn, call_args) if isinstance(fn, Mapping) else fn(*call_args, **kwargs)
            finally:
                if measure_memory:
                    peak = max(0, tracemalloc.get_traced_memory()[1] - base)
                    if not tracing_before:
                        tracemalloc.stop()
            value = to_plain(returned)
    except NotImplementedError:
        return Observation(CallOutcome.NOT_IMPLEMENTED, seconds=time.perf_counter() - start)
    except TimeLimitExceeded:
        return Observation(CallOutcome.TIMEOUT, error=f"took longer than {seconds:g} s", seconds=time.perf_counter() - start)
    except MemoryError:
        return Observation(CallOutcome.OUT_OF_MEMORY, error="MemoryError: ran out of memory", seconds=time.perf_counter() - start)
    except SystemExit as exc:
        return Observation(CallOutcome.EXITED, error=f"called sys.exit({exc.code!r})", seconds=time.perf_counter() - start)
    except KeyboardInterrupt:
        if reraise_interrupt:
            raise
        return Observation(CallOutcome.RAISED, error="KeyboardInterrupt", seconds=time.perf_counter() - start)
    except BaseException as exc:  # anything the student's code raised is a result, not a grader failure
        return Observation(CallOutcome.RAISED, error=format_exception(exc), seconds=time.perf_counter() - start)
    seconds_taken = time.perf_counter() - start
    after = tuple(to_plain(a) if isinstance(a, np.ndarray) else None for a in call_args)
    return Observation(CallOutcome.RETURNED, value=value, args_after=after, seconds=seconds_taken, peak_bytes=peak,
                       overflowed=any(_is_overflow(w) for w in caught))


def _is_overflow(caught: warnings.WarningMessage) -> bool:
    """Whether a warning recorded during a call is NumPy's floating-point overflow (the only one errstate lets warn)."""
    return issubclass(caught.category, RuntimeWarning) and str(caught.message).startswith("overflow encountered")


AT_LINE = "\n  at: "
"""Separates an error's message from the line of the student's code that raised it."""


def format_exception(exc: BaseException, limit: int = 400) -> str:
    """"TypeError: message", shortened to `limit` characters, then the student's line that raised it.

    The line (after `AT_LINE`) is the last one of the traceback outside NumPy,
    the standard library and this package: the code the student wrote. Hints
    may name an operation only if this line shows it.
    """
    try:
        text = str(exc)
    except Exception:  # a hostile __str__
        text = "(the message could not be shown)"
    text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    line = _own_line(exc)
    return text + AT_LINE + line if line else text


def error_line(error: str) -> str:
    """The student's line that raised `error` (as format_exception wrote it), or ""."""
    return error.split(AT_LINE, 1)[1] if AT_LINE in error else ""


def _own_line(exc: BaseException) -> str:
    import linecache
    import os

    skip = tuple(os.path.dirname(m.__file__) + os.sep for m in (np, os, _package()))
    line = ""
    try:
        tb = exc.__traceback__
        while tb is not None:
            filename = tb.tb_frame.f_code.co_filename
            if not filename.startswith(skip):
                line = linecache.getline(filename, tb.tb_lineno).strip() or line
            tb = tb.tb_next
    except Exception:  # a traceback we cannot read gives no line, never an error
        return ""
    return line[:200]


def _package():
    import attention_course

    return attention_course
