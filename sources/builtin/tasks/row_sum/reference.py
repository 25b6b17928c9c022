import numpy as np


def reference(inputs, sizes):
    return {"sums": inputs["matrix"].astype(np.float64).sum(axis=1).astype(np.float32)}
