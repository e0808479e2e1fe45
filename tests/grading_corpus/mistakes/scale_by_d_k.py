"""scale_scores that divides by d_k instead of sqrt(d_k)."""
CHECK = "scale_scores"
MISTAKE = "divided_by_d_k"
MARKS = "0/11"


def scale_scores(scores, d_k):
    return scores / d_k
