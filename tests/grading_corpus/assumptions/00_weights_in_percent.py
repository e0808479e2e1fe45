"""Exercise 0 on the bank bot: the weights as percentages, an assumption the check must name."""
CHECK = "worked_example"
MISTAKE = "weights_in_percent"
MESSAGE = ("step 4: the weights", "percentages. Give each as a fraction of 1")
MARKS = "7/8"

answers = {
    "dot_products": [1.0, 6.0, 0.4, 2.0],
    "scaled_scores": [0.5, 3.0, 0.2, 1.0],
    "exponentials": [1.65, 20.09, 1.22, 2.72],
    "exp_sum": 25.67,
    "weights": [6.422, 78.233, 4.757, 10.588],
    "output": [19.39, 91.2],
    "masked": [4],
    "meaning": 2,
}
