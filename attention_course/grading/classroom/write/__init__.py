"""The last stage: the files an instructor hands on, rendered from a gradebook report (`score.build_report`).

`gradebook` (the CSV and its JSON report, read back and merged), `lms`
(Canvas's and Moodle's import files), `feedback` (a page per student),
`summary` (the class's page), and `exports` (all of them into one folder).
"""
