"""Exercise 0 on the bank bot: the dot products listed from the last token to the first."""
CHECK = "worked_example"
MISTAKE = "dot_products_reversed"
STEP = "step 2: the dot products q·k"
MARKS = "7/8"

answers = {
    "dot_products": [2.0, 0.4, 6.0, 1.0],
    "scaled_scores": [1.0, 0.2, 3.0, 0.5],
    "exponentials": [2.72, 1.22, 20.09, 1.65],
    "exp_sum": 25.68,
    "weights": [0.106, 0.048, 0.782, 0.064],
    "output": [0.56, 0.5],
    "masked": [4],
    "meaning": 2,
}
