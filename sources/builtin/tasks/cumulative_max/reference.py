import numpy as np


def reference(inputs, sizes):
    return {"y": np.maximum.accumulate(inputs["x"]).astype(np.float32)}
