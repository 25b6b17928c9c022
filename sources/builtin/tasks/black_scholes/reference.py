import math

import numpy as np


def _ncdf(x):
    erfc = np.vectorize(math.erfc)
    return 0.5 * erfc(-x / math.sqrt(2.0))


def reference(inputs, sizes):
    s = inputs["spot"].astype(np.float64)
    k = inputs["strike"].astype(np.float64)
    t = inputs["years"].astype(np.float64)
    r, sig = 0.02, 0.30
    d1 = (np.log(s / k) + (r + 0.5 * sig * sig) * t) / (sig * np.sqrt(t))
    d2 = d1 - sig * np.sqrt(t)
    disc = k * np.exp(-r * t)
    call = s * _ncdf(d1) - disc * _ncdf(d2)
    put = disc * _ncdf(-d2) - s * _ncdf(-d1)
    return {"call": call.astype(np.float32), "put": put.astype(np.float32)}
