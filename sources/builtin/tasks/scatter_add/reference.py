import numpy as np


def reference(inputs, sizes):
    out = np.zeros(sizes["BINS"], dtype=np.float64)
    np.add.at(out, inputs["idx"].astype(np.int64), inputs["vals"].astype(np.float64))
    return {"out": out.astype(np.float32)}
