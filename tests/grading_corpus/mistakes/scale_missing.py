"""scale_scores that forgets to scale."""
CHECK = "scale_scores"
MISTAKE = "missing_scale"
MARKS = "0/11"


def scale_scores(scores, d_k):
    return scores.copy()
