"""What only the tests use, kept out of the students' wheel: `audit` (every claim a check's feedback makes,
verified on the submission), `claims` (the rows and numbers a sentence states, read back) and `gradebook`
(`write_gradebook`: a list of grades written in one call)."""
