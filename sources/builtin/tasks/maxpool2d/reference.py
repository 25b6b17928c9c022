import numpy as np


def reference(inputs, sizes):
    x = inputs["input"]
    oh, ow = sizes["OH"], sizes["OW"]
    v = x[:, : 2 * oh, : 2 * ow].reshape(x.shape[0], oh, 2, ow, 2)
    return {"output": v.max(axis=(2, 4)).astype(np.float32)}
