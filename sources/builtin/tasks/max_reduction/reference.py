import numpy as np


def reference(inputs, sizes):
    return {"max_value": np.array([inputs["x"].max()], dtype=np.float32)}
