"""Building CUDA programs with g++ against the cudashim headers.

The runtime (`runtime/cudashim_runtime.cpp`) and a precompiled header of the shim are built once
per variant and shim version under the cache root, then every program compiles as one rewritten
translation unit linked with the runtime object.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import posixpath
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from .device_semantics import bit_field_names
from .lockstep import COPY_PREFIX
from .rewrite import RewriteResult, copy_errors, program_identity_macros, rewrite, waiting_elsewhere

HERE = Path(__file__).resolve().parent
INCLUDE_DIR = HERE / "include"
# The C units' headers: the runtime API's C face, whose functions runtime/c_api.cpp exports.
INCLUDE_C_DIR = HERE / "include_c"
RUNTIME_SOURCE = HERE / "runtime" / "cudashim_runtime.cpp"
C_API_SOURCE = HERE / "runtime" / "c_api.cpp"
THRUST_CUDA_POLICY = INCLUDE_DIR / "thrust" / "system" / "cuda" / "execution_policy.h"
VARIANTS = ("plain", "asan", "race")

_COMMON = ["-std=c++20", "-pthread", "-fno-strict-aliasing", "-w"]
_FLAGS = {
    "plain": ["-O2", *_COMMON],
    # -O1 keeps ASan reports readable and builds fast; frame pointers give whole stack traces.
    # -g1 (line tables) is all a report's `file:line in function` needs, at less build time.
    "asan": [
        "-O1",
        "-g1",
        "-fsanitize=address",
        "-fno-omit-frame-pointer",
        "-DCUDASHIM_ASAN",
        *_COMMON,
    ],
    # The plain build plus GCC's ThreadSanitizer instrumentation, whose entry points the runtime
    # itself provides (runtime/race_detector.h): no ThreadSanitizer runtime is linked.
    "race": ["-O2", "-g1", "-DCUDASHIM_RACE", *_COMMON],
}
# Instrumentation for the program (and its PCH), never for the runtime that implements the hooks.
_INSTRUMENT = {
    "race": [
        "-fsanitize=thread",
        "--param=tsan-distinguish-volatile=1",
        "--param=tsan-instrument-func-entry-exit=0",
    ],
}
# Headers most programs include after the shim; precompiling them is most of the saving.
_PCH_EXTRA = [
    "<vector>",
    "<iostream>",
    "<random>",
    "<string>",
    "<chrono>",
    "<numeric>",
    "<functional>",
]


class ToolchainError(RuntimeError):
    """g++ is missing or the shim itself does not build (a bug here, not in the program)."""


def cache_root() -> Path:
    return Path(os.environ.get("CKD_CACHE_DIR", Path.home() / ".cache" / "cuda-kernel-data"))


@lru_cache(maxsize=1)
def gxx() -> str:
    exe = os.environ.get("CKD_CXX") or shutil.which("g++")
    if not exe:
        raise ToolchainError(
            "g++ not found on PATH (the CPU backend compiles with g++ 12 or newer)"
        )
    return exe


def gcc() -> str:
    """The C compiler beside g++ (`.c` units of a program of several files)."""
    cxx = gxx()
    if os.path.basename(cxx).endswith("g++"):
        cc = cxx[: -len("g++")] + "gcc"
        if os.path.exists(cc):
            return cc
    return shutil.which("gcc") or cxx


_C_FLAG = re.compile(r"^-(D\w|U\w|I|iquote.|O[0-3s]?$|fopenmp$|pthread$|ffile-prefix-map=)")


def _c_flags(flags: list[str]) -> list[str]:
    """The program's host flags that mean the same to the C compiler (not -std=c++20)."""
    return [f for f in flags if _C_FLAG.match(f)]


def c_unit_flags(variant: str) -> list[str]:
    """What a C unit is compiled with in `variant`: the checking of the program's C++ units
    (ASan and its frame pointers, the race build's instrumentation, their -O level and line
    tables), less the C++ standard and the ISA level: a .c file is host code, which nvcc hands
    to the host compiler at its default target, so it contracts no FMA that a GPU machine's
    build would not."""
    isa = set(isa_flags())
    return [f for f in program_flags(variant) if not f.startswith("-std=") and f not in isa]


@lru_cache(maxsize=1)
def gxx_version() -> str:
    out = subprocess.run([gxx(), "-dumpfullversion"], capture_output=True, text=True, check=False)
    return out.stdout.strip() or "unknown"


@lru_cache(maxsize=1)
def shim_version() -> str:
    """Digest of everything that changes what a program builds into."""
    h = hashlib.sha256()
    headers = [f for ext in ("*.h", "*.cuh", "*.hpp") for f in INCLUDE_DIR.rglob(ext)]
    runtime = sorted((HERE / "runtime").glob("*.h")) + [C_API_SOURCE]
    headers += INCLUDE_C_DIR.glob("*.h")
    rewriting = [HERE / n for n in ("rewrite.py", "lockstep.py", "syntax.py", "device_semantics.py",
                                      "warp_exchange.py")]
    files = sorted(headers) + [RUNTIME_SOURCE, *runtime, *rewriting, HERE.parent / "analysis" / "launch_spans.py",
                               Path(__file__)]
    for f in files:
        h.update(str(f.relative_to(HERE.parent)).encode() + b"\0" + f.read_bytes() + b"\0")
    h.update(gxx_version().encode())
    h.update(b"\0isa:" + " ".join(isa_flags()).encode())
    return h.hexdigest()[:16]


