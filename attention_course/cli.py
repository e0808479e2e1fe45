"""The `attention-course` command line: one subcommand per task.

Each feature module registers its own subcommands (`register(subparsers)`)
and imports its heavy dependencies only when its command runs. A command
line builds the parsers of its own command's module alone (`COMMANDS`): the
student's `attention-course check` never imports the instructor's classroom,
nor the pretrained model's downloader; `attention-course --help` builds them
all, to list every command.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__

COMMANDS: dict[str, str] = {
    "fetch-model": "attention_course.pretrained.cli",
    "check": "attention_course.grading.cli",
    "release": "attention_course.grading.cli",
    "exercises": "attention_course.grading.cli",
    "answers": "attention_course.grading.cli",
    "grade": "attention_course.grading.classroom.cli",
    "gradebook": "attention_course.grading.classroom.cli",
    "assignment": "attention_course.grading.classroom.cli",
    "book": "attention_course.book_cli",
}
"""Each subcommand -> the module whose `register(subparsers)` adds it (with the module's other commands), in the
order `attention-course --help` lists them."""


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every command's, or, when `argv` starts with a command, its module's alone.

    A command is the first word of a command line (the top-level options, `--help` and `--version`, end it);
    anything else (no command, an option, a word that names none) gets every parser, for the full help or the list
    of commands in argparse's error.
    """
    parser = argparse.ArgumentParser(
        prog="attention-course",
        description="Tools of the attention course: check and grade exercises, fetch the pretrained model.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    named = COMMANDS.get(argv[0]) if argv else None
    for module in [named] if named else dict.fromkeys(COMMANDS.values()):
        importlib.import_module(module).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(argv).parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
