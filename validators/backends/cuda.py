"""The `cuda` backend: nvcc builds, the binary runs on a real GPU inside the sandbox.

Thin on purpose (DESIGN.md): everything but the compiler command and the failure signatures
is shared with the other backends. The GPU is chosen with `CUDA_VISIBLE_DEVICES`. Variants
`memcheck` and `racecheck` run the same binary under compute-sanitizer when it is installed
and a GPU answers.

Whether a GPU answers is asked once per process by a tiny nvcc-built probe (cached build):
on a machine without a driver every CUDA call fails with `cudaErrorInsufficientDriver` while
the process exits 0, so an exit code proves nothing. The probe prints what
`cudaGetDeviceCount` returned and we read that; with no GPU, every run is `needs_gpu`.

The kernel-work and no-launch runs (`validators/kernel_work.py`, issue 21) go through an
interposed runtime: `cuda_interposer.cpp`, an LD_PRELOAD library (g++-built, cached) loaded in
front of the program's `libcudart.so` in every run but the compute-sanitizer ones. It shares
the cpu runtime's substitution (`validators/cpu/runtime/kernel_inputs.h`) and settings
(`CUDASHIM_*`, read and wiped in its constructor; the inputs file unlinked). A GPU's memory cannot
be patched in place, so uploads are substituted on their source side (a staging copy of the
host's bytes, then the real copy; an async copy waits for its stream before the staging buffer
goes), read-backs are patched in the host's buffer after the copy, `cudaMemcpyDefault` is
resolved with `cudaPointerGetAttributes`, and managed, pinned and registered memory holds the
second draw while each launch runs (that run's launches are then synchronous). Wrapped: the
1-D, 2-D, 3-D, symbol and CUDA-array copies (sync, async, per-thread-stream forms), cuBLAS's own
`cublasSet/Get{Vector,Matrix}` (libcublas copies past the runtime's entry points), stream capture
(copies captured into a graph are staged into buffers kept for the process, read-backs patched
after each `cudaGraphLaunch`; nothing is synchronised while a stream captures),
`cudaGraphLaunch` (a launch: left out in the no-launch run, timed), `cudaLaunchKernel`,
`__cudaLaunchKernel` (what CUDA 13's `<<<>>>` stubs call), `cudaLaunchKernelExC` and
`cudaLaunchCooperativeKernel`, whose by-value arguments are noted with the uploads
(`cudaFuncGetParamInfo`). nvcc links the runtime shared (`-cudart shared`, run path to the
toolkit's library folder) so the interposer sees those calls. Where it cannot (the program's
own flags link the runtime statically; a `.preinit_array` entry or an ifunc resolver runs code
before the interposer reads its settings; the interposer did not build) the check is not made
and the case is an `error` saying so: never a pass, never a rejection on it.

What the executable imports says what the interposer cannot follow (`unfollowed`): other copies
(graph memcpy nodes, batched copies, the driver API's `cuMemcpy*`, `cublasXt`) leave the
device-input run out, since an upload it does not replace would read as host work. A CUDA
library's compute calls (`cublasSgemm_v2`, `cufftExecC2C`, `curandGenerateUniform`, ...: every
imported library function that is not a handle, plan, setting or copy) get a per-program stub
library (`library_stubs`, x86-64): trampolines that jump to the library, or return success without
computing in the no-launch run, so its kernels stop there as launches do. Launches it still
cannot stop (`cuLaunchKernel`, `cuGraphLaunch`, a library without stubs) leave the no-launch run
to its uploads alone (an output the host uploaded whole is still rejected). Either way `ValidationResult.kernel_check` says which run was left out
and why. Entry points fetched with `cudaGetDriverEntryPoint`/`dlsym` bypass both the interposer
and this reading; that only hurts the program (its upload is not replaced, so its outputs follow
the host's inputs; its launch still runs in the no-launch run). The interposer shows in
`/proc/self/maps`, but in every run alike. On an H100 (driver 580, CUDA 13.0) it substituted
uploads (whole, in pieces, padded, into managed memory) and rejected five of the six
host-computing programs of tests/validators/test_adversarial_kernel_work.py; the sixth (uploads
into managed memory that the host then reads itself, kernels unrelated) passed there: the
interposer stopped (exit 97) on the empty inputs file every other run gets, so the no-launch run
never ran its program, and its stop read as "the kernels matter". It now takes an empty file as
nothing to replace, as the cpu runtime does, and its own failure is an `error` (only with the tag
it forgets before `main`: exit 97 and its words alone are the program's `runtime_error`). Its
logs and the speed term's timing file are created before `main` and carry the run's nonce
(validators/engine.py `_log_tampering`): a file the program forged earns nothing. The tests simulate
the GPU with a stand-in runtime (tests/validators/test_cuda_kernel_work.py), where that program
is now rejected; a GPU has not yet confirmed it.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import secrets
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from schemas import CompileInfo, Program, Status

from ..build_cache import BuildCache
from ..nvcc import NvccOptions, NvccUnavailable, compile_program, nvcc_path
from .base import Backend, Executable, RunOutcome, Verdict
from .cpu import _padded

PROBE_SOURCE = r"""
#include <cstdio>
#include <cuda_runtime.h>
int main() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  std::printf("CKD-PROBE %s %d\n", cudaGetErrorName(e), e == cudaSuccess ? n : 0);
  if (e == cudaSuccess && n > 0) {
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) == cudaSuccess)
      std::printf("CKD-DEVICE %s sm_%d%d\n", p.name, p.major, p.minor);
  }
  return 0;
}
"""

NO_GPU_SIGNATURES = (
    "cudaErrorInsufficientDriver",
    "CUDA driver version is insufficient",
    "cudaErrorNoDevice",
    "no CUDA-capable device is detected",
    "cudaErrorNotSupported",
    "CUDA_ERROR_NO_DEVICE",
    "cudaErrorSystemNotReady",
)


@dataclass(frozen=True)
class GpuProbe:
    devices: int
    error: str
    """The cudaError_t name cudaGetDeviceCount returned (`cudaSuccess` when it worked)."""
    device: str = ""

    @property
    def ok(self) -> bool:
        return self.devices > 0

    @property
    def capability(self) -> tuple[int, int] | None:
        """The first device's compute capability, from the probe's `sm_XY` (minor = last digit)."""
        m = re.search(r"\bsm_(\d+)(\d)$", self.device.strip())
        return (int(m.group(1)), int(m.group(2))) if m else None

    def reason(self) -> str:
        if self.ok:
            return ""
        return f"no GPU answered (cudaGetDeviceCount: {self.error}, {self.devices} devices)"


@functools.cache
def probe_gpu() -> GpuProbe:
    """Build (cached) and run the probe in the sandbox with the cuda runs' settings; never
    raises. Cached for the process; `classify` clears it when a program reports no GPU."""
    if os.environ.get("CKD_ASSUME_NO_GPU"):
        return GpuProbe(0, "CKD_ASSUME_NO_GPU set")
    try:
        path, info = compile_program(Program(source=PROBE_SOURCE, filename="probe.cu"),
                                     options=NvccOptions(ptxas_verbose=False))
    except NvccUnavailable as exc:
        return GpuProbe(0, f"nvcc unavailable: {exc}")
    if path is None:
        return GpuProbe(0, "probe did not build: " + info.diagnostics[:200])
    # Through the sandbox, as programs run: a GPU the sandbox keeps from them is no GPU here.
    from ..sandbox import Limits, SandboxError, run_sandboxed, workspace

    device = os.environ.get("CUDA_VISIBLE_DEVICES", "0")
    env = {"CUDA_VISIBLE_DEVICES": device, "CUDA_CACHE_DISABLE": "1"}
    if driver_lib_dirs():
        env["LD_LIBRARY_PATH"] = ":".join(str(d) for d in driver_lib_dirs())
    limits = Limits(cpu_seconds=60, wall_seconds=90, memory_bytes=None, gpu=device)
    try:
        with workspace(limits) as root:
            work = root / "work"
            work.mkdir()
            out = run_sandboxed([str(path)], work, limits=limits, env=env, expose=driver_lib_dirs())
    except (OSError, SandboxError) as exc:
        return GpuProbe(0, f"probe did not run: {exc}")
    for line in out.stdout.splitlines():
        if line.startswith("CKD-PROBE "):
            _, err, n = line.split()
            dev = next((ln.removeprefix("CKD-DEVICE ") for ln in out.stdout.splitlines()
                        if ln.startswith("CKD-DEVICE ")), "")
            return GpuProbe(int(n), err, dev)
    return GpuProbe(0, f"probe printed nothing (exit {out.exit_code}): {out.stderr.strip()[:200]}")


def device_arch(capability: tuple[int, int]) -> str:
    """The architecture to build for a device: the arch-specific target (`sm_90a`, `sm_100a`)
    from Hopper on, so `wgmma`, `setmaxnreg` and CUTLASS's SM90+ kernels build and run; the
    plain target before (no such features)."""
    major, minor = capability
    return f"sm_{major}{minor}{'a' if major >= 9 else ''}"


def arch_runs_on(arch: str, capability: tuple[int, int]) -> bool:
    """Whether a binary built with `-arch=ARCH` runs on a device of `capability`: `sm_XYa` only
    on X.Y itself, `sm_XYf` on the X family from Y up, plain `sm_XY` (with its PTX) on X.Y and
    every later device."""
    m = re.fullmatch(r"(?:sm|compute)_(\d+)(\d)([af]?)", arch.strip())
    if not m:
        return False
    want = (int(m.group(1)), int(m.group(2)))
    if m.group(3) == "a":
        return capability == want
    if m.group(3) == "f":
        return capability[0] == want[0] and capability[1] >= want[1]
    return capability >= want


def driver_lib_dirs() -> list[Path]:
    """Folders holding the driver's libraries (`libcuda.so.1`) that the loader finds only through
    `LD_LIBRARY_PATH` on some hosts (several clouds' CUDA base images): named by the operator in
    `$CKD_CUDA_DRIVER_DIRS` (colon-separated), exposed read-only to GPU runs and passed through.
    The sandbox scrubs the environment, so without them those hosts report
    cudaErrorInsufficientDriver for every program."""
    return [Path(p) for p in os.environ.get("CKD_CUDA_DRIVER_DIRS", "").split(":")
            if p and Path(p).is_dir()]


MPS_PIPE_DEFAULT = "/tmp/nvidia-mps"
"""Where the CUDA driver looks for the MPS control daemon unless `$CUDA_MPS_PIPE_DIRECTORY`
says otherwise: every CUDA program connects there at initialisation (ENOENT without MPS)."""


DRIVER_CONFIG = ("/etc/nvidia/",)
"""What the driver reads at initialisation outside the work folder besides the MPS pipe: its
application profiles (`/etc/nvidia/nvidia-application-profiles-rc` and its `.d` folder); seen on
an H100 with driver 580."""
DRIVER_DEVICE_LINKS = ("/dev/char/",)
"""The driver replaces the `/dev/char/MAJOR:MINOR` links of the device nodes it opens (unlink,
then symlink; in the sandbox's own /dev that fails and changes nothing): seen on an H100."""
DRIVER_HOME_READS = (".nv/nvidia-application-profile-globals-rc",
                     ".nv/nvidia-application-profiles-rc", ".nv/nvidia-application-profiles-rc.d")
"""The user's application profiles, which the driver reads under `$HOME` (the work folder) at
initialisation: reading them is the driver's, and none exists there."""


INTERPOSER_SOURCE = Path(__file__).with_name("cuda_interposer.cpp")
KERNEL_INPUTS_HEADER = Path(__file__).parents[1] / "cpu" / "runtime" / "kernel_inputs.h"


def interposer_library(cache: BuildCache | None = None) -> tuple[Path | None, str]:
    """(the interposed runtime, built with g++ and cached; or None and why it is not there)."""
    gxx = shutil.which("g++")
    if gxx is None:
        return None, "g++ not found (it builds the interposed runtime)"
    version = subprocess.run([gxx, "--version"], capture_output=True, text=True).stdout
    cache = cache or BuildCache()
    source, header = INTERPOSER_SOURCE.read_text(), KERNEL_INPUTS_HEADER.read_text()
    key = BuildCache.key(kind="cuda-interposer", source=source, header=header, compiler=version)

    def build(tmp: Path) -> CompileInfo:
        (tmp / INTERPOSER_SOURCE.name).write_text(source)
        (tmp / KERNEL_INPUTS_HEADER.name).write_text(header)
        cmd = [gxx, "-O2", "-std=c++17", "-shared", "-fPIC", "-I.", "-o", "libckdcudart.so",
               INTERPOSER_SOURCE.name, "-ldl"]
        out = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=300)
        for name in (INTERPOSER_SOURCE.name, KERNEL_INPUTS_HEADER.name):
            (tmp / name).unlink()
        return CompileInfo(compiler="g++", command=cmd, ok=out.returncode == 0,
                           diagnostics=out.stderr[-2000:])

    path, info = cache.get_or_build(key, build, artifact="libckdcudart.so")
    return path, "" if path is not None else f"the interposed runtime did not build: {info.diagnostics}"


@dataclass(frozen=True)
class Linkage:
    """What the loader binds for an executable: its NEEDED libraries and the symbols it imports."""

    needed: tuple[str, ...] = ()
    imports: frozenset[str] = frozenset()
    dynamic: str = ""
    """readelf's dynamic section and relocations (for `runtime_linkage`)."""
    error: str = ""


@functools.lru_cache(maxsize=256)
def _linkage(path: str, stamp: tuple[int, int]) -> Linkage:
    readelf = shutil.which("readelf")
    if readelf is None:
        return Linkage(error="readelf not found (it checks how the program links the CUDA runtime)")
    try:
        out = subprocess.run([readelf, "-d", "-r", "--dyn-syms", "-W", path], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return Linkage(error=f"readelf failed on the executable: {exc}")
    if out.returncode != 0:
        return Linkage(error=f"readelf failed on the executable: {out.stderr.strip()[:200]}")
    needed = tuple(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out.stdout))
    imports = set()
    for line in out.stdout.splitlines():
        parts = line.split()
        # "  5: 0000000000000000  0 FUNC GLOBAL DEFAULT UND cudaMemcpy@libcudart.so.13 (2)"
        if len(parts) >= 8 and parts[0].endswith(":") and parts[6] == "UND":
            imports.add(parts[7].split("@")[0])
    return Linkage(needed, frozenset(imports), out.stdout)


def linkage(path: Path) -> Linkage:
    try:
        st = path.stat()
    except OSError as exc:
        return Linkage(error=f"the executable cannot be read: {exc}")
    return _linkage(str(path), (st.st_mtime_ns, st.st_size))


def runtime_linkage(path: Path) -> str:
    """Why the interposed runtime would not see `path`'s CUDA calls ('' when it would): the
    runtime must be a shared library the loader binds (a static one is inside the program), and
    no code of the program may run before the interposer reads its settings."""
    found = linkage(path)
    if found.error:
        return found.error
    if not any(n.startswith("libcudart.so") for n in found.needed):
        return ("the program does not link the CUDA runtime dynamically (a static runtime, e.g. "
                "`-cudart static` among its flags): its calls cannot be interposed")
    if "(PREINIT_ARRAY)" in found.dynamic or "IRELATIV" in found.dynamic:
        return ("the program runs code before the interposed runtime starts (a .preinit_array "
                "entry or an ifunc resolver): it could read the run's settings")
    return ""


_STREAM_SUFFIX = re.compile(r"_(ptds|ptsz)$")
FOLLOWED_COPIES = frozenset(
    [f"cudaMemcpy{k}{a}" for k in ("", "2D", "3D", "ToSymbol", "FromSymbol", "2DToArray", "ToArray",
                                   "2DFromArray", "FromArray") for a in ("", "Async")]
    + [f"cublas{d}{w}{a}{b}" for d in ("Set", "Get") for w in ("Vector", "Matrix")
       for a in ("", "Async") for b in ("", "_64")])
"""The copies `cuda_interposer.cpp` stages (uploads) and patches (reads back)."""
HOSTLESS_COPIES = frozenset(f"cudaMemcpy{k}{a}" for k in ("Peer", "3DPeer", "ArrayToArray",
                                                           "2DArrayToArray") for a in ("", "Async"))
"""Copies between device memories: nothing of the host's goes up or comes back."""
_COPY = re.compile(r"^(cudaMemcpy|cuMemcpy|cudaGraph\w*Memcpy|cuGraph\w*Memcpy|cudaGraphAddNode|"
                   r"cuGraphAddNode|cudaGraph(Exec)?NodeSetParams|cuGraph(Exec)?NodeSetParams|"
                   r"cublas\w*(Set|Get)(Vector|Matrix)|cublasXt|cufftXtMemcpy)")
_LAUNCH = re.compile(r"^(cuLaunch|cuGraphLaunch|cudaLaunchCooperativeKernelMultiDevice)")
_LAUNCHING_LIBRARY = re.compile(
    r"^lib(cublas|cublasLt|cufft|cufftw|curand|cusparse|cusparseLt|cusolver|cusolverMg|npp\w*|"
    r"nvjpeg|cudnn\w*|nccl|cutensor\w*|nvblas|cudss)\.so")


_LIBRARY_CALL = re.compile(r"^(cublas|cufft|curand|cusparse|cusolver|cudnn|nccl|npp|cutensor|nvjpeg)")
_SETUP_CALL = re.compile(
    r"(Create|Destroy|Set|Get|Plan|Make|Estimate|Version|Error|Status|Logger|Workspace|Stream|"
    r"Mode|Property|Attribute|Alloc|Free|Init|Finalize|Seed|Offset|Ordering|Descr|BufferSize|"
    r"Query|Info|Name|String|Heuristic|Preference|Count|Memcpy)", re.IGNORECASE)


def library_compute_calls(path: Path) -> list[str]:
    """The CUDA-library functions `path` imports that compute (a GEMM, an FFT, a generator's
    numbers), as opposed to handles, plans, settings and copies: what the no-launch run must
    turn into no-ops, since their kernels launch inside the library."""
    found = linkage(path)
    return sorted(n for n in found.imports if _LIBRARY_CALL.match(n) and not _SETUP_CALL.search(n))


def library_stubs(names: list[str], cache: BuildCache | None = None) -> tuple[Path | None, str]:
    """A preload library with one trampoline per name: it jumps to the library's own function,
    or, in the no-launch run (the interposer's `ckd_no_launch_flag`), returns 0 (every CUDA
    library's success status) without computing. A jump, not a call, so one stub serves any
    signature. x86-64 only (None elsewhere: those libraries' launches then stay unseen)."""
    import platform

    if not names:
        return None, "no library compute calls"
    if platform.machine() not in ("x86_64", "AMD64"):
        return None, f"library stubs are written for x86-64, not {platform.machine()}"
    gxx = shutil.which("g++")
    if gxx is None:
        return None, "g++ not found (it builds the library stubs)"
    lines = ['#include <dlfcn.h>',
             f'extern "C" {{ __attribute__((visibility("hidden"))) void* ckd_real[{len(names)}]; }}',
             f'static const char* const kNames[{len(names)}] = {{',
             *[f'  "{n}",' for n in names], "};",
             "__attribute__((constructor)) static void ckd_resolve() {",
             f"  for (int i = 0; i < {len(names)}; i++) ckd_real[i] = dlsym(RTLD_NEXT, kNames[i]);", "}",
             "asm(R\"(", ".text"]
    for i, n in enumerate(names):
        lines += [f".globl {n}", f".type {n}, @function", f"{n}:",
                  "  movq ckd_no_launch_flag@GOTPCREL(%rip), %r11", "  cmpl $0, (%r11)",
                  f"  jne .Lnoop{i}", f"  movq ckd_real+{8 * i}(%rip), %r11", "  testq %r11, %r11",
                  f"  jz .Lmissing{i}", "  jmpq *%r11", f".Lnoop{i}:", "  xorl %eax, %eax", "  ret",
                  f".Lmissing{i}:", "  movl $1, %eax", "  ret", f".size {n}, .-{n}"]
    lines += [')");', ""]
    source = "\n".join(lines)
    version = subprocess.run([gxx, "--version"], capture_output=True, text=True).stdout
    cache = cache or BuildCache()
    key = BuildCache.key(kind="cuda-library-stubs", source=source, compiler=version)

    def build(tmp: Path) -> CompileInfo:
        (tmp / "stubs.cpp").write_text(source)
        cmd = [gxx, "-O2", "-shared", "-fPIC", "-o", "libckdstubs.so", "stubs.cpp", "-ldl"]
        out = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=300)
        (tmp / "stubs.cpp").unlink()
        return CompileInfo(compiler="g++", command=cmd, ok=out.returncode == 0,
                           diagnostics=out.stderr[-2000:])

    path, info = cache.get_or_build(key, build, artifact="libckdstubs.so")
    return path, "" if path is not None else f"the library stubs did not build: {info.diagnostics}"