# x86-64-v3 (Haswell and later): AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE. /proc/cpuinfo names.
_V3_FLAGS = {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}


@lru_cache(maxsize=1)
def isa_level() -> str:
    """`x86-64-v3` when this CPU has it, else `x86-64` (the portable baseline).

    `CKD_CPU_ISA=x86-64|x86-64-v3` forces one; `none` builds as before this existed (no
    `-march`, no contraction), for side-by-side measurements. Part of `shim_version`, hence of every build's
    cache key: a cache shared by machines of different kinds never hands one a binary built for
    the other."""
    forced = os.environ.get("CKD_CPU_ISA")
    if forced:
        if forced not in ("x86-64", "x86-64-v3", "none"):
            raise ValueError(f"CKD_CPU_ISA={forced!r}: expected x86-64, x86-64-v3 or none")
        return forced
    if platform.machine() not in ("x86_64", "AMD64"):
        return ""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "x86-64"
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    have = set(line.split(":", 1)[-1].split())
    return "x86-64-v3" if _V3_FLAGS <= have else "x86-64"


def isa_flags() -> list[str]:
    """`-march` for the ISA level, and FMA contraction: nvcc contracts `a*b+c` into an FMA by
    default (`--fmad=true`), so contracting is the faithful choice, and with v3 it makes
    `fmaf` an instruction instead of a libm call and lets loops vectorise."""
    level = isa_level()
    if level == "none":
        return []
    # GCC forms FMAs in a pass that -O1 skips unless -fexpensive-optimizations is on: with it,
    # the -O1 ASan build contracts like the -O2 plain build, and both variants compute the same
    # bits (a program that prints its results must print the same text under both).
    return ([f"-march={level}"] if level else []) + ["-ffp-contract=fast", "-fexpensive-optimizations"]


def flags(variant: str) -> list[str]:
    """The runtime's flags for `variant` (`program_flags` adds the program's instrumentation)."""
    if variant not in _FLAGS:
        raise ValueError(
            f"unknown CPU build variant {variant!r} (expected one of {', '.join(VARIANTS)})"
        )
    return [*_FLAGS[variant], *isa_flags()]


# Macros that name the race build are the runtime's business: a program that saw them could use
# atomics in that build only and race everywhere else. Its translation unit gets the plain
# build's macros (the instrumentation's own `__SANITIZE_THREAD__` undefined), and the headers ask
# the runtime (`cudashim::race_build()`) where they must differ.
_HIDDEN_FROM_PROGRAM = {"race": ("-DCUDASHIM_RACE", ["-U__SANITIZE_THREAD__"])}


# The race build's program at -O1: its run is one per check and its cost is the detector's
# hooks, called on every access either way, so -O2 bought run time nobody sees while doubling its
# compile (0.9 CPU-s to 0.45 for a built-in task). The runtime, which holds the detector, keeps
# -O2. -fexpensive-optimizations (isa_flags) keeps FMA contraction, so the bits are the plain
# build's, as for the -O1 ASan build. Not for torch extension units: GCC 12 crashes (an internal
# compiler error in its IPA constant propagation) on torch's headers at -O1 with this
# instrumentation, and a race build that does not compile loses the race check.
_PROGRAM_OPT = {"race": "-O1"}


def program_flags(variant: str, *, torch_unit: bool = False) -> list[str]:
    hidden, undefine = _HIDDEN_FROM_PROGRAM.get(variant, ("", []))
    opt = None if torch_unit else _PROGRAM_OPT.get(variant)
    kept = [opt if opt and f.startswith("-O") else f for f in flags(variant) if f != hidden]
    return [*kept, *_INSTRUMENT.get(variant, []), *undefine]


