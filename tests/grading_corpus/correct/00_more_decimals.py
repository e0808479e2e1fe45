"""Exercise 0 on the bank bot, every number with more decimals than asked."""
CHECK = "worked_example"

answers = {
    "dot_products": [1.0, 6.0, 0.4, 2.0],
    "scaled_scores": [0.5, 3.0, 0.2, 1.0],
    "exponentials": [1.6487, 20.0855, 1.2214, 2.7183],
    "exp_sum": 25.6739,
    "weights": [0.0642, 0.7823, 0.0476, 0.1059],
    "output": [0.19, 0.91],
    "masked": [4],
    "meaning": 2,
}
