import numpy as np


def reference(inputs, sizes):
    x = inputs["x"].astype(np.float64)
    inv = 1.0 / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6)
    return {"y": (x * inv * inputs["weight"].astype(np.float64)).astype(np.float32)}
