"""dot_scores that multiplies entry by entry and never adds the products up."""
CHECK = "dot_scores"
MISTAKE = "no_sum"
MARKS = "0/12"

import numpy as np


def dot_scores(query, keys):
    return query * keys
