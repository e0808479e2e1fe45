"""Exercise 0 on the bank bot, right: every number cut off after its decimals, not rounded, each step from the last."""
CHECK = "worked_example"

answers = {
    "dot_products": [1, 6, 0.4, 2],
    "scaled_scores": [0.5, 3, 0.2, 1],
    "exponentials": [1.64, 20.08, 1.22, 2.71],
    "exp_sum": 25.65,
    "weights": [0.063, 0.782, 0.047, 0.105],
    "output": [0.19, 0.91],
    "masked": [4],
    "meaning": 2,
}
