import numpy as np


def reference(inputs, sizes):
    d = inputs["pred"].astype(np.float64) - inputs["target"].astype(np.float64)
    return {"loss": np.array([np.mean(d * d)], dtype=np.float32)}
