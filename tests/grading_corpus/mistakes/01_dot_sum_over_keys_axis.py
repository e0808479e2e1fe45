"""dot_scores summing the products over the keys (axis 0) instead of over d_k."""
CHECK = "dot_scores"
MISTAKE = 'summed_over_keys'
MARKS = "0/12"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def dot_scores(query, keys):
    return (keys * query).sum(axis=0)