@cache
def link_flags() -> list[str]:
    """GNU gold, where the toolchain has it and it links a program: a program's link (the
    runtime's object, the program's, libstdc++) takes 0.02 s of CPU with it against 0.08 s with
    the default BFD linker, and a thorough check links three programs per case size. Where gold
    is missing (newer binutils deprecate it) or fails, the default linker, unchanged."""
    if shutil.which("ld.gold") is None:
        return []
    with tempfile.TemporaryDirectory(prefix="ckd-gold-") as d:
        src = Path(d) / "probe.cpp"
        src.write_text("#include <cstdio>\nint main() { std::puts(\"ok\"); }\n")
        try:
            done = subprocess.run([gxx(), "-fuse-ld=gold", "-pthread", str(src), "-o", str(Path(d) / "probe")],
                                  capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return []
        return ["-fuse-ld=gold"] if done.returncode == 0 else []


def _shim_dir(variant: str) -> Path:
    """Where the runtime object and the precompiled header of `variant` are built, once per shim
    version: `$CKD_SHIM_DIR` (several caches can share one; the test suite does), by default
    `$CKD_CACHE_DIR/cpu-shim`."""
    root = os.environ.get("CKD_SHIM_DIR")
    return (Path(root) if root else cache_root() / "cpu-shim") / shim_version() / variant


def _locked_build(target: Path, build) -> Path:
    """Build `target` once across processes (flock), atomically renamed into place."""
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            build(target)
    return target


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ToolchainError(f"building {what} failed:\n{' '.join(cmd)}\n{proc.stderr[-4000:]}")


def runtime_object(variant: str) -> Path:
    def build(target: Path) -> None:
        tmp = target.with_suffix(f".tmp{os.getpid()}.o")
        _run(
            [gxx(), *flags(variant), f"-I{INCLUDE_DIR}", "-c", str(RUNTIME_SOURCE), "-o", str(tmp)],
            "the cudashim runtime",
        )
        tmp.replace(target)

    return _locked_build(_shim_dir(variant) / "cudashim_runtime.o", build)


def pch_header(variant: str) -> Path:
    """The header every program is compiled with (`-include`), next to its `.gch`."""

    def build(target: Path) -> None:
        work = Path(tempfile.mkdtemp(dir=target.parent))
        header = work / "cudashim_pch.h"
        lines = ["#include <cuda_runtime.h>"] + [f"#include {h}" for h in _PCH_EXTRA]
        header.write_text("\n".join(lines) + "\n")
        _run(
            [
                gxx(),
                *program_flags(variant),
                f"-I{INCLUDE_DIR}",
                "-x",
                "c++-header",
                str(header),
                "-o",
                str(work / "cudashim_pch.h.gch"),
            ],
            "the cudashim precompiled header",
        )
        for name in ("cudashim_pch.h.gch", "cudashim_pch.h"):
            (work / name).replace(target.parent / name)
        work.rmdir()

    return _locked_build(_shim_dir(variant) / "cudashim_pch.h", build)


@cache
def pch_macros(variant: str) -> frozenset[str]:
    """The macro names the precompiled headers define (`g++ -dM -E`), listed once per shim
    version beside the `.gch`."""
    header = pch_header(variant)

    def build(target: Path) -> None:
        proc = subprocess.run(
            [gxx(), *program_flags(variant), f"-I{INCLUDE_DIR}", "-x", "c++", "-dM", "-E",
             str(header)], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise ToolchainError(f"listing the precompiled header's macros failed:\n"
                                 f"{proc.stderr[-4000:]}")
        names = sorted({ln.split()[1].split("(")[0] for ln in proc.stdout.splitlines()
                        if ln.startswith("#define ")})
        tmp = target.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text("\n".join(names) + "\n")
        tmp.replace(target)

    listed = _locked_build(header.parent / "cudashim_pch.macros", build)
    return frozenset(listed.read_text().split())


CASE_DEFINES = "cudashim_defines.h"
"""The forced include that carries a build's -D sizes after the precompiled header."""


def _defines_after_pch(defines: dict[str, int | str], variant: str) -> dict[str, int | str]:
    """The defines that can follow the precompiled header instead of the command line.

    GCC refuses a PCH when a command-line macro names any identifier the PCH saw (a size `N`
    does: template parameters), and then silently parses every header again: three times the
    build. Defined after the PCH, a size reaches the program exactly as `-D` would, since the
    shim's headers never read a task's size macros; a name the headers themselves define as a
    macro stays on the command line, where it meets that definition as under nvcc."""
    if not DEFINES_AFTER_PCH or not defines:
        return {}
    taken = pch_macros(variant)
    return {k: v for k, v in defines.items() if k not in taken}


MAX_RUNTIME_SIZES = 16
"""As many as the runtime's `cudashim_case_sizes` holds."""
_INT = re.compile(r"-?\d+\Z")


def runtime_sizes(defines: dict[str, int | str], variant: str) -> dict[str, str] | None:
    """The C++ type of each size macro when every define can be read at run time instead of
    being compiled in (the same build then serves every case of a task), else None.

    Only integer values, each macro standing for an rvalue of the type its literal would have
    (`int`, or `long` past INT_MAX), read from `cudashim_case_sizes`, which the runtime fills
    from CUDASHIM_SIZES before any code of the program runs. A program that needs a size as a
    constant (an array bound at file scope or in shared memory, a template argument, `#if`,
    `static_assert`, `constexpr`) does not compile so, and is built with the values instead."""
    if not RUNTIME_SIZES or not defines or len(defines) > MAX_RUNTIME_SIZES:
        return None
    if set(defines) & pch_macros(variant):
        return None
    types = {}
    for k, v in defines.items():
        text = str(v).strip()
        if not _INT.match(text):
            return None
        types[k] = "int" if abs(int(text)) <= 2**31 - 1 else "long"
    return dict(sorted(types.items()))


def runtime_sizes_env(defines: dict[str, int | str]) -> str:
    """CUDASHIM_SIZES for a build with run-time sizes: the values in the order of their names."""
    return ",".join(str(int(str(defines[k]).strip())) for k in sorted(defines))


RUNTIME_SIZES = os.environ.get("CKD_RUNTIME_SIZES", "1") != "0"
"""`CKD_RUNTIME_SIZES=0` compiles every case's sizes in (for side-by-side measurements)."""

DEFINES_AFTER_PCH = True
"""False puts every define on the command line (how builds were made before; the cost
benchmark, benchmarks/bench_check_cost.py, compares the two)."""


@dataclass
class CommandResult:
    returncode: int | None
    output: str
    timed_out: bool = False


Runner = Callable[[list[str], Path, list[Path]], CommandResult]
"""Runs a compiler command in a directory, given the outside paths it must read."""


def run_local(cmd: list[str], cwd: Path, expose: list[Path]) -> CommandResult:
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, check=False, timeout=300
        )
    except subprocess.TimeoutExpired:
        return CommandResult(None, "g++ timed out after 300s", timed_out=True)
    return CommandResult(proc.returncode, proc.stderr + proc.stdout)


def _toolkit_headers(env: str, folder: str, marker: str) -> Path | None:
    """A folder of the CUDA toolkit's headers: `$env`, else `folder` in the include root beside
    the nvcc on PATH, else under /usr/local/cuda; the first that holds `marker`."""
    cands = [os.environ.get(env, "")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        cands.append(str(Path(nvcc).resolve().parent.parent / "include" / folder))
    cands.append(f"/usr/local/cuda/include/{folder}")
    return next((Path(c) for c in cands if c and (Path(c) / marker).is_file()), None)


@lru_cache(maxsize=1)
def toolkit_include_dir() -> Path | None:
    """The CUDA toolkit's include root (`cuda_runtime_api.h`), when installed."""
    return _toolkit_headers("CKD_CUDA_INCLUDE_DIR", "", "cuda_runtime_api.h")


@lru_cache(maxsize=1)
def cccl_dir() -> Path | None:
    """The CCCL headers (Thrust) shipped with the CUDA toolkit, when installed."""
    return _toolkit_headers("CKD_CCCL_DIR", "cccl", "thrust/version.h")


NVTX_LEGACY = ("nvToolsExt.h", "nvToolsExtCuda.h", "nvToolsExtCudaRt.h", "nvToolsExtSync.h")
"""The NVTX headers' pre-v3 names (the toolkit's include root, before CUDA 12), forwarded to v3."""


@lru_cache(maxsize=1)
def _toolkit_nvtx() -> Path | None:
    return _toolkit_headers("CKD_NVTX_DIR", "nvtx3", "nvToolsExt.h")


def nvtx_dir() -> Path | None:
    """A folder holding the toolkit's NVTX v3 headers (`nvtx3/`, copied once per cache) and the
    legacy names forwarding to them; None without a toolkit. NVTX is header-only and does nothing
    unless a profiler injects itself (`NVTX_INJECTION64_PATH`), on a GPU as here: its ranges and
    marks are no-ops, not a GPU feature. Only this folder is added (after the shim's and the
    system's headers), not the toolkit's whole include root, whose other headers are GPU code.
    Looked up on each build (one stat when present): a cache emptied meanwhile gets a new copy."""
    src = _toolkit_nvtx()
    if src is None:
        return None
    digest = hashlib.sha256(str(src.resolve()).encode()).hexdigest()[:12]
    target = cache_root() / "toolkit-nvtx" / digest
    if (target / "nvtx3" / "nvToolsExt.h").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".nvtx-", dir=target.parent))
    try:
        shutil.copytree(src, tmp / "nvtx3")
        for name in NVTX_LEGACY:
            (tmp / name).write_text(f"#pragma once\n#include <nvtx3/{name}>\n")
        for p in [tmp, *tmp.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)  # the build sandbox's uid reads it
        os.rename(tmp, target)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not (target / "nvtx3" / "nvToolsExt.h").is_file():
            return None
    return target


