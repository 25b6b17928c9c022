"""Compile CUDA programs with nvcc: one arch, -O3, per-case -D, ptxas statistics, cached.

nvcc itself runs inside the sandbox (the source is untrusted: `#include "/root/secret"`
must not leak a file into the diagnostics), with the program's own include directories
exposed read-only. Builds are cached by source, flags, header contents and `nvcc --version`.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from schemas import CompileInfo, KernelResources, Program

from .build_cache import BuildCache, TransientBuildError
from .sandbox import BUILD_DEVICES, GIB, Limits, run_sandboxed

DEFAULT_ARCH = "sm_90"
"""One current architecture; `$CKD_CUDA_ARCH` overrides it (read when options are made)."""
DIAGNOSTICS_LIMIT = 8000
HEADER_SUFFIXES = (".h", ".hpp", ".cuh", ".hh", ".inc", ".inl", ".cu", ".cpp")


class NvccUnavailable(RuntimeError):
    pass


@dataclass(frozen=True)
class NvccOptions:
    arch: str = field(default_factory=lambda: os.environ.get("CKD_CUDA_ARCH", DEFAULT_ARCH))
    """One real architecture (`sm_90`), not a fat binary."""
    opt: str = "-O3"
    extra_flags: tuple[str, ...] = ()
    include_dirs: tuple[Path, ...] = ()
    timeout: float = 180.0
    ptxas_verbose: bool = True
    cudart: str = "shared"
    """How the CUDA runtime is linked: `shared` (with a run path to the toolkit's), so the cuda
    backend's interposed runtime sees the program's calls (its kernel-work and no-launch runs);
    `static` or '' (nvcc's default, static) leaves those runs impossible."""
    limits: Limits = field(default_factory=lambda: Limits(
        cpu_seconds=300, wall_seconds=600, memory_bytes=16 * GIB, file_size_bytes=1 * GIB,
        max_processes=128, output_bytes=4 << 20, disk_bytes=4 * GIB, devices=BUILD_DEVICES))


def nvcc_path() -> str:
    """`$CKD_NVCC` when set, else nvcc on PATH, else /usr/local/cuda/bin/nvcc."""
    forced = os.environ.get("CKD_NVCC")
    if forced:
        if not (os.path.isfile(forced) and os.access(forced, os.X_OK)):
            raise NvccUnavailable(f"CKD_NVCC={forced} is not an executable file")
        return forced
    path = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                    if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None)
    if path is None:
        raise NvccUnavailable("nvcc not found on PATH or in /usr/local/cuda/bin")
    return path


def _real_nvcc(path: str) -> str:
    """The nvcc binary behind a wrapper script (`exec /usr/local/cuda-13.0/bin/nvcc "$@"`)."""
    real = os.path.realpath(path)
    try:
        head = Path(real).read_bytes()[:512]
    except OSError:
        return real
    if head.startswith(b"#!"):
        m = re.search(rb"exec\s+(/\S+/nvcc)\b", head)
        if m and os.access(m.group(1).decode(), os.X_OK):
            return m.group(1).decode()
    return real


def _toolkit_lib(nvcc: str) -> str:
    """The folder of the toolkit's libcudart.so beside `nvcc` (the run path of a program
    linked with the shared runtime: the sandbox shows /usr, not the loader's other paths)."""
    root = os.path.dirname(os.path.dirname(nvcc))
    for sub in ("lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"):
        if os.path.isdir(os.path.join(root, sub)):
            return os.path.realpath(os.path.join(root, sub))
    return os.path.join(root, "lib64")


@functools.cache
def nvcc_version() -> str:
    """Full `nvcc --version` text (part of every cache key)."""
    out = subprocess.run([nvcc_path(), "--version"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise NvccUnavailable(f"nvcc --version failed: {out.stderr.strip()[:200]}")
    return out.stdout.strip()


def nvcc_release() -> str:
    m = re.search(r"release ([0-9.]+)", nvcc_version())
    return f"nvcc {m.group(1)}" if m else "nvcc"


# --- ptxas -v ------------------------------------------------------------------------------

_ENTRY = re.compile(r"ptxas info\s*: Compiling entry function '([^']+)'")
_PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"ptxas info\s*: Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")
_CMEM = re.compile(r"(\d+) bytes cmem\[\d+\]")


def demangle(names: list[str]) -> dict[str, str]:
    """Mangled -> readable kernel name without its parameter list (`red<256>`)."""
    if not names:
        return {}
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True,
                             text=True, timeout=30).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        out = names
    if len(out) != len(names):
        out = names
    result = {}
    for mangled, pretty in zip(names, out, strict=True):
        result[mangled] = _strip_params(pretty)
    return result


def _strip_params(sig: str) -> str:
    if not sig.endswith(")"):
        return sig
    depth = 0
    for i in range(len(sig) - 1, -1, -1):
        c = sig[i]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                return sig[:i].removeprefix("void ").strip()
    return sig


def parse_ptxas(text: str) -> list[KernelResources]:
    """KernelResources per entry function in `-Xptxas -v` output (order of appearance)."""
    entries: list[dict] = []
    current: dict | None = None
    for line in text.splitlines():
        m = _ENTRY.search(line)
        if m:
            current = {"kernel": m.group(1)}
            entries.append(current)
            continue
        if current is None:
            continue
        m = _PROPS.search(line)
        if m:
            current["stack_bytes"] = int(m.group(1))
            current["spill_store_bytes"] = int(m.group(2))
            current["spill_load_bytes"] = int(m.group(3))
            continue
        m = _USED.search(line)
        if m:
            current["registers"] = int(m.group(1))
            s = _SMEM.search(line)
            current["shared_bytes"] = int(s.group(1)) if s else 0
            c = _CMEM.search(line)
            if c:
                current["constant_bytes"] = int(c.group(1))
    names = demangle([e["kernel"] for e in entries])
    return [KernelResources(**{**e, "kernel": names.get(e["kernel"], e["kernel"])}) for e in entries]


def truncate(text: str, limit: int = DIAGNOSTICS_LIMIT) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - limit} characters cut] ...\n{text[-half:]}"


