"""The README's examples run and print what the README says they print."""

import doctest
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    examples = "\n".join(block for block in blocks if ">>>" in block)
    test = doctest.DocTestParser().get_doctest(examples, {}, "README.md", str(README), 0)
    assert test.examples, "the README should show at least one runnable example"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
