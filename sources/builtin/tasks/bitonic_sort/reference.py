import numpy as np


def reference(inputs, sizes):
    return {"sorted": np.sort(inputs["keys"]).astype(np.float32)}
