"""Exercise 0 on the bank bot: the sum of the scaled scores where the sum of the exponentials belongs."""
CHECK = "worked_example"
MISTAKE = "sum_of_scores"
STEP = "step 4: the sum of the exponentials"
MARKS = "7/8"

answers = {
    "dot_products": [1.0, 6.0, 0.4, 2.0],
    "scaled_scores": [0.5, 3.0, 0.2, 1.0],
    "exponentials": [1.65, 20.09, 1.22, 2.72],
    "exp_sum": 4.7,
    "weights": [0.351, 4.274, 0.26, 0.579],
    "output": [1.06, 4.98],
    "masked": [4],
    "meaning": 2,
}
