import numpy as np


def reference(inputs, sizes):
    x = inputs["x"].astype(np.float64)
    return {"norm": np.array([np.sqrt(np.sum(x * x))], dtype=np.float32)}
