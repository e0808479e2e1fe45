"""Exercise 0 on the bank bot: the sum leaves out the first exponential; the weights follow from it."""
CHECK = "worked_example"
MISTAKE = None
MESSAGE = "the sum is more than 0.01 away"
STEP = "step 4: the sum of the exponentials"
MARKS = "7/8"

answers = {
    "dot_products": [1.0, 6.0, 0.4, 2.0],
    "scaled_scores": [0.5, 3.0, 0.2, 1.0],
    "exponentials": [1.65, 20.09, 1.22, 2.72],
    "exp_sum": 24.03,
    "weights": [0.069, 0.836, 0.051, 0.113],
    "output": [0.19, 0.91],
    "masked": [4],
    "meaning": 2,
}
