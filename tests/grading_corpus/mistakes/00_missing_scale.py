"""Exercise 0 on the bank bot: the dot products not scaled at all."""
CHECK = "worked_example"
MISTAKE = "missing_scale"
STEP = "step 3: the scaled scores"
MARKS = "7/8"

answers = {
    "dot_products": [1.0, 6.0, 0.4, 2.0],
    "scaled_scores": [1.0, 6.0, 0.4, 2.0],
    "exponentials": [2.72, 403.43, 1.49, 7.39],
    "exp_sum": 415.03,
    "weights": [0.007, 0.972, 0.004, 0.018],
    "output": [0.03, 0.99],
    "masked": [4],
    "meaning": 2,
}
