import numpy as np


def reference(inputs, sizes):
    p = inputs["param"].astype(np.float64)
    g = inputs["grad"].astype(np.float64)
    m = 0.9 * inputs["m"].astype(np.float64) + 0.1 * g
    v = 0.999 * inputs["v"].astype(np.float64) + 0.001 * g * g
    mh = m / (1.0 - 0.9**10)
    vh = v / (1.0 - 0.999**10)
    p = p - 1e-3 * mh / (np.sqrt(vh) + 1e-8)
    return {"param_out": p.astype(np.float32), "m_out": m.astype(np.float32), "v_out": v.astype(np.float32)}
