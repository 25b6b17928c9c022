import numpy as np


def reference(inputs, sizes):
    x = inputs["x"].astype(np.float64)
    return {"y": np.where(x > 0, x, np.expm1(x)).astype(np.float32)}
