"""Exercise 0 on the bank bot: the weights the softmax of the unscaled scores, the scaled scores right."""
CHECK = "worked_example"
MISTAKE = "softmax_of_unscaled_scores"
STEP = "step 4: the weights"
MARKS = "7/8"

answers = {
    "dot_products": [1.0, 6.0, 0.4, 2.0],
    "scaled_scores": [0.5, 3.0, 0.2, 1.0],
    "exponentials": [1.65, 20.09, 1.22, 2.72],
    "exp_sum": 25.67,
    "weights": [0.007, 0.972, 0.004, 0.018],
    "output": [0.03, 0.99],
    "masked": [4],
    "meaning": 2,
}
