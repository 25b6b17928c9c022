import numpy as np


def reference(inputs, sizes):
    return {"y": np.cumsum(inputs["x"].astype(np.int64)).astype(np.int32)}
