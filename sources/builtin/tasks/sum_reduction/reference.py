import numpy as np


def reference(inputs, sizes):
    return {"total": np.array([inputs["x"].astype(np.float64).sum()], dtype=np.float32)}
