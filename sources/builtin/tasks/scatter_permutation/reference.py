import numpy as np


def reference(inputs, sizes):
    out = np.empty_like(inputs["src"])
    out[inputs["perm"].astype(np.int64)] = inputs["src"]
    return {"out": out.astype(np.float32)}