# Headers that build as host code in library mode (`thrust_flags`): Thrust's, and libcu++'s that
# the toolkit's CCCL or the shim's own headers provide (`cuda/std/*`, `cuda::atomic`, the
# synchronisation objects). The shim's own CUB needs no library mode.
LIBCUXX_INCLUDE = re.compile(
    r'^\s*#\s*include\s*[<"]cuda/(?:std/|atomic\b|functional\b|type_traits\b|cmath\b|utility\b'
    r'|limits\b|barrier\b|latch\b|semaphore\b)', re.M)
_THRUST_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]thrust/', re.M)


def uses_host_library(text: str) -> bool:
    """Whether a unit includes Thrust or libcu++ headers, which need library mode."""
    return bool(_THRUST_INCLUDE.search(text) or LIBCUXX_INCLUDE.search(text))


def thrust_flags() -> list[str]:
    """Flags that run Thrust on the host (its CPP device system) against the shim."""
    cccl = cccl_dir()
    if cccl is None:
        return []
    return [
        "-DCUDASHIM_HOST_LIBRARY_MODE",
        # Our cuda_fp16.h/cuda_bf16.h are not NVIDIA's: keep libcu++ from relying on theirs.
        "-DCCCL_DISABLE_FP16_SUPPORT",
        "-DCCCL_DISABLE_BF16_SUPPORT",
        "-DCCCL_DISABLE_NVFP8_SUPPORT",
        "-DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP",
        "-DTHRUST_HOST_SYSTEM=THRUST_HOST_SYSTEM_CPP",
        "-idirafter",
        str(cccl),
        # Thrust's device system, the shim's own (thrust::system::cuda over the CPP system's
        # algorithms), with thrust::cuda::par / par_nosync (.on(stream)).
        "-include",
        str(THRUST_CUDA_POLICY),
    ]


def shim_paths(variant: str) -> list[Path]:
    """Directories a program build reads besides the system: the headers and the built shim."""
    cccl, nvtx = cccl_dir(), nvtx_dir()
    return [INCLUDE_DIR, INCLUDE_C_DIR, _shim_dir(variant), *([cccl.resolve()] if cccl else []),
            *([nvtx] if nvtx else [])]


