"""Exercise 0 on the bank bot: the largest weight read as the most important word of the sentence."""
CHECK = "worked_example"
MISTAKE = "meaning_most_important_word"
STEP = "question 7: what the largest weight means"
MARKS = "7/8"

answers = {
    "dot_products": [1.0, 6.0, 0.4, 2.0],
    "scaled_scores": [0.5, 3.0, 0.2, 1.0],
    "exponentials": [1.65, 20.09, 1.22, 2.72],
    "exp_sum": 25.67,
    "weights": [0.064, 0.782, 0.048, 0.106],
    "output": [0.19, 0.91],
    "masked": [4],
    "meaning": 4,
}
