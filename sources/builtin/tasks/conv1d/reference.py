import numpy as np


def reference(inputs, sizes):
    x = inputs["x"].astype(np.float64)
    w = inputs["weights"].astype(np.float64)
    n = x.size
    padded = np.concatenate([np.zeros(3), x, np.zeros(3)])
    y = np.zeros(n)
    for k in range(7):
        y += w[k] * padded[k:k + n]
    return {"y": y.astype(np.float32)}