def unfollowed(path: Path, *, stubbed: bool = False) -> tuple[str, str]:
    """(the copies of `path` the interposed runtime does not follow, the launches it cannot turn
    into no-ops), each said as a reason, '' when there are none. Read from what the program
    imports, not its text: a call the loader binds is one the program makes. A call hidden from
    the loader (dlsym, cudaGetDriverEntryPoint) only hurts its program: an upload the device-input
    run does not replace, or a launch the no-launch run does not stop, makes the outputs follow
    the host's inputs, or survive, which is what those runs reject."""
    found = linkage(path)
    if found.error:
        return found.error, found.error
    names = {_STREAM_SUFFIX.sub("", n) for n in found.imports}
    copies = sorted(n for n in names if _COPY.match(n) and n not in FOLLOWED_COPIES
                    and n not in HOSTLESS_COPIES)
    launches = sorted(n for n in names if _LAUNCH.match(n))
    # With the library stubs preloaded (`stubbed`), the libraries' compute calls are no-ops in
    # the no-launch run, as launches are: their kernels no longer run unseen.
    libraries = [] if stubbed else sorted(n for n in found.needed if _LAUNCHING_LIBRARY.match(n))
    copy_why = (f"the program copies through {', '.join(copies[:4])}"
                f"{' ...' if len(copies) > 4 else ''}, which the interposed runtime does not "
                "follow" if copies else "")
    what = [f"launches through {', '.join(launches[:4])}"] if launches else []
    what += [f"calls {', '.join(libraries[:4])}, which launch kernels inside themselves"] if libraries else []
    launch_why = (f"the program {' and '.join(what)}: the interposed runtime cannot turn those "
                  "launches into no-ops" if what else "")
    return copy_why, launch_why


