import numpy as np


def reference(inputs, sizes):
    x = inputs["x"].astype(np.float64)
    return {"y": (1.0 / (1.0 + np.exp(-x))).astype(np.float32)}