@dataclass
class CompileOutcome:
    ok: bool
    exe: Path | None
    command: list[str]
    diagnostics: str
    seconds: float
    rewrite: RewriteResult | None = None
    timed_out: bool = False
    compiler_crashed: bool = False
    """g++ itself failed (an internal compiler error) at every optimisation level tried: no
    verdict on the program, which nvcc's own front end may well build."""
    ice: bool = False
    """A step ended with GCC's own exit status for an internal compiler error."""


_CHANGES_MEANING = re.compile(r"\berror: declaration of .* changes meaning of .*\[-fpermissive\]")
_ERROR = re.compile(r"\berror:")


def only_changes_meaning(diagnostics: str) -> bool:
    """Whether g++'s every error in `diagnostics` is a declaration in a class that changes the
    meaning of a name the class used (the shim's own notes aside), and there is one."""
    errors = [ln for ln in diagnostics.splitlines()
              if _ERROR.search(ln) and not ln.startswith(("cudashim rewrite:", "cudashim:"))]
    return bool(errors) and all(_CHANGES_MEANING.search(ln) for ln in errors)


# GCC's own failure, not the program's: "internal compiler error: Segmentation fault" (GCC 12
# crashes in IPA constant propagation on some sources at -O3 with AddressSanitizer). Told by the
# exit status alone: with -pass-exit-codes the driver passes on its compiler's ICE_EXIT_CODE (4),
# where any error of the program's is 1. The text is the program's to forge (a `static_assert`
# or `#error` message, a `#line` file name), and a forged crash was blamed on the validator.
_PASS_EXIT_CODES = "-pass-exit-codes"
_ICE_EXIT_CODE = 4
_COMPILER_CRASH = re.compile(r"internal compiler error")


def compile_program(
    source: str,
    out_dir: Path,
    *,
    defines: dict[str, int | str] | None = None,
    variant: str = "plain",
    filename: str = "main.cu",
    extra_flags: list[str] | None = None,
    use_pch: bool = True,
    thrust: bool = False,
    runner: Runner = run_local,
    files: dict[str, str] | None = None,
    units: list[str] | None = None,
    runtime: dict[str, str] | None = None,
) -> CompileOutcome:
    """Rewrite and compile `source` into `out_dir/prog`; never raises for a bad program.

    `runtime` (from `runtime_sizes`): the defines are names read at run time, of these types,
    rather than values (`defines` is then unused).

    A program of several files (`files`: text by folder-relative path; `units`: the translation
    units among them, in order; `source` is then unused) is laid out in `out_dir` as in its
    folder, every file rewritten, so a quoted include next to its includer and a relative `-I`
    (resolved from `out_dir`) find the rewritten header first; each unit is its own translation
    unit, built with the flags a one-file program gets, and all are linked once with the runtime.

    `runner` runs g++ (the default: a plain subprocess; the backend passes the sandbox). A build
    whose errors fall in a generated lockstep copy (lockstep.py) is redone without the copies:
    the copy is an optimisation, and the program must build exactly when it would without it.
    A build whose every error is a class member changing the meaning of its name, which nvcc
    accepts, is redone with -fpermissive (`only_changes_meaning`)."""
    started = time.perf_counter()
    outcome = _compile(source, out_dir, defines=defines, variant=variant, filename=filename,
                       extra_flags=extra_flags, use_pch=use_pch, thrust=thrust, runner=runner,
                       lockstep=True, files=files, units=units, runtime=runtime)
    copies = True
    if not outcome.ok and not outcome.timed_out and outcome.rewrite is not None \
            and outcome.rewrite.lockstep and (COPY_PREFIX in outcome.diagnostics or
                                              copy_errors(outcome.diagnostics, outcome.rewrite.lockstep_lines)):
        first = next((ln for ln in outcome.diagnostics.splitlines() if "error" in ln), "")
        copies = False
        outcome = _compile(source, out_dir, defines=defines, variant=variant, filename=filename,
                           extra_flags=extra_flags, use_pch=use_pch, thrust=thrust, runner=runner,
                           lockstep=False, files=files, units=units, runtime=runtime)
        note = f"cudashim rewrite: lockstep copies left out, one did not compile ({first.strip()})"
        outcome.diagnostics = note + "\n" + outcome.diagnostics
        if outcome.rewrite is not None:
            outcome.rewrite.warnings.append(note)
    if not outcome.ok and not outcome.timed_out and only_changes_meaning(outcome.diagnostics):
        # nvcc's front end accepts a class member that changes what its name meant in the class
        # (`using cfg = cfg<int, float>;`, `Color Color;`); g++ only with -fpermissive, which would
        # also let through what nvcc rejects (`int* p = (void*)q;`), so only for a build whose
        # every error is one of these: the front end saw every other error of the units it built.
        flagged = [*(extra_flags or []), "-fpermissive"]
        again = _compile(source, out_dir, defines=defines, variant=variant, filename=filename,
                         extra_flags=flagged, use_pch=use_pch, thrust=thrust, runner=runner,
                         lockstep=copies, files=files, units=units, runtime=runtime)
        if again.ok or again.ice:  # a crash: tried again below
            first = next(ln for ln in outcome.diagnostics.splitlines() if _CHANGES_MEANING.search(ln))
            note = f"cudashim: built with -fpermissive, as nvcc accepts it ({first.strip()[:200]})"
            again.diagnostics = note + "\n" + again.diagnostics
            if again.rewrite is not None:
                again.rewrite.warnings.append(note)
            outcome, extra_flags = again, flagged
    if not outcome.ok and not outcome.timed_out and outcome.ice:
        # A compiler crash is in an optimisation pass almost always: the same sources at -O0
        # build what the program means. Only when that crashes too is there no build at all.
        crash = next((ln.strip() for ln in outcome.diagnostics.splitlines()
                      if _COMPILER_CRASH.search(ln)), f"exit status {_ICE_EXIT_CODE}")
        unoptimised = [f for f in (extra_flags or []) if not f.startswith("-O")] + ["-O0"]
        outcome = _compile(source, out_dir, defines=defines, variant=variant, filename=filename,
                           extra_flags=unoptimised, use_pch=use_pch, thrust=thrust,
                           runner=runner, lockstep=True, files=files, units=units,
                           runtime=runtime)
        if outcome.ok:
            outcome.diagnostics = (f"cudashim: g++ crashed ({crash[:200]}); built again at -O0\n"
                                   + outcome.diagnostics)
        else:
            outcome.compiler_crashed = outcome.ice
    outcome.seconds = time.perf_counter() - started
    return outcome