# --- compile -------------------------------------------------------------------------------

def _headers_digest(dirs: tuple[Path, ...]) -> str:
    h = hashlib.sha256()
    for d in dirs:
        d = Path(d)
        if not d.is_dir():
            continue
        for p in sorted(d.iterdir()):
            if p.is_file() and p.suffix in HEADER_SUFFIXES:
                h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def define_flags(defines: dict[str, int | str]) -> list[str]:
    return [f"-D{k}={v}" for k, v in sorted(defines.items())]


_LIBRARY_HEADERS = {
    "cublas_v2.h": "cublas", "cublas.h": "cublas", "cublas_api.h": "cublas", "cublasXt.h": "cublas",
    "cublasLt.h": "cublasLt", "curand.h": "curand", "cufft.h": "cufft", "cufftXt.h": "cufft",
    "cufftw.h": "cufftw", "cusparse.h": "cusparse", "cusparse_v2.h": "cusparse",
    "cusolverDn.h": "cusolver", "cusolverSp.h": "cusolver", "cusolverRf.h": "cusolver",
    "cusolver_common.h": "cusolver", "nvrtc.h": "nvrtc",
}
# Not <cuda.h>: most programs include it for nothing (37 of the real programs we measure on), and
# the driver's libcuda.so (unversioned) is only on machines with its development files.
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.MULTILINE)


