"""The `attention-course` command line (attention_course/cli.py): each command's parsers built by its own module.

`COMMANDS` names the module of each command, so that a command line builds
its own command's parsers alone: a student's `check` never imports the
instructor's classroom. These tests hold the table to what each module
registers, and the full help to every command.
"""

import argparse
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from attention_course.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]


def registered_by(module: str) -> list[str]:
    """The commands `module.register` adds, in their order."""
    subparsers = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(module).register(subparsers)
    return list(subparsers.choices)


def test_the_table_names_each_command_s_module_in_the_order_of_the_help():
    for module in dict.fromkeys(COMMANDS.values()):
        assert registered_by(module) == [command for command, m in COMMANDS.items() if m == module], module


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    listed = re.findall(r"^    (\S+)", capsys.readouterr().out, flags=re.MULTILINE)  # each command's line
    assert listed == list(COMMANDS)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert f"usage: attention-course {command}" in capsys.readouterr().out


def test_a_word_that_names_no_command_is_told_every_command(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["chek", "notebook.ipynb"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'chek'" in err and all(f"'{command}'" in err for command in COMMANDS)


@pytest.mark.parametrize("argv, built", [
    (["check", "a.ipynb"], ["attention_course.grading.cli"]),
    (["grade", "a.ipynb"], ["attention_course.grading.classroom.cli"]),
    (["--help"], sorted(set(COMMANDS.values()))),
])
def test_a_command_line_imports_the_parsers_of_its_command_s_module_alone(argv, built):
    code = ("import json, sys\n"
            "from attention_course.cli import COMMANDS, build_parser\n"
            f"build_parser({argv!r})\n"
            "print(json.dumps(sorted(m for m in set(COMMANDS.values()) if m in sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(done.stdout) == built