_HEADER_SUFFIXES = frozenset({".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc", ".tcc", ".ipp"})
_MAX_INCLUDE_COPY_FILES = 2000
_MAX_INCLUDE_COPY_BYTES = 32 << 20


def _program_include_copies(flags: list[str], out_dir: Path) -> list[str]:
    """Library mode (Thrust): the program's own files name nvcc's identity macros by the shim's
    stand-ins (`program_identity_macros`), so that Thrust's headers see a host compiler and the
    program sees nvcc. An include folder of the program's outside its own (cuda-samples'
    `-I../../../Common`) was read as it is, so its `#ifndef __CUDACC__` branch (helper_math.h's
    host `max` and `rsqrtf`) was taken and redefined the shim's. Such a folder's headers are
    copied into the build with the macros renamed, and `-I` points to the copy; the CUDA
    toolkit's and the system's folders, and a folder too large to copy, are left as they are."""
    out, i, copies = [], 0, 0
    while i < len(flags):
        flag = flags[i]
        if flag == "-I" and i + 1 < len(flags):
            folder, taken = flags[i + 1], 2
        elif flag.startswith("-I") and len(flag) > 2:
            folder, taken = flag[2:], 1
        else:
            out.append(flag)
            i += 1
            continue
        copy = _renamed_copy(Path(folder), out_dir / f"cudashim_inc{copies}")
        if copy is not None:
            copies += 1
            out.append(f"-I{copy}")
        else:
            out.extend(flags[i:i + taken])
        i += taken
    return out


def _renamed_copy(folder: Path, target: Path) -> Path | None:
    if not folder.is_absolute() or not folder.is_dir():
        return None
    real = folder.resolve()
    system = [Path("/usr/include"), Path("/usr/local/include"), INCLUDE_DIR]
    toolkit = toolkit_include_dir()
    if toolkit is not None:
        system.append(toolkit.resolve().parent)
    if any(real == s or s in real.parents for s in system):
        return None
    headers, size = [], 0
    for path in real.rglob("*"):
        if path.suffix.lower() in _HEADER_SUFFIXES and path.is_file():
            headers.append(path)
            size += path.stat().st_size
            if len(headers) > _MAX_INCLUDE_COPY_FILES or size > _MAX_INCLUDE_COPY_BYTES:
                return None
    for path in headers:
        dest = target / path.relative_to(real)
        dest.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        dest.write_bytes(program_identity_macros(text).encode("utf-8", "surrogateescape"))
    return target


