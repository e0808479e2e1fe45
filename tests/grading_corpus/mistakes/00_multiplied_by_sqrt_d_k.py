"""Exercise 0 on the bank bot: the dot products multiplied by sqrt(d_k) instead of divided."""
CHECK = "worked_example"
MISTAKE = "multiplied_by_sqrt_d_k"
STEP = "step 3: the scaled scores"
MARKS = "7/8"

answers = {
    "dot_products": [1.0, 6.0, 0.4, 2.0],
    "scaled_scores": [2.0, 12.0, 0.8, 4.0],
    "exponentials": [7.39, 162754.79, 2.23, 54.6],
    "exp_sum": 162819.01,
    "weights": [0.0, 1.0, 0.0, 0.0],
    "output": [0.0, 1.0],
    "masked": [4],
    "meaning": 2,
}
