import numpy as np


def reference(inputs, sizes):
    nnz = inputs["row_nnz"].astype(np.int64)
    cols = inputs["cols"].astype(np.int64)
    vals = inputs["vals"].astype(np.float64)
    x = inputs["x"].astype(np.float64)
    width = cols.shape[1]
    mask = np.arange(width)[None, :] < nnz[:, None]
    safe_cols = np.where(mask, cols, 0)
    y = np.where(mask, vals * x[safe_cols], 0.0).sum(axis=1)
    return {"y": y.astype(np.float32)}
