"""attention that divides the scores by d_k."""
CHECK = "attention"
MISTAKE = "divided_by_d_k"
MARKS = "4/17"

from attention_course import softmax


def attention(Q, K, V):
    weights = softmax(Q @ K.T / Q.shape[-1])
    return weights @ V, weights
