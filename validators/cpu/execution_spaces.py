"""What nvcc's front end refuses that g++ builds: calls across CUDA's execution spaces.

The cpu backend compiles device code as host code (`__device__` and `__global__` are empty to
g++), so a kernel that calls a function with no `__device__` (a helper, a functor's
`operator()`, a function template, `std::vector`) builds and runs here, and passes, where nvcc
stops with "calling a __host__ function from a __global__ function is not allowed". Such a
program never runs on a GPU: a pass would be false, and a dataset built from it would hold
kernels that do not compile.

So, where the machine has nvcc, the plain build of a one-file program also goes through nvcc's
front end (`nvcc -cuda`: cudafe++ and the host preprocessor, no device code generation, about
0.6 s of CPU), and an execution-space error there fails the build. Only that class is judged:
it depends on no architecture, toolkit version or library. Anything else nvcc says (a header
of a library this toolkit does not ship, an API an older toolkit had, its own limits) leaves
the build to g++, as it was. The flags are the lenient ones programs are commonly built with
(`--expt-relaxed-constexpr`, `--extended-lambda`, C++20), so a `constexpr` host function called
from a kernel (std::max) is not counted. Programs of several files and those built in library
mode (Thrust, libcu++) are not checked.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

from . import toolchain

_EXECUTION_SPACE = re.compile(
    r"^(?P<where>.*?\(\d+\)): error: (?P<what>calling a __host__ function.*? from a "
    r"__(?:global|device|host__ __device)__ function.*? is not allowed"
    r"|calling a __device__ function.*? from a __host__ function.*? is not allowed"
    r"|identifier .* is undefined in device code)\s*$",
    re.M,
)
_FLAGS = ("-cuda", "-std=c++20", "-arch=sm_90", "--expt-relaxed-constexpr", "--extended-lambda",
          "-w")
_DEFINE = re.compile(r"^-(?:D\w|U\w)")


def enabled() -> bool:
    """Whether builds are checked: nvcc is here and `CKD_NVCC_CHECK` is not `0`."""
    return os.environ.get("CKD_NVCC_CHECK", "1") != "0" and nvcc() is not None


@cache
def nvcc() -> str | None:
    from ..nvcc import NvccUnavailable, _real_nvcc, nvcc_path

    try:
        return _real_nvcc(nvcc_path())
    except NvccUnavailable:
        return None


def version() -> str:
    """What a build's cache key records of the check ("" when it is off)."""
    if not enabled():
        return ""
    from ..nvcc import nvcc_version

    return nvcc_version().splitlines()[-1]


def check(source: str, filename: str, work: Path, *, defines: dict[str, int | str],
          flags: list[str], runner: toolchain.Runner) -> str | None:
    """nvcc's first execution-space error on `source` (as `file(line): error: ...`), or None.
    Runs in `work/nvcc-check/` (removed after) with `runner` (the build's sandbox)."""
    exe = nvcc()
    if exe is None:
        return None
    folder = work / "nvcc-check"
    folder.mkdir(exist_ok=True)
    name = filename if filename.endswith(".cu") else Path(filename).stem + ".cu"
    (folder / name).write_text(source, encoding="utf-8", errors="surrogatepass")
    cmd = [exe, *_FLAGS, *[f"-D{k}={v}" for k, v in sorted(defines.items())],
           *[f for f in flags if _DEFINE.match(f)], name, "-o", os.devnull]
    try:
        done = runner(cmd, folder, [Path(exe).resolve().parents[1]])
    finally:
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()
    if done.returncode == 0 or done.timed_out:
        return None
    found = _EXECUTION_SPACE.search(done.output)
    return f"{found['where']}: error: {found['what']}" if found else None
