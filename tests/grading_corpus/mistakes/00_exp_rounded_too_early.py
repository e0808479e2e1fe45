"""Exercise 0 on the bank bot: the exponentials rounded to 1 decimal (20.1 for 20.09)."""
CHECK = "worked_example"
MISTAKE = "exp_rounded_too_early"
STEP = "step 4: the exponentials"
MARKS = "7/8"

answers = {
    "dot_products": [1.0, 6.0, 0.4, 2.0],
    "scaled_scores": [0.5, 3.0, 0.2, 1.0],
    "exponentials": [1.6, 20.1, 1.2, 2.7],
    "exp_sum": 25.6,
    "weights": [0.062, 0.785, 0.047, 0.105],
    "output": [0.19, 0.91],
    "masked": [4],
    "meaning": 2,
}
