"""The instructor's room: grading a class's untrusted notebooks, from the download to the files handed on.

    intake      roster, folders, Canvas and Moodle zips -> one `Submission` per student
    sandbox     run each notebook in a bubblewrap sandbox -> a `NotebookRun`
    batch       judge each run with the checks -> a `NotebookGrade`; many notebooks at once
    cluster     the same on a Dask cluster
    write       the gradebook (CSV, JSON), the LMS files, the feedback files, the class summary

`assignment` reads the assignment file; `cli` holds the instructor's commands.
"""
