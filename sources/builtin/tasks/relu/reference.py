import numpy as np


def reference(inputs, sizes):
    x = inputs["x"]
    return {"y": np.maximum(x, np.float32(0)).astype(np.float32)}
