"""The instructor's room: grading a class's untrusted notebooks, from the download to the files handed on.

Data flows one way, each stage in its own module, none importing a later one:

    intake      roster, folders, Canvas and Moodle zips -> one `Submission` per student
    sandbox     run each notebook in a bubblewrap sandbox -> a `NotebookRun` (what it returned and tried)
    judge       judge a run with the checks -> a `NotebookGrade` (verdicts, statuses, incidents)
    batch       one notebook read, run and judged (`grade_notebook`); many at once by a `Runner`:
    cluster       `batch.Threads` here, or `cluster.Cluster` on a Dask cluster, as the command line chooses
    score       points, the best attempt, the late rule -> a gradebook report (one row per student)
    write       the gradebook (CSV, JSON), the LMS files, the feedback files, the class summary

Beside them: `status` (one `Status` for a notebook's and a student's outcome,
one `Stop` for why a run was stopped, and `Incident`, a sentence with its
kind), `assignment` (the assignment file every stage is given) and `cli`
(the instructor's commands).
"""
