"""Cost of keeping device memory closed to host code on the CPU backend, before and after.

    python -m benchmarks.bench_device_memory [--before REV] [--allocs 1,8,64] [--launches 2000]
        [--variant plain]
    python -m benchmarks.bench_device_memory --before 3b738f1 --allocs 1,100,1000,5000

Every launch, copy and memset opens device memory to the runtime and closes it again
(validators/cpu/README.md, "Device memory is closed to host code"). This program keeps K device
allocations live and times, inside the program (steady clock around the loop), an empty
one-block launch, a 4-byte and a 16 KiB host-to-device `cudaMemcpy` (K live allocations of
16 KiB each, copied round robin) and a `cudaMalloc`/`cudaFree` pair of 4 KiB; it is built twice, against the runtime of this working tree and against the one of
`--before` (default b109c25, one mprotect per live allocation for each opening and closing,
taken with `git archive` into a temporary folder, nothing checked out), and both run one after
the other for each K. Prints microseconds per operation side by side.

Copies and memsets open only their own pages (`_Device_range_access`) since a launch's window
spans the arena up to its highest live allocation, and mprotect's cost grows with the pages it
spans. Measured on the 2-core KVM guest, plain build, one worker, `--before 3b738f1` (whole-arena
copy windows), microseconds per 16 KiB `cudaMemcpy` (`/tmp/regress/arena/main.cu`, 2000 copies):

    live allocs    3b738f1 | this tree
              1        5.6 |   7.5
            100       62.0 |   8.0
           1000      485.3 |  11.4
           5000      603.6 |  14.6

and this program with `--launches 1000`, same machine (launch | 4-byte copy | 16 KiB copy):

    live allocs        launch |  4-byte copy | 16 KiB copy
              1     2.8 | 4.7 |   4.8 | 7.0 |   5.6 |  7.5
            100     3.5 | 3.4 |  20.7 | 5.8 |  66.8 |  6.9
           1000     3.2 | 3.7 |  93.1 | 7.7 | 417.0 | 12.7
           5000     6.7 | 7.3 |  95.0 | 7.3 | 425.8 | 12.4

(the launches run before the 16 KiB copies write the live buffers' pages, so they span mostly
untouched pages; a whole-arena window over written pages costs what the 16 KiB column shows).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PROGRAM = r"""
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <vector>
__global__ void empty() {}
static double us_since(std::chrono::steady_clock::time_point t0, int n) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
}
int main() {
  std::vector<float*> live(ALLOCS);
  for (auto& p : live) if (cudaMalloc(&p, 4096 * sizeof(float)) != cudaSuccess) return 1;
  for (int i = 0; i < 50; ++i) empty<<<1, 1>>>();  // workers started, pages touched
  cudaDeviceSynchronize();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < LAUNCHES; ++i) empty<<<1, 1>>>();
  cudaDeviceSynchronize();
  const double launch = us_since(t0, LAUNCHES);
  float x = 1.f;
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < LAUNCHES; ++i) cudaMemcpy(live[i % ALLOCS], &x, sizeof x, cudaMemcpyHostToDevice);
  const double copy = us_since(t0, LAUNCHES);
  std::vector<float> h(4096, 1.f);
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < LAUNCHES; ++i) cudaMemcpy(live[i % ALLOCS], h.data(), 4096 * sizeof(float), cudaMemcpyHostToDevice);
  const double copy16k = us_since(t0, LAUNCHES);
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < LAUNCHES; ++i) {
    void* q = nullptr;
    if (cudaMalloc(&q, 4096) != cudaSuccess || cudaFree(q) != cudaSuccess) return 1;
  }
  const double alloc = us_since(t0, LAUNCHES);
  for (auto p : live) cudaFree(p);
  printf("{\"launch\": %.3f, \"copy\": %.3f, \"copy16k\": %.3f, \"alloc_free\": %.3f}\n", launch, copy, copy16k,
         alloc);
  return 0;
}
"""

# Run with the validators package of `tree` first on sys.path: builds `source` there.
BUILD = r"""
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from validators.cpu import toolchain
out = toolchain.compile_program(sys.stdin.read(), Path(sys.argv[2]),
                                defines=json.loads(sys.argv[3]), variant=sys.argv[4])
if not out.ok:
    sys.exit("build failed:\n" + out.diagnostics[-3000:])
print(out.exe)
"""


def export_tree(rev: str, into: Path) -> Path:
    """`validators/` of `rev`, exported (git archive) under `into`; nothing is checked out."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "validators"],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        raise SystemExit(f"git archive {rev} failed: {archive.stderr.decode().strip()}")
    tar = into / "tree.tar"
    tar.write_bytes(archive.stdout)
    with tarfile.open(tar) as t:
        t.extractall(into / "tree", filter="data")
    return into / "tree"


def build(tree: Path, out: Path, defines: dict[str, int], variant: str) -> Path:
    proc = subprocess.run(
        [sys.executable, "-c", BUILD, str(tree), str(out), json.dumps(defines), variant],
        input=PROGRAM, capture_output=True, text=True, check=False, cwd=tree,
    )
    if proc.returncode != 0:
        raise SystemExit(f"building against {tree} failed: {proc.stderr[-3000:]}")
    return Path(proc.stdout.strip().splitlines()[-1])


def run(exe: Path) -> dict[str, float]:
    env = {**os.environ, "CUDASHIM_WORKERS": "1"}
    proc = subprocess.run([str(exe)], capture_output=True, text=True, env=env, check=False,
                          timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"{exe} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", default="b109c25", help="git revision of the 'before' runtime")
    ap.add_argument("--allocs", default="1,8,64", help="live device allocations, comma-separated")
    ap.add_argument("--launches", type=int, default=2000, help="operations timed per figure")
    ap.add_argument("--variant", default="plain", choices=["plain", "asan"])
    args = ap.parse_args()
    counts = [int(k) for k in args.allocs.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench_devmem_") as tmp:
        before_tree = export_tree(args.before, Path(tmp))
        print(f"device memory windows, {args.variant} build, {args.launches} operations per figure, "
              f"microseconds per operation ({args.before} | this tree)")
        print(f"{'live allocs':>11} | {'launch':>17} | {'4-byte H2D copy':>17} | "
              f"{'16K H2D copy':>17} | {'malloc+free 4K':>17}")
        for k in counts:
            defines = {"ALLOCS": k, "LAUNCHES": args.launches}
            old = run(build(before_tree, Path(tmp) / f"before{k}", defines, args.variant))
            new = run(build(REPO, Path(tmp) / f"after{k}", defines, args.variant))
            cells = [f"{old[c]:>7.1f} | {new[c]:>7.1f}" for c in ("launch", "copy", "copy16k", "alloc_free")]
            print(f"{k:>11} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
