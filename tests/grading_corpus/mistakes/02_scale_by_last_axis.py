"""scale_scores dividing by the square root of the scores' last axis (the number of keys), not of d_k."""
CHECK = "scale_scores"
MISTAKE = 'scaled_by_number_of_keys'
MARKS = "1/11"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def scale_scores(scores, d_k):
    return scores / np.sqrt(scores.shape[-1])
