import numpy as np


def reference(inputs, sizes):
    d = np.dot(inputs["a"].astype(np.float64), inputs["b"].astype(np.float64))
    return {"dot": np.array([d], dtype=np.float32)}
