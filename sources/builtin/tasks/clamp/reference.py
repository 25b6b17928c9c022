import numpy as np


def reference(inputs, sizes):
    return {"y": np.clip(inputs["x"], np.float32(-1.5), np.float32(2.0)).astype(np.float32)}
