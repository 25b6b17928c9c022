import numpy as np


def reference(inputs, sizes):
    return {"index": np.array([int(np.argmax(inputs["x"]))], dtype=np.int32)}
