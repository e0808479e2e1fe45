"""Exercise 0 on the bank bot: the weights in the keys' reversed order."""
CHECK = "worked_example"
MISTAKE = "weights_reversed"
STEP = "step 4: the weights"
MARKS = "7/8"

answers = {
    "dot_products": [1.0, 6.0, 0.4, 2.0],
    "scaled_scores": [0.5, 3.0, 0.2, 1.0],
    "exponentials": [1.65, 20.09, 1.22, 2.72],
    "exp_sum": 25.67,
    "weights": [0.106, 0.048, 0.782, 0.064],
    "output": [0.56, 0.5],
    "masked": [4],
    "meaning": 2,
}
