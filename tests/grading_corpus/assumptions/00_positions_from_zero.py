"""Exercise 0 on the bank bot: the causal mask's positions counted from 0, an assumption the check must name."""
CHECK = "worked_example"
MISTAKE = "positions_from_zero"
MESSAGE = ("question 6: the causal mask", "counted from 0")
MARKS = "7/8"

answers = {
    "dot_products": [1.0, 6.0, 0.4, 2.0],
    "scaled_scores": [0.5, 3.0, 0.2, 1.0],
    "exponentials": [1.65, 20.09, 1.22, 2.72],
    "exp_sum": 25.67,
    "weights": [0.064, 0.782, 0.048, 0.106],
    "output": [0.19, 0.91],
    "masked": [3],
    "meaning": 2,
}
