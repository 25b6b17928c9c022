"""What a PyTorch CUDA extension costs to build on the cpu backend (validators/cpu/extension.py):
the runtime library and the torch+shim precompiled headers (once per shim version and variant:
one with pybind11 for the units that bind to Python, one without for the others),
one `load_inline` build in the build sandbox (a cache miss), and a cache hit; then, side by side,
the build of a second answer (another kernel, other function names, declarations of the same
shape) after the first, with load_inline's bindings compiled from torch's text for each answer
(`CKD_SHARED_BINDINGS=0`, before) and shared through placeholder names (after); and the same for
a source that binds its own `forward` (the AI CUDA Engineer's form: compiled as it is, before,
split into its kernels and a shared binding unit, after).

    python -m benchmarks.bench_torch_extension_build [--shim-dir DIR]

Wall and CPU seconds (the compilers' CPU, children of this process). A fresh --shim-dir measures
the one-time pieces; an existing one measures only the per-extension build.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
template <typename scalar_t>
__global__ void relu_kernel(const scalar_t* x, scalar_t* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > scalar_t(0) ? x[i] : scalar_t(0);
}
torch::Tensor relu_cuda(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  auto y = torch::empty_like(x);
  int64_t n = x.numel();
  AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "relu_cuda", ([&] {
    relu_kernel<scalar_t><<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n);
  }));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}
"""


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _timed(label: str, fn: Callable[[], T]) -> T:
    wall, cpu = time.monotonic(), _cpu()
    out = fn()
    print(f"{label}: wall {time.monotonic() - wall:.1f} s, CPU {_cpu() - cpu:.1f} s", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shim-dir", help="where the shared pieces are built (default: a new folder)")
    args = ap.parse_args()
    os.environ["CKD_SHIM_DIR"] = args.shim_dir or tempfile.mkdtemp(prefix="ckd-shim-")
    from validators.build_cache import BuildCache
    from validators.cpu import extension

    _timed("runtime library (plain)", lambda: extension.runtime_library("plain"))
    _timed("precompiled header, binding units (plain)", lambda: extension.prelude_pch("plain", bind=True))
    _timed("precompiled header, other units (plain)", lambda: extension.prelude_pch("plain", bind=False))
    req = extension.BuildRequest(name="relu_ext", cpp_sources=["torch::Tensor relu_cuda(torch::Tensor x);"],
                                 cuda_sources=[CUDA_SOURCE], functions={"relu_cuda": "relu_cuda"})
    root = Path(tempfile.mkdtemp(prefix="ckd-ext-"))
    cache = BuildCache(Path(tempfile.mkdtemp(prefix="ckd-ext-cache-")))
    extension.prepare_runtime(root, "plain")
    miss = _timed("extension build, cache miss (build sandbox)", lambda: extension.build_one(req, root, cache=cache))
    hit = _timed("extension build, cache hit", lambda: extension.build_one(req, root, cache=cache))
    if not (miss.ok and hit.ok and hit.cached):
        raise SystemExit(f"build failed:\n{miss.diagnostics}")

    other = extension.BuildRequest(
        name="leaky_ext", cpp_sources=["torch::Tensor leaky_cuda(torch::Tensor x);"],
        cuda_sources=[CUDA_SOURCE.replace("relu_cuda", "leaky_cuda").replace(": scalar_t(0)", ": x[i] / scalar_t(100)")],
        functions={"leaky_cuda": "leaky_cuda"})
    seconds: dict[str, float] = {}
    for label, flag in (("before (torch's text per answer)", "0"), ("after (shared bindings)", "1")):
        os.environ["CKD_SHARED_BINDINGS"] = flag
        cache = BuildCache(Path(tempfile.mkdtemp(prefix="ckd-ext-cache-")))
        first = extension.build_one(req, Path(tempfile.mkdtemp(prefix="ckd-ext-")), cache=cache)
        cpu = _cpu()
        second = _timed(f"second answer, {label}",
                        lambda c=cache: extension.build_one(other, Path(tempfile.mkdtemp(prefix="ckd-ext-")), cache=c))
        seconds[flag] = _cpu() - cpu
        if not (first.ok and second.ok):
            raise SystemExit(f"build failed:\n{first.diagnostics}\n{second.diagnostics}")
    print(f"second answer's build CPU: {seconds['0']:.1f} s -> {seconds['1']:.1f} s "
          f"({seconds['1'] / seconds['0']:.2f})")

    # The AI CUDA Engineer's form: one CUDA source that binds its own `forward`.
    def self_binding(kernel_expr: str) -> extension.BuildRequest:
        src = (CUDA_SOURCE.replace("relu_cuda", "forward").replace(": scalar_t(0)", kernel_expr)
               + '\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward, "forward"); }\n')
        return extension.BuildRequest(name="kernelbench_answer", cpp_sources=[""], cuda_sources=[src])

    for label, flag in (("before (the source as it is)", "0"), ("after (split)", "1")):
        os.environ["CKD_SHARED_BINDINGS"] = flag
        cache = BuildCache(Path(tempfile.mkdtemp(prefix="ckd-ext-cache-")))
        first = extension.build_one(self_binding(": scalar_t(0)"), Path(tempfile.mkdtemp(prefix="ckd-ext-")),
                                    cache=cache)
        cpu = _cpu()
        second = _timed(f"second self-binding answer, {label}",
                        lambda c=cache: extension.build_one(self_binding(": x[i] / scalar_t(100)"),
                                                            Path(tempfile.mkdtemp(prefix="ckd-ext-")), cache=c))
        seconds["s" + flag] = _cpu() - cpu
        if not (first.ok and second.ok):
            raise SystemExit(f"build failed:\n{first.diagnostics}\n{second.diagnostics}")
    print(f"second self-binding answer's build CPU: {seconds['s0']:.1f} s -> {seconds['s1']:.1f} s "
          f"({seconds['s1'] / seconds['s0']:.2f})")


if __name__ == "__main__":
    main()