INTERPOSER_FATAL_EXIT = 97
"""The interposed runtime's exit status when it cannot do what the validator asked (its
settings or inputs file unusable): `cuda_interposer.cpp` `fatal`."""


def _interposer_failure(outcome: RunOutcome, tag: str) -> str:
    """Why the interposed runtime stopped the run ('' when it did not).

    Its exit status and words alone are the program's to print too, and an `error` is no
    verdict: a wrong program would escape its zero (the RL service's reward is None). So the
    failure is ours only when its line carries `tag` (CUDASHIM_FATAL_TAG), which the interposer
    reads and forgets in its constructor, before any code of the program runs: the program
    never holds it (its environment is wiped, and its ancestors' are another uid's). Without
    the tag, exit 97 is the program's `runtime_error`."""
    if outcome.exit_code != INTERPOSER_FATAL_EXIT or not tag:
        return ""
    prefix = f"cuda_interposer[{tag}]: "
    line = next((ln for ln in outcome.stderr.splitlines() if ln.startswith(prefix)), "")
    return f"the interposed CUDA runtime failed: {line.removeprefix(prefix)}" if line else ""


SANITIZER_TOOLS = ("memcheck", "racecheck")
_SANITIZER_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) error")
_RACECHECK_SUMMARY = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")
SANITIZER_TIME_SCALE = float(os.environ.get("CKD_SANITIZER_TIME_SCALE", "20"))
"""A sanitizer run may take this many times a plain run's limits (its slowdown is 10-100x); past
them the engine judges the case by the plain run and says so (`fallback_variant`)."""