def _compile(
    source: str,
    out_dir: Path,
    *,
    defines: dict[str, int | str] | None,
    variant: str,
    filename: str,
    extra_flags: list[str] | None,
    use_pch: bool,
    thrust: bool,
    runner: Runner,
    lockstep: bool,
    files: dict[str, str] | None = None,
    units: list[str] | None = None,
    runtime: dict[str, str] | None = None,
) -> CompileOutcome:
    started = time.perf_counter()
    out_dir.mkdir(parents=True, exist_ok=True)
    library = thrust_flags() if thrust else []
    if units:
        rw = _write_project(files or {}, out_dir, lockstep, library_mode=bool(library))
        sources = list(units)
    else:
        rw = rewrite(source, filename=filename, lockstep=lockstep)
        src_path = out_dir / filename
        text = program_identity_macros(rw.text) if library else rw.text
        src_path.write_text(text, encoding="utf-8", errors="surrogatepass")
        sources = [filename]
    if library:
        extra_flags = _program_include_copies(extra_flags or [], out_dir)
    exe = out_dir / "prog"
    # C units (`nvcc main.cu timer.c`): nvcc hands them to the host C compiler, so they are C
    # (malloc's void* converts implicitly), compiled apart and linked with the rest. CUDA's
    # include folder is on their path, so their runtime API is the shim's C face (include_c).
    c_units = [s for s in sources if s.endswith(".c")]
    sources = [s for s in sources if not s.endswith(".c")]
    c_objects = [f"cudashim_c{i}.o" for i in range(len(c_units))]
    # Host C++ units that see no CUDA (`host_only_units`): nvcc hands them to the host compiler
    # as they are, so they are built apart, without the shim's forced include.
    host_units = host_only_units(files or {}, sources) if units else []
    sources = [s for s in sources if s not in host_units]
    host_objects = [f"cudashim_cpp{i}.o" for i in range(len(host_units))]
    c_output = ""
    for src, obj in zip(c_units, c_objects, strict=True):
        step = [gcc(), _PASS_EXIT_CODES, *c_unit_flags(variant), f"-I{INCLUDE_C_DIR}", *_c_flags(extra_flags or []),
                *[f"-D{k}={v}" for k, v in sorted((defines or {}).items())],
                "-x", "c", "-c", src, "-o", obj]
        done = runner(step, out_dir, shim_paths(variant))
        c_output += done.output
        if done.returncode != 0 or done.timed_out:
            return CompileOutcome(ok=False, exe=None, command=step, diagnostics=c_output,
                                  seconds=time.perf_counter() - started, rewrite=rw,
                                  timed_out=done.timed_out, ice=done.returncode == _ICE_EXIT_CODE)
    # The PCH was built without the library-mode macro, so it cannot serve those builds.
    pch = use_pch and not library
    include = pch_header(variant) if pch else INCLUDE_DIR / "cuda_runtime.h"
    after = _defines_after_pch(defines or {}, variant) if pch else {}
    if library and defines:
        # After Thrust's forced include, as for the PCH: a size `N` on the command line would
        # reach Thrust's templates (`template <int N>`) before the program could #undef it.
        after = dict(defines)
    if runtime and pch:
        # Casts: rvalues, as literals are (`N = 1` and `&N` stay errors).
        after = {k: f"(({t})cudashim_case_sizes[{i}])" for i, (k, t) in enumerate(runtime.items())}
        (out_dir / CASE_DEFINES).write_text(
            f'extern "C" long long cudashim_case_sizes[{MAX_RUNTIME_SIZES}];\n'
            + "".join(f"#define {k} {v}\n" for k, v in after.items()))
        defines = after
    elif runtime:
        raise ValueError("run-time sizes need the precompiled header's forced include")
    elif after:
        (out_dir / CASE_DEFINES).write_text(
            "".join(f"#define {k} {v}\n" for k, v in sorted(after.items())))
    on_line = {k: v for k, v in (defines or {}).items() if k not in after}
    compile_part = [
        gxx(),
        _PASS_EXIT_CODES,
        *program_flags(variant),
        "-x",
        "c++",
        f"-I{INCLUDE_DIR}",
        "-include",
        str(include),
        # Without the PCH (library-mode builds), the standard headers it carries: programs
        # that use std::cout without <iostream> build with nvcc, whose Thrust includes it.
        *([] if pch else [a for h in _PCH_EXTRA for a in ("-include", h.strip("<>"))]),
        *library,
        *(["-include", CASE_DEFINES] if after else []),
        *(["-idirafter", str(nvtx)] if (nvtx := nvtx_dir()) else []),
        *[f"-D{k}={v}" for k, v in sorted(on_line.items())],
        *(extra_flags or []),
        *sources,
        "-x",
        "none",
    ]
    for src, obj in zip(host_units, host_objects, strict=True):
        # The flags a CUDA unit gets, less the forced includes of CUDA headers (the shim's PCH,
        # Thrust's policy); the sizes' header stays: it carries the -D sizes (their run-time reads).
        step = [gxx(), _PASS_EXIT_CODES, *program_flags(variant), "-x", "c++", f"-I{INCLUDE_DIR}",
                *_without_forced_includes(library),
                *(["-include", CASE_DEFINES] if after else []),
                *(["-idirafter", str(nvtx)] if (nvtx := nvtx_dir()) else []),
                *[f"-D{k}={v}" for k, v in sorted(on_line.items())],
                *(extra_flags or []), "-c", src, "-o", obj]
        done = runner(step, out_dir, shim_paths(variant))
        c_output += done.output
        if done.returncode != 0 or done.timed_out:
            return CompileOutcome(ok=False, exe=None, command=step, diagnostics=c_output,
                                  seconds=time.perf_counter() - started, rewrite=rw,
                                  timed_out=done.timed_out, ice=done.returncode == _ICE_EXIT_CODE)
    # The runtime's object is linked first: its .preinit_array entry, which captures and wipes the
    # shim's settings, then runs before any the program's source could add.
    link_part = [*link_flags(), *c_objects, *host_objects, "-o", "prog", "-lm"]
    if variant in _INSTRUMENT:
        # Instrumented: compile and link apart, so g++ does not link the sanitizer's runtime
        # (the hooks are in ours); host flags such as -fopenmp and -l... also reach the link.
        head = compile_part[:-2 - len(sources)]
        objects = [f"cudashim_tu{i}.o" for i in range(len(sources))] if units else ["prog.o"]
        cmd, res = [], CommandResult(0, "")
        for src, obj in zip(sources, objects, strict=True):
            step = [*head, "-c", src, "-o", obj]
            done = runner(step, out_dir, shim_paths(variant))
            cmd = [*cmd, "&&", *step] if cmd else step
            res = CommandResult(done.returncode, res.output + done.output, done.timed_out)
            if done.returncode != 0:
                break
        if res.returncode == 0:
            link = [gxx(), _PASS_EXIT_CODES, *flags(variant), str(runtime_object(variant)), *(extra_flags or []),
                    *objects, *link_part]
            linked = runner(link, out_dir, shim_paths(variant))
            res = CommandResult(linked.returncode, res.output + linked.output, linked.timed_out)
            cmd = [*cmd, "&&", *link]
    else:
        cmd = [compile_part[0], str(runtime_object(variant)), *compile_part[1:], *link_part]
        res = runner(cmd, out_dir, shim_paths(variant))
    diagnostics = c_output + res.output
    if rw.warnings:
        diagnostics = "\n".join(f"cudashim rewrite: {w}" for w in rw.warnings) + "\n" + diagnostics
    ok = res.returncode == 0 and exe.exists()
    return CompileOutcome(
        ok=ok,
        exe=exe if ok else None,
        command=cmd,
        diagnostics=diagnostics,
        seconds=time.perf_counter() - started,
        rewrite=rw,
        timed_out=res.timed_out,
        ice=res.returncode == _ICE_EXIT_CODE,
    )


