import numpy as np


def reference(inputs, sizes):
    a = inputs["a"].astype(np.int64)
    b = inputs["b"].astype(np.int64)
    # Wrap to 32 bits explicitly, as two's complement hardware does.
    c = (a + b + 2**31) % 2**32 - 2**31
    return {"c": c.astype(np.int32)}
