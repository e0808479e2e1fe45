"""Exercise 0 on the bank bot: the output mixing the values with the scaled scores."""
CHECK = "worked_example"
MISTAKE = "mixed_with_scores"
STEP = "step 5: the output"
MARKS = "7/8"

answers = {
    "dot_products": [1.0, 6.0, 0.4, 2.0],
    "scaled_scores": [0.5, 3.0, 0.2, 1.0],
    "exponentials": [1.65, 20.09, 1.22, 2.72],
    "exp_sum": 25.67,
    "weights": [0.064, 0.782, 0.048, 0.106],
    "output": [1.6, 4.1],
    "masked": [4],
    "meaning": 2,
}
