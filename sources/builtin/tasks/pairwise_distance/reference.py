import numpy as np


def reference(inputs, sizes):
    x = inputs["X"].astype(np.float64)
    y = inputs["Y"].astype(np.float64)
    d = np.sqrt(((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=2))
    return {"dist": d.astype(np.float32)}
