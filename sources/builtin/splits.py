"""The fixed held-out split of the built-in corpus.

These tasks are for evaluation only: the builder writes them to the `test` split and never
into `train`. The list is fixed (not sampled) so that every build, on every machine, holds out
the same tasks; it spans the kinds of kernel in the corpus so that an evaluation on it is not
dominated by one pattern.
"""

from __future__ import annotations

HELD_OUT: tuple[str, ...] = (
    "elu",                # elementwise activation
    "dot_product",        # reduction with shared memory and atomics
    "exclusive_scan",     # multi-level Blelloch scan
    "log_softmax",        # warp-per-row softmax
    "rms_norm",           # normalization with warp shuffles
    "transpose",          # shared-memory tiles with padding
    "avgpool2d",          # pooling
    "radix_sort",         # sorting with histograms and a scan
    "stencil_3d_7pt",     # 3D stencil
    "sobel_filter",       # image filter
    "scatter_add",        # scatter with atomics
    "lennard_jones",      # physics
)
