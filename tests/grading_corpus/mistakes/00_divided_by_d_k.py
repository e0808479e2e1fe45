"""Exercise 0 on the bank bot: the dot products divided by d_k = 4, not by sqrt(d_k) = 2."""
CHECK = "worked_example"
MISTAKE = "divided_by_d_k"
STEP = "step 3: the scaled scores"
MARKS = "7/8"

answers = {
    "dot_products": [1.0, 6.0, 0.4, 2.0],
    "scaled_scores": [0.25, 1.5, 0.1, 0.5],
    "exponentials": [1.28, 4.48, 1.11, 1.65],
    "exp_sum": 8.52,
    "weights": [0.15, 0.526, 0.13, 0.194],
    "output": [0.41, 0.78],
    "masked": [4],
    "meaning": 2,
}
