import numpy as np


def reference(inputs, sizes):
    rgb = inputs["rgb"].astype(np.uint32)
    y = (77 * rgb[..., 0] + 150 * rgb[..., 1] + 29 * rgb[..., 2] + 128) >> 8
    return {"gray": y.astype(np.uint8)}
