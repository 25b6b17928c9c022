import numpy as np


def reference(inputs, sizes):
    img = inputs["image"].astype(np.int64)
    h, w = img.shape
    p = np.pad(img, 1, mode="edge")
    s = np.zeros((h, w), dtype=np.int64)
    for dy in range(3):
        for dx in range(3):
            s += p[dy:dy + h, dx:dx + w]
    return {"blurred": ((s + 4) // 9).astype(np.uint8)}
