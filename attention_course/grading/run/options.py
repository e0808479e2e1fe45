"""The options every command that runs notebooks shares: the limits of each notebook, read from the command line.

`add_limits` adds them to a parser (the student's `check` and the instructor's
`grade`), `read_limits` turns what was given into a `Limits`, and `fail`
prints a command's error the one way every command does.
"""

from __future__ import annotations

import argparse
import re
import sys


def add_limits(parser: argparse.ArgumentParser) -> None:
    from .sandbox.runner import Limits

    d = Limits()
    group = parser.add_argument_group("limits for each notebook")
    group.add_argument("--cell-timeout", type=seconds, default=d.cell_seconds, metavar="SECONDS",
                       help=f"time limit per code cell (default: {d.cell_seconds:g})")
    group.add_argument("--check-timeout", type=seconds, default=d.call_seconds, metavar="SECONDS",
                       help=f"time limit per call of a student's function (default: {d.call_seconds:g})")
    group.add_argument("--notebook-timeout", type=seconds, default=d.notebook_seconds, metavar="SECONDS",
                       help=f"time budget for a whole notebook (default: {d.notebook_seconds:g})")
    group.add_argument("--memory-limit", type=byte_count, default=d.memory_bytes, metavar="SIZE",
                       help="memory (address space) per notebook process, e.g. 2G or 1500M (default: 2G)")
    group.add_argument("--follow-up-timeout", type=seconds_or_zero, default=d.follow_seconds, metavar="SECONDS",
                       help="time per failed check to call the function again, with the course's helpers in place "
                            "of the student's and on smaller inputs, as a notebook's check does, so that the feedback "
                            f"can say which helper is at fault or show the smallest failing input (default: "
                            f"{d.follow_seconds:g}; 0: no follow-up, a little faster)")


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text}")
    return value


def seconds_or_zero(text: str) -> float:
    """A number of seconds, or 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds (0 for none), got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, got {text}")
    return value


def byte_count(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]?)B?\s*", text, flags=re.IGNORECASE)
    if not match:
        raise argparse.ArgumentTypeError(f"expected a size such as 2G or 1500M, got {text!r}")
    factor = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[match.group(2).upper()]
    value = int(float(match.group(1)) * factor)
    if value < 256 << 20:
        raise argparse.ArgumentTypeError("the memory limit must be at least 256M (Python and numpy need about that)")
    return value


def read_limits(args):
    from .sandbox.runner import Limits

    return Limits(cell_seconds=args.cell_timeout, call_seconds=args.check_timeout,
                  notebook_seconds=args.notebook_timeout, memory_bytes=args.memory_limit,
                  follow_seconds=args.follow_up_timeout)


def fail(command: str, err) -> int:
    print(f"attention-course {command}: {err}", file=sys.stderr)
    return 2
