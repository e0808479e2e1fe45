"""Exercise 0 on the bank bot, right: numpy arrays (float32 too), a sum in a list, a tuple of positions."""
CHECK = "worked_example"

import numpy as np

answers = {
    "dot_products": np.array([1, 6, 0.4, 2], dtype=np.float32),
    "scaled_scores": np.array([0.5, 3, 0.2, 1]),
    "exponentials": np.exp(np.array([0.5, 3.0, 0.2, 1.0])),
    "exp_sum": [25.674],
    "weights": np.float32([0.0642, 0.7823, 0.0476, 0.1059]),
    "output": (0.194, 0.912),
    "masked": (4,),
    "meaning": np.int64(2),
}
