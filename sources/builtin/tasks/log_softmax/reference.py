import numpy as np


def reference(inputs, sizes):
    x = inputs["x"].astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    lz = m + np.log(np.exp(x - m).sum(axis=1, keepdims=True))
    return {"y": (x - lz).astype(np.float32)}
