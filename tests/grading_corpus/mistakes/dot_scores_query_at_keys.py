"""dot_scores as query @ keys, without the transpose: runs only when n_k == d_k, pairing the query with columns."""
CHECK = "dot_scores"
MISTAKE = "keys_transposed"
MARKS = "0/12"

import numpy as np


def dot_scores(query, keys):
    return query @ keys  # (d_k,) x (n_k, d_k): runs only when n_k == d_k
