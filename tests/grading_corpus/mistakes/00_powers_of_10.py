"""Exercise 0 on the bank bot: 10 to the power of each scaled score, not e."""
CHECK = "worked_example"
MISTAKE = "powers_of_10"
STEP = "step 4: the exponentials"
MARKS = "7/8"

answers = {
    "dot_products": [1.0, 6.0, 0.4, 2.0],
    "scaled_scores": [0.5, 3.0, 0.2, 1.0],
    "exponentials": [3.16, 1000.0, 1.58, 10.0],
    "exp_sum": 1014.74,
    "weights": [0.003, 0.985, 0.002, 0.01],
    "output": [0.01, 1.0],
    "masked": [4],
    "meaning": 2,
}
