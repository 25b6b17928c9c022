import numpy as np


def reference(inputs, sizes):
    g = inputs["grid"].astype(np.float64)
    for _ in range(8):
        n = g.copy()
        n[1:-1, 1:-1] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
        g = n
    return {"result": g.astype(np.float32)}
