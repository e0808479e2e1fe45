"""The files an instructor hands on: the gradebook and its report, the LMS files, the feedback, the summary."""