_INCLUDE_LINE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)
_CUDA_SYNTAX = re.compile(
    r"\b(?:__global__|__device__|__shared__|__constant__|__managed__|__host__|__CUDACC__|threadIdx"
    r"|blockIdx|blockDim|gridDim)\b|<<<")
_HOST_UNIT_SUFFIXES = (".cpp", ".cc", ".cxx")
# The shim's own wrappers of C headers: a host unit includes them as it would the system's.
_C_HEADER_WRAPPERS = frozenset({"math.h", "assert.h"})


@cache
def _shim_header_names() -> frozenset[str]:
    """The first component of every header path the shim provides (`cuda_runtime.h`, `cub`,
    `thrust`, ...), less its wrappers of C headers."""
    return frozenset(p.name for p in INCLUDE_DIR.iterdir()) - _C_HEADER_WRAPPERS


def host_only_units(files: dict[str, str], units: list[str]) -> list[str]:
    """The C++ units (`.cpp`, `.cc`, `.cxx`) of a program of several files that see no CUDA:
    neither they nor a file of the program they include (to any depth) include a CUDA header
    (one the shim provides, or one not in the program whose name says CUDA) or use CUDA's
    syntax. nvcc hands such a unit to the host compiler untouched, where it may define names the
    shim's forced `cuda_runtime.h` defines (cuda-samples' mergeSort_host.cpp has its own
    `umin`); a unit that does see CUDA keeps the forced include, as a `.cu` unit."""
    by_suffix: dict[str, list[str]] = {}
    for path in files:
        parts = path.split("/")
        for i in range(len(parts)):
            by_suffix.setdefault("/".join(parts[i:]), []).append(path)
    seen: dict[str, bool] = {}

    def sees_cuda(path: str) -> bool:
        if path in seen:
            return seen[path]
        seen[path] = False  # an include cycle adds nothing
        text = files.get(path, "")
        found = bool(_CUDA_SYNTAX.search(text))
        for m in _INCLUDE_LINE.finditer(text) if not found else ():
            name = m.group(2).strip()
            local = posixpath.normpath(posixpath.join(posixpath.dirname(path), name))
            rel = "/".join(p for p in posixpath.normpath(name).split("/") if p not in ("", ".", ".."))
            targets = ([local] if m.group(1) == '"' and local in files else by_suffix.get(rel, []))
            if targets:
                found = any(sees_cuda(t) for t in targets)
            else:
                base = rel.rsplit("/", 1)[-1].lower()
                found = (rel.split("/", 1)[0] in _shim_header_names()
                         or (m.group(1) == '"' and ("cuda" in base or base.endswith(".cuh"))))
            if found:
                break
        seen[path] = found
        return found

    return [u for u in units if u.endswith(_HOST_UNIT_SUFFIXES) and u in files and not sees_cuda(u)]


def _without_forced_includes(flags: list[str]) -> list[str]:
    out, skip = [], False
    for f in flags:
        if skip:
            skip = False
        elif f == "-include":
            skip = True
        else:
            out.append(f)
    return out


def _write_project(files: dict[str, str], out_dir: Path, lockstep: bool,
                   library_mode: bool = False) -> RewriteResult:
    """Every file of a program of several files rewritten into `out_dir` at its own relative
    path (headers too: a launch, an `extern __shared__` or a kernel cast in a header is the same
    construct as in a source); one result gathering what each file's rewrite found.
    `library_mode`: nvcc's identity macros renamed in every file (`program_identity_macros`)."""
    merged = RewriteResult(text="")
    elsewhere = waiting_elsewhere(files)
    bit_fields = frozenset().union(*map(bit_field_names, files.values()))
    for rel, text in sorted(files.items()):
        rw = rewrite(text, filename=rel, lockstep=lockstep, waits_elsewhere=elsewhere[rel],
                     bit_fields=bit_fields)
        target = out_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        text = program_identity_macros(rw.text) if library_mode else rw.text
        target.write_text(text, encoding="utf-8", errors="surrogatepass")
        merged.launches += rw.launches
        merged.dynamic_shared += rw.dynamic_shared
        merged.warnings += [f"{rel}: {w}" for w in rw.warnings]
        merged.lockstep += rw.lockstep
        merged.lockstep_skipped.update(rw.lockstep_skipped)
        merged.lockstep_lines += rw.lockstep_lines
    return merged
