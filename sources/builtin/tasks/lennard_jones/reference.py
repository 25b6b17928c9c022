import numpy as np


def reference(inputs, sizes):
    p = inputs["pos"].astype(np.float64)
    d = p[None, :, :] - p[:, None, :]
    r2 = (d * d).sum(axis=2)
    np.fill_diagonal(r2, np.inf)
    rc2 = 2.5**2
    shift = 4.0 * (rc2**-6 - rc2**-3)
    with np.errstate(divide="ignore", over="ignore"):
        e = np.where(r2 < rc2, 4.0 * (r2**-6 - r2**-3) - shift, 0.0)
    return {"energy": (0.5 * e.sum(axis=1)).astype(np.float32)}