def library_link_flags(source: str, flags: list[str] | tuple[str, ...] = ()) -> list[str]:
    """`-l` flags for the CUDA libraries whose headers `source` includes and `flags` does not
    already link: nvcc links none of them by itself, and a program written for a harness that
    does (CUDABench, an LLM's answer that includes <cublas_v2.h>) would fail to link on a GPU
    where the cpu backend's header-only shim builds it. `curand_kernel.h` is device code: no
    library."""
    given = {f[2:] for f in flags if f.startswith("-l")}
    libs = []
    for header in _INCLUDE.findall(source):
        lib = _LIBRARY_HEADERS.get(header.strip().rsplit("/", 1)[-1])
        if lib and lib not in given and lib not in libs:
            libs.append(lib)
    return [f"-l{lib}" for lib in libs]


def nvcc_command(program: Program, defines: dict[str, int | str], options: NvccOptions,
                 output: str = "a.out") -> list[str]:
    cmd = [_real_nvcc(nvcc_path()), options.opt, f"-arch={options.arch}"]
    if options.ptxas_verbose:
        cmd += ["-Xptxas", "-v"]
    cmd += [f"-I{d}" for d in options.include_dirs]
    if options.cudart:
        cmd += ["-cudart", options.cudart]
        if options.cudart == "shared":
            cmd += [f"-Xlinker=-rpath={_toolkit_lib(cmd[0])}"]
    cmd += define_flags(defines)
    cmd += [*options.extra_flags, *program.extra_flags, "-o", output, program.filename]
    cmd += library_link_flags(program.source, [*options.extra_flags, *program.extra_flags])
    return cmd


def compile_program(program: Program, defines: dict[str, int | str] | None = None, *,
                    options: NvccOptions | None = None, cache: BuildCache | None = None
                    ) -> tuple[Path | None, CompileInfo]:
    """Build `program` with nvcc (or fetch it from the cache)."""
    options = options or NvccOptions()
    defines = defines or {}
    cache = cache or BuildCache()
    version = nvcc_version()
    cmd = nvcc_command(program, defines, options)
    # Only the operator's include folders are readable in the sandbox: an `-I` in the program's
    # own flags names a folder the compiler will not find there.
    include_dirs = tuple(options.include_dirs)
    key = BuildCache.key(
        kind="nvcc", source=program.source, filename=program.filename, command=cmd[1:],
        compiler=version, headers=_headers_digest(include_dirs),
    )

    def build(tmp: Path) -> CompileInfo:
        (tmp / program.filename).write_text(program.source, encoding="utf-8", errors="surrogateescape")
        limits = options.limits.with_overrides(wall_seconds=options.timeout)
        start = time.monotonic()
        out = run_sandboxed(cmd, tmp, limits=limits, expose=[Path(d) for d in include_dirs],
                            env={"PATH": f"{os.path.dirname(cmd[0])}:/usr/local/bin:/usr/bin:/bin"})
        seconds = time.monotonic() - start
        text = (out.stderr + ("\n" + out.stdout if out.stdout.strip() else "")).strip()
        info = CompileInfo(compiler=nvcc_release(), command=cmd, seconds=seconds,
                           diagnostics=truncate(_without_ptxas_info(text)),
                           ok=out.exit_code == 0 and (tmp / "a.out").is_file(),
                           resources=parse_ptxas(text) if out.exit_code == 0 else [])
        if out.timed_out:
            raise TransientBuildError(info.model_copy(update={
                "diagnostics": f"nvcc timed out after {options.timeout:.0f}s\n" + info.diagnostics}))
        if out.limit_hit:
            raise TransientBuildError(info.model_copy(update={
                "diagnostics": f"nvcc hit the sandbox {out.limit_hit} limit\n" + info.diagnostics}))
        for name in os.listdir(tmp):  # keep only the artifact
            if name != "a.out":
                p = tmp / name
                shutil.rmtree(p) if p.is_dir() else p.unlink()
        return info

    return cache.get_or_build(key, build)


def _without_ptxas_info(text: str) -> str:
    keep = [ln for ln in text.splitlines()
            if not (ln.startswith("ptxas info") or _PROPS.search(ln))]
    return "\n".join(keep).strip()
