"""Exercise 0 on the bank bot: each dot product made by adding the query's and the key's entries."""
CHECK = "worked_example"
MISTAKE = "added_not_multiplied"
STEP = "step 2: the dot products q·k"
MARKS = "7/8"

answers = {
    "dot_products": [5.0, 9.0, 5.4, 7.0],
    "scaled_scores": [2.5, 4.5, 2.7, 3.5],
    "exponentials": [12.18, 90.02, 14.88, 33.12],
    "exp_sum": 150.2,
    "weights": [0.081, 0.599, 0.099, 0.221],
    "output": [0.35, 0.87],
    "masked": [4],
    "meaning": 2,
}
