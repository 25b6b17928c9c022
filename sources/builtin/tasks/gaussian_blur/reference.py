import numpy as np

TAPS = np.array([1.0, 4.0, 6.0, 4.0, 1.0]) / 16.0


def reference(inputs, sizes):
    img = inputs["image"].astype(np.float64)
    h, w = img.shape
    p = np.pad(img, ((0, 0), (2, 2)), mode="edge")
    rows = sum(TAPS[k] * p[:, k:k + w] for k in range(5))
    p = np.pad(rows, ((2, 2), (0, 0)), mode="edge")
    out = sum(TAPS[k] * p[k:k + h, :] for k in range(5))
    return {"blurred": out.astype(np.float32)}
