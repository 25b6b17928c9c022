import numpy as np


def reference(inputs, sizes):
    return {"hist": np.bincount(inputs["data"], minlength=256).astype(np.uint32)}
