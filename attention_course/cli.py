"""The `attention-course` command line: one subcommand per task.

Each feature module registers its own subcommands (`register(subparsers)`)
and imports its heavy dependencies only when its command runs, so
`attention-course --help` stays fast.
"""

from __future__ import annotations

import argparse
import sys

from . import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="attention-course",
        description="Tools of the attention course: check and grade exercises, fetch the pretrained model.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in _command_modules():
        module.register(subparsers)
    return parser


# The modules that contribute subcommands; each defines `register(subparsers)`.
COMMAND_MODULES: tuple[str, ...] = (
    "attention_course.pretrained.cli",
    "attention_course.grading.cli",
    "attention_course.book_cli",
)


def _command_modules():
    import importlib

    return [importlib.import_module(name) for name in COMMAND_MODULES]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
