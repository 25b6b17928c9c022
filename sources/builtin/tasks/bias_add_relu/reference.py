import numpy as np


def reference(inputs, sizes):
    y = np.maximum(inputs["x"] + inputs["bias"][None, :], np.float32(0))
    return {"y": y.astype(np.float32)}
