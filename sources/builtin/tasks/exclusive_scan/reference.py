import numpy as np


def reference(inputs, sizes):
    x = inputs["x"].astype(np.int64)
    y = np.concatenate([[0], np.cumsum(x)[:-1]])
    return {"y": y.astype(np.int32)}
