"""The grading corpus is data, not tests: wrong and hostile student submissions.

Nothing here is collected by pytest or nbval; tests/test_grading_*.py load
the files on purpose.
"""

collect_ignore_glob = ["*", "**/*"]
