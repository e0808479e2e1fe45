"""Exercise 0 on the bank bot: the output's two coordinates swapped (each has its two decimals)."""
CHECK = "worked_example"
MISTAKE = None
MESSAGE = "coordinate 1 and 2 of the output"
STEP = "step 5: the output"
MARKS = "7/8"
ABSENT = ("rounded to one decimal fewer",)

answers = {
    "dot_products": [1.0, 6.0, 0.4, 2.0],
    "scaled_scores": [0.5, 3.0, 0.2, 1.0],
    "exponentials": [1.65, 20.09, 1.22, 2.72],
    "exp_sum": 25.67,
    "weights": [0.064, 0.782, 0.048, 0.106],
    "output": [0.91, 0.19],
    "masked": [4],
    "meaning": 2,
}
