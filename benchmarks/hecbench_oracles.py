"""Independent oracles for HeCBench programs that compute checkable values but print no verdict.

Fourteen of the 35 programs in ../shared/data/hecbench print no PASS/FAIL of their own. Three of
them print values that can be recomputed independently, so the harness checks them here, from the
program's arguments alone, with NumPy:

- f16atomic: half and bfloat16 `atomicAdd` of {0, 1} pairs into 256 slots; the first two
  elements must be exactly 0 and the number of threads that hit slot 0.
- michalewicz: the minimum of the Michalewicz function over `n` random vectors per dimension,
  drawn with `std::mt19937(19937)` and libstdc++'s `uniform_real_distribution<float>(0, 4)`
  (reproduced bit for bit: NumPy's legacy-seeded MT19937 is the same generator).
- langevin: the error of a Taylor series against the Langevin function, where the kernels compute
  the Langevin function three ways; the printed error must equal the error of the exact function.

The others print only timings (or nothing that depends on a kernel's result) and have no oracle.
An oracle returns (passed, reason).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

Oracle = Callable[[list[str], str], tuple[bool, str]]


def _floats(pattern: str, text: str) -> list[list[float]]:
    return [[float(g) for g in m.groups()] for m in re.finditer(pattern, text)]


def f16atomic(args: list[str], stdout: str) -> tuple[bool, str]:
    nelems = int(args[0])
    threads = nelems // 2
    hits = (threads + 255) // 256  # threads with tid % 256 == 0
    if hits > 2048:
        return False, f"oracle needs <= 2048 hits per slot to be exact in half (got {hits})"
    got = _floats(r"FLOAT32: (\S+) (\S+)", stdout)
    if len(got) != 2:
        return False, f"expected 2 'FLOAT32:' lines (half, bfloat16), found {len(got)}"
    for kind, (first, second) in zip(("half", "bfloat16"), got, strict=True):
        if first != 0.0 or second != float(hits):
            return False, f"{kind}: first two elements {first} {second}, expected 0 {hits}"
    return True, f"half and bfloat16 atomics: 0 and {hits} as computed"


def _libstdcxx_uniform_float(gen: np.random.RandomState, n: int, low: float, high: float):
    """`std::uniform_real_distribution<float>(low, high)` over `std::mt19937` in libstdc++:
    one 32-bit draw per value, `generate_canonical<float, 24>` in float, clamped below 1."""
    raw = gen.randint(0, 2**32, size=n, dtype=np.uint64).astype(np.float32)
    canon = raw / np.float32(4294967296.0)
    canon = np.where(canon >= 1, np.nextafter(np.float32(1), np.float32(0)), canon)
    return (canon * np.float32(high - low) + np.float32(low)).astype(np.float32)


def michalewicz(args: list[str], stdout: str) -> tuple[bool, str]:
    n = int(args[0])
    gen = np.random.RandomState(19937)
    got = _floats(r"Global minima = (\S+)", stdout)
    dims = (2, 5, 10)
    if len(got) != len(dims):
        return False, f"expected {len(dims)} 'Global minima' lines, found {len(got)}"
    for dim, (printed,) in zip(dims, got, strict=True):
        x = _libstdcxx_uniform_float(gen, n * dim, 0.0, 4.0).astype(np.float64).reshape(n, dim)
        i = np.arange(1, dim + 1, dtype=np.float64)
        value = -(np.sin(x) * np.sin(i * x * x / np.pi) ** 20).sum(axis=1)
        expected = min(0.0, float(value.min()))  # the device minimum starts at 0 (cudaMemset)
        if abs(printed - expected) > 1e-4 + 1e-5 * abs(expected):
            return False, f"dim {dim}: printed minimum {printed}, expected {expected:.6f}"
    return True, "minima for dims 2, 5, 10 match NumPy on the same random vectors"


def langevin(args: list[str], stdout: str) -> tuple[bool, str]:
    n = int(args[0])
    if n % 256:
        return False, "oracle needs n % 256 == 0 (the program launches n/256 blocks, no tail)"
    i = np.arange(n, dtype=np.float32)
    x = (np.float32(-1.8) + i * (np.float32(1.79999) / np.float32(n))).astype(np.float64)
    taylor = x * (1 / 3 - x**2 / 45 + 2 * x**4 / 945 - x**6 / 4725)
    exact = 1 / np.tanh(x) - 1 / x
    expected = float(np.sqrt(((taylor - exact) ** 2).sum()))
    got = _floats(r"Error statistics for the kernels:\s*(\S+) (\S+) (\S+)", stdout)
    if len(got) != 1:
        return False, "no 'Error statistics' line"
    for k, printed in enumerate(got[0]):
        if abs(printed - expected) > 2e-3 * expected:
            return False, f"k{k}: printed error {printed}, expected {expected:.6f}"
    return True, f"all three kernels give the error of the exact function ({expected:.6f})"


ORACLES: dict[str, Oracle] = {
    "f16atomic-cuda": f16atomic,
    "michalewicz-cuda": michalewicz,
    "langevin-cuda": langevin,
}
