"""An instructor's own exercises: one source notebook each, released, checked and graded by the course's engine.

- `source`: a source notebook read (the task, the solution between
  `# BEGIN SOLUTION` / `# END SOLUTION`, the check cell tagged `check`);
- `build`: its declaration made into the engine's `Check`, and the exercise
  refused (`SourceError`, a ValueError naming notebook, cell and problem)
  when it cannot work: a reference that fails on its own inputs, a hidden
  input equal to a visible one, a stub that would pass, a mistake that
  equals the reference, an input that cannot be printed or rebuilt;
- `publish`: `release_folder` (the students' notebooks and their check files,
  `attention-course release SOURCE`) and `load_folder` (the grader's
  exercises, with their hidden inputs: an assignment file's `authored` key).

The student's side, which needs no solution, is `checks.exercises.authored`.
"""

from .publish import Authored, load_folder, read, release_folder
from .source import SourceError

__all__ = ["Authored", "SourceError", "load_folder", "read", "release_folder"]
