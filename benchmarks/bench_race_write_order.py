"""What the race build costs by the order a kernel writes its array.

    python benchmarks/bench_race_write_order.py [--n 4000000]

One race-free fill of `n` floats, launched three ways: one element per thread (index order),
and grid-stride loops over 64 and 8 blocks of 1,024 threads (thread t writes t, t + G, t + 2G,
...: with G * 4 bytes a power of two, every thread's writes are a power of two apart). Each is
run in the plain build and in the race build (`validators run --variant race`), side by side;
prints the kernels' seconds of each and the race build's slowdown. The detector's table keeps
neighbouring addresses in neighbouring slots only within a 256-byte granule: with the whole
address as the slot (before), the grid-stride fills built runs of filled slots that every write
walked (64 blocks: 115 s against 0.6 s in index order, on a 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FILL = r"""
#include <cstdio>
#include <cstdlib>
__global__ void fill(float *a, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = (float)i;
}
int main(int argc, char **argv) {
  int n = atoi(argv[1]), blocks = atoi(argv[2]);
  float *d, *h = (float *)malloc(n * sizeof(float));
  cudaMalloc(&d, n * sizeof(float));
  fill<<<blocks, 1024>>>(d, n);
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; i++)
    if (h[i] != (float)i) return printf("FAIL at %d\n", i), 1;
  printf("PASS\n");
  return 0;
}
"""


def kernel_seconds(source: Path, variant: str, n: int, blocks: int) -> float:
    done = subprocess.run(
        [sys.executable, "-m", "validators", "run", "--backend", "cpu", "--variant", variant, "--json",
         "--timeout", "600", str(source), "--", str(n), str(blocks)],
        capture_output=True, text=True, cwd=REPO, check=False)
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"{variant} run of {blocks} blocks gave no result: {done.stderr[-2000:]}") from None
    if result["status"] != "passed":
        raise SystemExit(f"{variant} run of {blocks} blocks: {result['status']}: {result.get('reason')}")
    return float(result["run_seconds"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=4_000_000)
    opts = ap.parse_args()
    orders = [("index order", (opts.n + 1023) // 1024), ("grid-stride, 64 blocks", 64), ("grid-stride, 8 blocks", 8)]
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp).chmod(0o755)  # the sandbox builds as an unprivileged user
        source = Path(tmp) / "fill.cu"
        source.write_text(FILL)
        print(f"{'write order':<24} {'plain s':>8} {'race s':>8} {'race/plain':>11}")
        for name, blocks in orders:
            plain = kernel_seconds(source, "plain", opts.n, blocks)
            race = kernel_seconds(source, "race", opts.n, blocks)
            print(f"{name:<24} {plain:>8.2f} {race:>8.2f} {race / max(plain, 1e-3):>10.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
