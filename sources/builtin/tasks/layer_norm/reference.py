import numpy as np


def reference(inputs, sizes):
    x = inputs["x"].astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    y = (x - mean) / np.sqrt(var + 1e-5) * inputs["gamma"].astype(np.float64) + inputs["beta"]
    return {"y": y.astype(np.float32)}
