import numpy as np


def reference(inputs, sizes):
    return {"y": np.cumsum(inputs["x"].astype(np.float64), axis=1).astype(np.float32)}
