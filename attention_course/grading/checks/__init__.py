"""The student's room: what a notebook's check cell and `attention-course check` judge with.

- `engine`: the check engine, the same in a notebook and in the grader
  (`results`, `calls`, `cases`, `check`, `mistakes`, `differences`, `shrink`). It imports no exercise: what a check needs of the others (the
  course's versions of the helpers a failure is re-run with) comes in with
  the check.
- `exercises`: the registry (`EXERCISES`) and one module of checks per
  exercise group.

Nothing here imports the classroom (`grading.classroom`) or the instructor's commands: a student's check
loads no sandbox, batch, intake or gradebook code.
"""