class CudaBackend(Backend):
    """nvcc + a real GPU."""

    name = "cuda"
    library_calls_are_host_code = False  # header-only ones (Thrust, CUB) launch through the runtime

    def __init__(self, *, options: NvccOptions | None = None, cache: BuildCache | None = None,
                 device: str | None = None, gpu_check: bool = True) -> None:
        self.options = options or NvccOptions()
        self.cache = cache
        self.device = device if device is not None else os.environ.get("CUDA_VISIBLE_DEVICES", "0")
        self.gpu_check = gpu_check
        """False only to run host-only programs on a GPU-less machine (tests of the engine)."""
        self._interposer: tuple[Path | None, str] | None = None
        self._stubs: dict[tuple[str, ...], Path | None] = {}
        self._fatal_tag = secrets.token_hex(16)
        """Tags the interposer's own failure (`_interposer_failure`); given only to the runs that
        can fail so (the kernel-work runs), whose programs load the interposer before their own
        code (`runtime_linkage`), so none of them can read it."""
        self._arch_configured = options is not None or "CKD_CUDA_ARCH" in os.environ
        """An operator's (or caller's) architecture is kept; otherwise the device's is used."""

    def available(self) -> str | None:
        try:
            nvcc_path()
        except NvccUnavailable as exc:
            return str(exc)
        if self._arch_configured and self.gpu_check:
            probe = probe_gpu()
            cap = probe.capability if probe.ok else None
            if cap is not None and not arch_runs_on(self.options.arch, cap):
                return (f"the configured architecture {self.options.arch} (CKD_CUDA_ARCH or the "
                        f"options) cannot run on this GPU ({probe.device}, compute capability "
                        f"{cap[0]}.{cap[1]}): use {device_arch(cap)} or leave it unset")
        return None

    def arch(self) -> str:
        """The architecture builds target: the configured one, else the device's (the default
        architecture where no GPU answers)."""
        if self._arch_configured or not self.gpu_check:
            return self.options.arch
        probe = probe_gpu()
        cap = probe.capability if probe.ok else None
        return device_arch(cap) if cap is not None else self.options.arch

    def runtime_paths(self) -> tuple[str, ...]:
        # The driver connects to the MPS control socket at initialisation (ENOENT in the
        # sandbox's private /tmp when no daemon is exposed): the driver's, not the program's.
        pipe = os.environ.get("CUDA_MPS_PIPE_DIRECTORY", MPS_PIPE_DEFAULT).rstrip("/") + "/"
        return tuple(dict.fromkeys([pipe, MPS_PIPE_DEFAULT + "/", *DRIVER_CONFIG]))

    def runtime_reads(self) -> tuple[str, ...]:
        return DRIVER_HOME_READS

    def runtime_removes(self) -> tuple[str, ...]:
        return DRIVER_DEVICE_LINKS

    def gpu(self) -> GpuProbe:
        return probe_gpu()

    def build(self, program: Program, defines: dict[str, int], *, variant: str = "plain") -> Executable:
        options = self.options
        if options.arch != self.arch():
            options = dataclasses.replace(options, arch=self.arch())
        if self.include_dirs:
            options = dataclasses.replace(
                options, include_dirs=tuple(dict.fromkeys([*options.include_dirs, *self.include_dirs])))
        path, info = compile_program(program, defines, options=options, cache=self.cache)
        return Executable(path=path, compile=info, backend=self.name, variant=variant)

    def command(self, exe: Executable, args: list[str], *, schedule: str = "default"
                ) -> tuple[list[str], dict[str, str]]:
        # The JIT cache would live in $HOME, the work folder: files the program did not write.
        env = {"CUDA_VISIBLE_DEVICES": self.device, "CUDA_CACHE_DISABLE": "1"}
        drivers = driver_lib_dirs()
        if drivers:
            env["LD_LIBRARY_PATH"] = ":".join(str(d) for d in drivers)
        argv = [str(exe.path), *args]
        if exe.variant in SANITIZER_TOOLS:
            sanitizer = shutil.which("compute-sanitizer") or "compute-sanitizer"
            argv = [sanitizer, "--tool", exe.variant, "--error-exitcode", "86", *argv]
        return argv, env

    def interposer(self) -> tuple[Path | None, str]:
        if self._interposer is None:
            self._interposer = interposer_library(self.cache)
        return self._interposer

    def preloads(self, exe: Executable) -> list[Path]:
        # Every run, not only the kernel-work one: a program cannot tell them apart by what the
        # loader mapped. Without settings the interposer only forwards each call.
        path, _ = self.interposer()
        if path is None:
            return []
        stubs = self._library_stubs(exe)
        return [path, stubs] if stubs is not None else [path]

    def _library_stubs(self, exe: Executable) -> Path | None:
        """Built once per executable: every run of a check asks (`preloads`)."""
        if exe.path is None:
            return None
        names = tuple(library_compute_calls(exe.path))
        if not names:
            return None
        if names not in self._stubs:
            self._stubs[names] = library_stubs(list(names), self.cache)[0]
        return self._stubs[names]

    def kernel_work_unusable(self, exe: Executable) -> str:
        path, why = self.interposer()
        if path is None:
            return why
        if exe.path is None:
            return "no executable"
        return runtime_linkage(exe.path)

    def kernel_work_limits(self, exe: Executable) -> tuple[str, str]:
        if exe.path is None:
            return "", ""
        return unfollowed(exe.path, stubbed=self._library_stubs(exe) is not None
                          or not library_compute_calls(exe.path))

    def no_launch_env(self) -> dict[str, str] | None:
        return _padded({"CUDASHIM_NO_LAUNCH": "1"})

    def timing_env(self, log_file: str) -> dict[str, str] | None:
        return _padded({"CUDASHIM_KERNEL_TIMING": log_file})

    def run_timing_env(self, log_file: str) -> dict[str, str] | None:
        return _padded({"CUDASHIM_RUN_TIMING": log_file})

    def upload_log_env(self) -> dict[str, str] | None:
        return _padded({"CUDASHIM_LOG_UPLOADS": "1"})

    def kernel_inputs_env(self, inputs_file: str, log_file: str) -> dict[str, str] | None:
        return _padded({"CUDASHIM_KERNEL_INPUTS": inputs_file,
                        "CUDASHIM_KERNEL_INPUTS_LOG": log_file,
                        "CUDASHIM_FATAL_TAG": self._fatal_tag})

    def variants(self, *, thorough: bool = True) -> list[str]:
        if thorough and shutil.which("compute-sanitizer") and probe_gpu().ok:
            return ["plain", *SANITIZER_TOOLS]
        return ["plain"]

    def sandbox_overrides(self, exe: Executable) -> dict[str, object]:
        # The CUDA driver reserves a very large virtual address range (unified addressing):
        # an address-space limit breaks every GPU program.
        over: dict[str, object] = {"memory_bytes": None, "gpu": self.device}
        if exe.variant in SANITIZER_TOOLS:
            over["loopback"] = True  # the sanitizer talks to its target over 127.0.0.1
        return over

    def time_scale(self, exe: Executable) -> float:
        return SANITIZER_TIME_SCALE if exe.variant in SANITIZER_TOOLS else 1.0

    def expose(self, exe: Executable) -> list[Path]:
        # argv[0] is compute-sanitizer: the program it runs must be visible too.
        seen = [exe.path.parent] if exe.variant in SANITIZER_TOOLS and exe.path is not None else []
        return [*seen, *driver_lib_dirs()]

    def kernel_work_variant(self, built: list[str]) -> str:
        # A sanitizer run is compute-sanitizer's process, which loads its target with its own
        # injection: the interposed runtime never sees the target's copies and launches, so the
        # check would find nothing uploaded and call every program host-computed (seen on an
        # H100: every built-in task rejected when checked thoroughly).
        plain = [v for v in built if v not in SANITIZER_TOOLS]
        return plain[-1] if plain else built[-1]

    def fallback_variant(self, variant: str) -> str | None:
        return "plain" if variant in SANITIZER_TOOLS else None

    def classify(self, exe: Executable, outcome: RunOutcome) -> Verdict:
        ours = _interposer_failure(outcome, self._fatal_tag)
        if ours:  # our runtime stopped the program: no verdict on it, and no sign its kernels matter
            return Verdict(Status.ERROR, ours)
        if self.gpu_check:
            probe = probe_gpu()
            if not probe.ok:
                return Verdict(Status.NEEDS_GPU, probe.reason())
        text = outcome.stdout + "\n" + outcome.stderr
        sig = next((s for s in NO_GPU_SIGNATURES if s in text), None)
        if sig and self.gpu_check:
            # A GPU answered the probe, so the text is the program's word against it: printed
            # to dodge a rejection, or a GPU lost since. Ask again (not from the cache).
            probe_gpu.cache_clear()
            again = probe_gpu()
            if not again.ok:
                return Verdict(Status.NEEDS_GPU, f"the GPU stopped answering: {again.reason()}")
            return Verdict(Status.RUNTIME_ERROR, (
                f"the program reported {sig}, but a GPU answers ({again.device}): a failure of "
                f"the program, not a missing GPU"))
        if exe.variant == "racecheck":
            r = _RACECHECK_SUMMARY.search(text)
            if r and int(r.group(2)) > 0:
                first = next((ln.strip("= ").strip() for ln in text.splitlines()
                              if ln.startswith("========= ") and "hazard" in ln.lower()
                              and "SUMMARY" not in ln), "")
                return Verdict(Status.FAILED, (f"race (compute-sanitizer racecheck): "
                                               f"{r.group(2)} hazard error(s): {first}")[:500])
        if exe.variant in SANITIZER_TOOLS:
            m = _SANITIZER_SUMMARY.search(text)
            if m and int(m.group(1)) > 0:
                first = next((ln.strip("= ").strip() for ln in text.splitlines()
                              if ln.startswith("========= ") and ln.strip("= ").strip()
                              and "ERROR SUMMARY" not in ln), "")
                return Verdict(Status.RUNTIME_ERROR,
                               f"compute-sanitizer {exe.variant}: {m.group(1)} error(s): {first}"[:500])
        return super().classify(exe, outcome)
