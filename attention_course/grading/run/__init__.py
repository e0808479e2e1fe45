"""Running a notebook and judging it: the room both the student's `check` and the instructor's `grade` use.

    sandbox     run each notebook in a bubblewrap sandbox -> a `NotebookRun` (what it returned and tried)
    plan        what grades one notebook, decided once -> a `Plan` (its exercise, checks, calls, follow-ups), under
                a `Setting` (an assignment's exercises, time limits and hidden inputs, made by the classroom)
    judge       judge a run with the checks -> a `NotebookGrade` (verdicts, statuses, incidents)
    notebook    one notebook planned, run and judged (`grade_notebook`); several (`grade_notebooks`)
    status      one `Status` for a notebook's outcome, one `Stop` for why a run was stopped, how a cell ended
                (`CellOutcome`), what a notebook tried (`Finding`), `STATUS_OF` (what each outcome of the sandbox
                and the checks gives the status), and `Incident`
    table       what `attention-course check` prints
    options     the limits of each notebook, read from the command line

It imports nothing of the classroom (`grading.classroom`): a student's
check runs without the roster, the intake of downloads or the gradebook.
"""
