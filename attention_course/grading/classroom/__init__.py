"""The classroom: a class's untrusted notebooks, from the LMS download to the files handed back.

Data flows one way, each stage in its own module, none importing a later one:

    intake      roster, folders, Canvas and Moodle zips -> one `Submission` per student
    batch       every notebook graded (`run.notebook.grade_notebook`) by a `Runner`:
    cluster       `batch.Threads` here, or `cluster.Cluster` on a Dask cluster, as the command line chooses
    score       points, the best attempt, the late rule -> a gradebook report (one row per student)
    write       the gradebook (CSV, JSON), the LMS files, the feedback files, the class summary

Beside them: `people` (how a name finds a student), `roster`, `adjustments`
(the instructor's adjustments file), `assignment` (the assignment file every
stage is given) and `cli` (the instructor's commands). Running and judging one notebook is the `run` room's.
"""
