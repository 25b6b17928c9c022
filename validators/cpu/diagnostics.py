"""Reading what g++ and a cudashim program print: GPU features behind compile errors, and the
runtime's own failure reports (deadlocks, AddressSanitizer, crashes) as verdict reasons."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from ..analysis.features import match_include, match_name
from .cuda_intrinsics import is_cuda_intrinsic

MAX_DIAGNOSTICS = 8000

_MISSING_HEADER = re.compile(r"fatal error: ([^:\s]+): No such file or directory")
_UNKNOWN_NAME = re.compile(
    r"[‘'`](?:[\w:]*::)?(\w+)[’'] (?:was not declared in this scope|does not name a type|has not been declared"
    r"|is not a member of|is not a namespace-name|is not a template|is not a class, namespace, or enumeration)"
    r"|there are no arguments to [‘'`](\w+)[’']"
    r"|[‘'`](\w+)[’'] in namespace [‘'`][\w:]+[’'] does not name a (?:template )?type"
)
_MEMBER_OF = re.compile(r"[‘'`](\w+)[’'] is not a member of [‘'`]([\w:]+)[’']")
_ASM_ERROR = re.compile(
    r"Error: (?:no such instruction|unknown pseudo-op|invalid instruction suffix|bad register name|junk)"
    r"|impossible constraint in [‘'`]asm[’']|invalid [‘'`]asm[’']|unknown register name"
)
# The headers of the CUDA toolkit, its libraries and the GPU ecosystem: missing from the shim,
# they are a GPU's. Any other missing header (`curve_helpers.h`) is an ordinary compile error,
# as it is for nvcc.
_CUDA_HEADER = re.compile(
    r"^(cuda|cublas|cufft|curand|cusparse|cusolver|cudnn|cutensor|cutlass/|cute/|cufile|cupti"
    r"|cudla|cuComplex|nvml|nvrtc|nvjpeg|nvjitlink|nvtx|nvToolsExt|nvshmem|nvcomp|nvblas|npp"
    r"|nvfunctional|nv/|cccl/|thrust/|cub/|cooperative_groups/|sm_\d|crt/|mma\.h|nccl|mpi\.h"
    r"|helper_|texture_|surface_|device_|vector_|math_constants|builtin_types|driver_)"
)
_CUDA_NAME = re.compile(
    r"^(cuda[A-Z]|cu[A-Z]|CU_|CUDA_|CUDART_|NV_|__nv_|__h|__float2half|__half|__bfloat|tex\d|tex[A-Z]|surf\d|surf[A-Z]|__[a-z]\w*_sync$|__\w*(ldmatrix|mma|pipeline|cluster))"
)

# Shim-level names that are GPU features of their own (not in the analysis flag tables).
_NAME_FEATURES = {
    "cudaGraph_t": "cuda_graphs",
    "cudaGraphExec_t": "cuda_graphs",
    "cudaStreamBeginCapture": "cuda_graphs",
    "cudaIpcGetMemHandle": "cuda_ipc",
    "__half": "half",
    "half": "half",
    "half2": "half",
    "__half2": "half",
    "__nv_bfloat16": "bfloat16",
    "__nv_bfloat162": "bfloat16",
    "__pipeline_arrive_on": "cp_async",
}


def truncate(text: str, limit: int = MAX_DIAGNOSTICS) -> str:
    if len(text) <= limit:
        return text
    head = text[: limit // 2]
    tail = text[-limit // 2 :]
    return f"{head}\n... [{len(text) - limit} characters cut] ...\n{tail}"


# Libraries the shim provides a subset of (include/cublas_api.h, include/cusparse.h,
# include/curand_kernel.h, include/cufft.h and cufftXt.h): a name of theirs that does not compile
# is outside the subset, not the whole library missing.
_SUBSET_LIBRARIES = {"cublas": "cuBLAS", "cusparse": "cuSPARSE", "curand": "cuRAND",
                     "curand_device": "cuRAND", "cufft": "cuFFT"}


# Texture and surface references were removed in CUDA 12; the shim has the object API only.
_LEGACY_REFERENCE = re.compile(
    r"^(?:(texture|textureReference|cudaBindTexture\w*|cudaUnbindTexture|cudaGetTexture(?:Reference|AlignmentOffset))"
    r"|(surface|surfaceReference|cudaBindSurfaceToArray|cudaGetSurfaceReference))$"
)


# Half precision and bfloat16 run on the shim (include/cuda_fp16.h, cuda_bf16.h and their helper
# cudashim/half_common.h, which write out every name of CUDA 13's half and bfloat16 API: none is
# pasted together by a macro). A name of that API g++ did not know is either one the shim lacks
# (said so) or one it declares, in a translation unit that did not include the header.
_HALF_HEADERS = {"cuda_fp16.h": "half", "cudashim/half_common.h": "half", "cuda_bf16.h": "bfloat16"}
_HALF_APIS = {"half": "half precision", "bfloat16": "bfloat16"}
_HALF_API_NAME = re.compile(
    r"__(?:h|float|double|u?int|u?short|u?ll|half|bfloat16|low|high|lows|highs|lowhigh|nv_)\w+"
    r"|nv_\w+|half2?|make_(?:half2|bfloat162)|CUDART_\w+_(?:FP16|BF16)"
    r"|h2?(?:sqrt|rsqrt|rcp|exp|exp2|exp10|log|log2|log10|sin|cos|tanh|tanh_approx|floor|ceil|trunc|rint)"
)


@cache
def half_api_names() -> dict[str, str]:
    """The half and bfloat16 API names the shim's headers declare, each with its feature."""
    include = Path(__file__).resolve().parent / "include"
    names: dict[str, str] = {}
    for header, feature in _HALF_HEADERS.items():
        text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", (include / header).read_text(), flags=re.S)
        for name in re.findall(r"\b[A-Za-z_]\w*", text):
            if _HALF_API_NAME.fullmatch(name):
                names.setdefault(name, feature)
    return names


def _half_feature(name: str, feature: str | None) -> str | None:
    declared = half_api_names().get(name)
    if declared is None:
        return f"{feature} ({name} is not in the CPU shim's {_HALF_APIS[feature]} API)" if feature in _HALF_APIS else None
    if feature in _HALF_APIS or (feature is None and (is_cuda_intrinsic(name) or _CUDA_NAME.match(name))):
        header = "cuda_bf16.h" if declared == "bfloat16" else "cuda_fp16.h"
        return f"{declared} ({name}: the CPU shim declares it in {header}; is that header included?)"
    return None


def _feature_for_name(name: str) -> str | None:
    legacy = _LEGACY_REFERENCE.match(name)
    if legacy:
        kind = "texture" if legacy.group(1) else "surface"
        return (
            f"{kind} (legacy {kind} reference: {name} was removed in CUDA 12;"
            f" the CPU shim runs {kind} objects)"
        )
    feature = match_name(name) or match_name(name, is_type=True) or _NAME_FEATURES.get(name)
    half = _half_feature(name, feature)
    if half:
        return half
    if feature in _SUBSET_LIBRARIES:
        return f"{feature} ({name} is not in the CPU shim's {_SUBSET_LIBRARIES[feature]} subset)"
    if feature:
        return f"{feature} ({name})"
    if is_cuda_intrinsic(name):
        return f"uses CUDA intrinsic {name}, which the cpu backend does not provide"
    if _CUDA_NAME.match(name):
        return f"{name} (not provided by the CPU shim)"
    return None


# CUB beyond the shim's subset (include/cub/): a class, function, overload or key type it lacks,
# or (Thrust builds, where the toolkit's CCCL is on the include path) a real CUB header.
_CUB_MISSING = (
    re.compile(r"[‘'`](\w+)[’'] is not a member of [‘'`](cub(?:::\w+)*)[’']"),
    re.compile(r"[‘'`](\w+)[’'] in namespace [‘'`](cub(?:::\w+)*)[’'] does not name"),
    re.compile(r"[‘'`]()(cub::[\w:]+)[’'] (?:has not been declared|is not a template)"),
)
_CUB_OVERLOAD = re.compile(r"no matching function for call to [‘'`]((?:cub::)+\w+(?:::\w+)*)[(<]")
_CUB_ASSERT = re.compile(r"static assertion failed: (cub::[^\n]*?(?:CPU shim|power of two)[^\n]*)")
_CUB_REAL_HEADER = re.compile(r"/cccl/(cub/[\w/]+\.cuh)")
# The toolkit's CUB header the program itself included: the last one before a non-CCCL file.
_CUB_REAL_INCLUDED = re.compile(r"/cccl/(cub/[\w/]+\.cuh):\d+,?\n\s+from (?!\S*/cccl/)")


def _cub_feature(diag: str) -> str | None:
    m = _CUB_REAL_INCLUDED.search(diag) or _CUB_REAL_HEADER.search(diag)
    if m:
        return f"cub ({m.group(1)} is not in the CPU shim's CUB subset)"
    for pattern in _CUB_MISSING:
        m = pattern.search(diag)
        if m:
            name = f"{m.group(2)}::{m.group(1)}" if m.group(1) else m.group(2)
            return f"cub ({name} is not in the CPU shim's CUB subset)"
    m = _CUB_ASSERT.search(diag)
    if m:
        return f"cub ({m.group(1).strip()})"
    m = _CUB_OVERLOAD.search(diag)
    if m:
        return f"cub ({m.group(1)} with these argument types is not in the CPU shim's CUB subset)"
    return None


# WMMA beyond the shim's subset (include/mma.h): its static_asserts say "CPU shim"; the
# fragment type g++ was instantiating names the shape and element type.
_WMMA_ASSERT = re.compile(r"static assertion failed: wmma: ([^\n]*CPU shim[^\n]*)")
_WMMA_FRAGMENT = re.compile(r"[‘'`]class nvcuda::wmma::fragment<([^’'`]+)>[’'`]")


def _wmma_feature(diag: str) -> str | None:
    m = _WMMA_ASSERT.search(diag)
    if m is None:
        return None
    fragments = list(_WMMA_FRAGMENT.finditer(diag, 0, m.start()))
    if fragments:
        name = fragments[-1].group(1).replace("nvcuda::wmma::", "")
        return f"wmma (fragment<{name}>: {m.group(1).strip()})"
    return f"wmma ({m.group(1).strip()})"


# include/cuda_runtime.h: a cooperative launch through a void* kernel pointer.
_GRID_SYNC_ASSERT = re.compile(r"static assertion failed: grid_sync: ([^\n]*CPU shim[^\n]*)")


# libcu++ names the shim provides (include/cudashim/libcuxx_sync.h, libcuxx_pipeline.h): "not a
# member of 'cuda'" means the program lacks their header, an ordinary compile error (nvcc says
# the same).
_LIBCUXX_IN_SHIM = {"barrier", "latch", "counting_semaphore", "binary_semaphore", "memcpy_async",
                    "aligned_size_t", "pipeline", "make_pipeline", "pipeline_shared_state",
                    "pipeline_role", "pipeline_consumer_wait_prior", "pipeline_producer_commit"}
# A shim header that stands for a GPU-only one says so in an #error naming the feature.
# Only where a shim header says it: the same #error in the program's own source is its own.
_SHIM_ERROR_NEEDS_GPU = re.compile(
    r"^[^\n:]*(?:/cudashim/|/validators/cpu/include)[^\n:]*:\d+(?::\d+)?: error: "
    r"#error cudashim: needs a GPU: ([^\n]+)", re.M)


_ASM_STATEMENT = re.compile(r'\b(?:asm|__asm__|__asm)\s*(?:volatile|__volatile__)?\s*\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)')
# A PTX instruction: a mnemonic with a dotted type or modifier (`mov.u32`, `mma.sync.aligned`,
# `ld.global.nc`), or a special register (`%%laneid`). x86 mnemonics carry no dots.
_PTX_CODE = re.compile(r"(?:^|[\s;{])([a-z][a-z0-9_]*\.[a-z0-9_.]+)|%%(?:laneid|warpid|smid|nsmid|tid|ntid|ctaid|nctaid|clock|globaltimer|lanemask)")


def ptx_in_source(source: str) -> str | None:
    """The first PTX instruction of an inline `asm` statement in `source` (None without one).
    A failed build of a program with PTX is `needs_gpu` whatever g++ said: PTX is not x86 code,
    and constraints such as `"+f"` fail before the assembler would."""
    for m in _ASM_STATEMENT.finditer(source):
        code = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1)))
        found = _PTX_CODE.search(code.replace("\\n", "\n").replace("\\t", " "))
        if found:
            return found.group(1) or found.group(0)
    return None


PORTABILITY = "cudashim: portability: "


def portability_notes(stderr: str) -> list[str]:
    """The runtime's notes on behaviour CUDA leaves undefined that it ran as GPUs do (an exited
    thread not holding a barrier, ...): "portability: <what>", once each, in order."""
    notes: list[str] = []
    for line in stderr.splitlines():
        if line.startswith(PORTABILITY):
            note = "portability: " + line[len(PORTABILITY):].strip()
            if note not in notes:
                notes.append(note)
    return notes[:8]


# Headers that come with nvcc itself (the runtime's, the compiler's, CCCL's): a missing one named
# so is a GPU feature only if the toolkit, where this machine has one, ships it. Headers of the
# toolkit's libraries (cuBLAS, cuSOLVER, ...: packages of their own, often not installed) and of
# other libraries (cuDNN, CUTLASS, NCCL, cuda-samples' helpers) keep their names' meaning.
_TOOLKIT_HEADER = re.compile(
    r"^(?:cuda/|thrust/|cub/|nv/|cuda_\w+\.hp*$|cuda\.h$|cooperative_groups|crt/|sm_\d|mma\.h$"
    r"|texture_|surface_|device_|vector_|math_constants|builtin_types|driver_|channel_descriptor"
    r"|host_defines|library_types)")


def _not_in_toolkit(header: str) -> bool:
    """Whether `header` claims the CUDA toolkit's name space, and the toolkit here has no such
    file: `#include <cuda/any_name.h>` made any failed build `needs_gpu`, a verdict that a
    program could pick instead of `compile_error` (and that a reward counts as no failure)."""
    from .toolchain import cccl_dir, toolkit_include_dir

    root = toolkit_include_dir()
    if root is None or not _TOOLKIT_HEADER.match(header):
        return False
    folders = [root, *([cccl_dir()] if cccl_dir() else [])]
    return not any((folder / header).is_file() for folder in folders)


def gpu_feature_from_errors(diag: str) -> str | None:
    """The GPU-only construct a failed CPU build tripped over, or None for an ordinary error."""
    for m in _MISSING_HEADER.finditer(diag):
        header = m.group(1)
        if _not_in_toolkit(header):
            continue
        feature = match_include(header)
        if feature:
            return f"{feature} ({header})"
        if _CUDA_HEADER.match(header):
            return f"header {header} (not provided by the CPU shim)"
    m = _SHIM_ERROR_NEEDS_GPU.search(diag)
    if m:
        return m.group(1).strip()
    cub = _cub_feature(diag)
    if cub:
        return cub
    wmma = _wmma_feature(diag)
    if wmma:
        return wmma
    m = _GRID_SYNC_ASSERT.search(diag)
    if m:
        return f"grid_sync ({m.group(1).strip()})"
    if _ASM_ERROR.search(diag):
        return "inline_ptx (asm statements are not x86 code)"
    for m in _MEMBER_OF.finditer(diag):
        name, scope = m.group(1), m.group(2)
        if scope == "cuda" and name in _LIBCUXX_IN_SHIM:
            continue
        if scope.split("::")[0] in ("cooperative_groups", "cg", "nvcuda", "cuda", "thrust", "cub"):
            return _feature_for_name(name) or f"{scope}::{name} (not provided by the CPU shim)"
    m = re.search(r"[‘'`]((?:thrust|cub)::cuda(?:::\w+)*)[’']", diag)
    if m:
        return f"thrust's CUDA device system ({m.group(1)}; the shim runs Thrust's CPP system)"
    for m in _UNKNOWN_NAME.finditer(diag):
        name = next(g for g in m.groups() if g)
        feature = _feature_for_name(name)
        if feature:
            return feature
    return None


# --- runtime reports -----------------------------------------------------------------------

_ASAN_HEAD = re.compile(r"ERROR: AddressSanitizer: ([\w-]+)(?: on (?:unknown )?address \S+)?")
_ASAN_ACCESS = re.compile(r"^(READ|WRITE) of size (\d+)", re.M)
_ASAN_FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ in (.+?) (\S+?):(\d+)(?::\d+)?$", re.M)
_ASSERT = re.compile(r"Assertion [`'](.+?)[`'] failed")
_SHIM_FILES = ("/validators/cpu/", "libsanitizer", "/usr/include/", "/usr/lib/", "cudashim_runtime")


def _user_frame(text: str) -> tuple[str, str] | None:
    for m in _ASAN_FRAME.finditer(text):
        func, file, line = m.group(1), m.group(2), m.group(3)
        if any(s in file for s in _SHIM_FILES):
            continue
        short = file.rsplit("/", 1)[-1]
        func = re.sub(r"\(.*", "", func).replace("::{lambda()#1}", "")
        return f"{short}:{line}", func
    return None


def _first_line(text: str, marker: str) -> str:
    for line in text.splitlines():
        if marker in line:
            return line.strip()
    return ""


FATAL_TAG_ENV = "CUDASHIM_FATAL_TAG"
"""The runtime's fatal lines carry this run's tag (`cudashim[<tag>]: ...`, runtime `vfatal`)."""


def _own_lines(stderr: str, tag: str) -> str:
    """The runtime's own lines: with the run's `CUDASHIM_FATAL_TAG`, only those it tagged."""
    if not tag:
        return stderr
    mark = f"cudashim[{tag}]: "
    return "\n".join("cudashim: " + ln[len(mark):] for ln in stderr.splitlines()
                     if ln.startswith(mark))


def runtime_verdict(stdout: str, stderr: str, exit_code: int | None = 1, *,
                    tag: str = "") -> tuple[str, str] | None:
    """(status, reason) for a failure the runtime or AddressSanitizer reported, else None.

    `tag`: the run's `CUDASHIM_FATAL_TAG`. A verdict that is no verdict on the program
    (`needs_gpu`) is then taken only from the runtime's own tagged lines: the same words printed
    by the program are its own, and would otherwise launder any verdict into "needs a GPU".

    A failed device assert stops its kernel and sets cudaErrorAssert, as on a GPU; it decides
    the verdict only when the program then fails (a program may expect it, or check outputs)."""
    own = _own_lines(stderr, tag)
    if tag:
        stderr = stderr.replace(f"cudashim[{tag}]: ", "cudashim: ")
    if "cudashim: deadlock" in stderr:
        line = _first_line(stderr, "cudashim: deadlock")
        return "runtime_error", "deadlock: " + line.removeprefix("cudashim: deadlock ").strip()[
            :600
        ]
    # The race build's report (runtime/race_detector.h): two unordered writes, different values.
    if "cudashim: race in kernel" in stderr:
        return "failed", _first_line(stderr, "cudashim: race in kernel").removeprefix("cudashim: ")[:700]
    # cooperative_groups::grid_group::sync() outside a cooperative launch (undefined on a GPU).
    if "cudashim: grid.sync() " in stderr:
        return "runtime_error", _first_line(stderr, "cudashim: grid.sync()").removeprefix(
            "cudashim: "
        )[:600]
    # Code of the program that the loader would run before the runtime's own start-up (which
    # hides the run's settings from it): refused before main (runtime `check_nothing_ran_first`).
    m = re.search(r"cudashim: (the program runs code before the runtime starts.*)", stderr)
    if m:
        return "runtime_error", m.group(1).strip()[:300]
    if "(dynamic parallelism) is not supported" in own:
        return "needs_gpu", "dynamic_parallelism (a kernel launched from device code)"
    # A library call of the shim's subset with arguments it does not compute (cudashim/libdata.h).
    m = re.search(r"cudashim: needs a GPU: (.+)", own)
    if m:
        return "needs_gpu", m.group(1).strip()[:300]
    # A libcu++ synchronisation object used as CUDA calls undefined (include/cudashim/
    # libcuxx_sync.h: more arrivals than a phase expects, a semaphore above its max()).
    m = re.search(r"cudashim: libcu\+\+: (.+)", stderr)
    if m:
        return "runtime_error", m.group(1).strip()[:300]
    # A CUDA graph call CUDA leaves undefined (runtime: cudaGraphSetConditional with a value that
    # is no conditional handle of a live graph).
    m = re.search(r"cudashim: graph: (.+)", stderr)
    if m:
        return "runtime_error", m.group(1).strip()[:300]
    # An asynchronous copy CUDA calls undefined (include/cuda_pipeline_primitives.h: size,
    # alignment, zfill).
    m = re.search(r"cudashim: async copy: (.+)", stderr)
    if m:
        return "runtime_error", m.group(1).strip()[:300]
    # A WMMA call with arguments CUDA calls undefined (include/mma.h: ldm, alignment).
    m = re.search(r"cudashim: (wmma::\w+ at .+)", stderr)
    if m:
        return "runtime_error", m.group(1).strip()[:300]
    # Host code that read or wrote device memory outside kernels and the runtime's own copies: the
    # runtime keeps device allocations closed to host code, so it faults as it would on a GPU.
    m = re.search(r"cudashim: (host code accessed device memory at .+)", stderr)
    if m:
        return "runtime_error", m.group(1).strip()[:300]
    m = _ASAN_HEAD.search(stderr)
    if m:
        kind = m.group(1)
        access = _ASAN_ACCESS.search(stderr)
        where = _user_frame(stderr)
        what = {
            "heap-buffer-overflow": "out-of-bounds access",
            "global-buffer-overflow": "out-of-bounds access",
            "stack-buffer-overflow": "out-of-bounds access",
            "dynamic-stack-buffer-overflow": "out-of-bounds access",
            "heap-use-after-free": "use after free",
            "SEGV": "invalid memory access",
            "attempting": "invalid free",
        }.get(kind, "memory error")
        text = f"{what} (AddressSanitizer {kind}"
        if access:
            text += f", {access.group(1)} of size {access.group(2)}"
        text += ")"
        if where:
            text += f" at {where[0]} in {where[1]}"
        return "runtime_error", text
    if "cudashim: stack overflow" in stderr:
        return "runtime_error", _first_line(stderr, "cudashim: stack overflow").removeprefix(
            "cudashim: "
        )
    if "cudashim: invalid memory access" in stderr or "cudashim: bus error" in stderr:
        line = _first_line(stderr, "cudashim: ")
        return "runtime_error", line.removeprefix("cudashim: ") + " (out of bounds?)"
    if "cudashim: " in stderr and "__trap()" in stderr:
        return "runtime_error", "__trap() called in device code"
    if "cudashim: unknown CUDASHIM_SCHEDULE" in stderr:
        return "runtime_error", _first_line(stderr, "cudashim: ")
    a = _ASSERT.search(stderr)
    if a and exit_code != 0:
        return "runtime_error", "assertion failed: " + (a.group(1) or a.group(0))[:300]
    return None


_CUDA_ERROR_TEXT = re.compile(
    r"invalid configuration argument|invalid argument|out of memory|invalid device pointer"
    r"|device-side assert triggered|an illegal memory access|invalid resource handle|cudaError\w+"
)


def cuda_error_line(text: str) -> str:
    """The first line where a program reported a CUDA error (to explain its exit code)."""
    for line in text.splitlines():
        if _CUDA_ERROR_TEXT.search(line):
            return line.strip()[:300]
    return ""


_LOCATION = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?P<col>\d+): (?P<rest>.*)$")
_QUOTE = re.compile(r"^(?P<pad> *\d+ \| )(?P<code>.*)$")
_MARK = re.compile(r"^(?P<pad> *\| )(?P<mark>.*)$")
_TAB = 8  # g++'s -ftabstop: its columns and quotes count a tab to the next multiple of 8


def program_quotes(diagnostics: str, sources: dict[str, str]) -> str:
    """g++'s messages with each quoted source line the program's own, not the rewrite's.

    The cpu rewrite changes lines in place (a launch becomes a call to the shim, a device shift's
    amount is wrapped), so g++ quotes, and counts its columns in, text the program never had
    (`::cudashim::launch<false>("k", blocks, thread, ...)` for `k<<<blocks, thread>>>`). Where a
    quoted line differs from the program's (`sources`: text by the name g++ gives), the program's
    line is quoted instead, and the column and caret move to the same token there; a token the
    line does not hold exactly once (as often as in the rewrite) loses its column and caret."""
    if not sources or " | " not in diagnostics:
        return diagnostics
    lines = diagnostics.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        where = _LOCATION.match(lines[i])
        quote = _QUOTE.match(lines[i + 1]) if where and i + 1 < len(lines) else None
        own = _line_of(sources, where["file"], int(where["line"])) if quote else None
        if own is None or own.expandtabs(_TAB).rstrip() == quote["code"].rstrip():
            out.append(lines[i])
            i += 1
            continue
        own = own.expandtabs(_TAB).rstrip()
        marks: list[str] = []
        j = i + 2
        while j < len(lines) and (m := _MARK.match(lines[j])):
            marks.append(m["mark"])
            j += 1
        moved = _moved_column(quote["code"], own, int(where["col"]) - 1, marks[0] if marks else "")
        if moved is None:
            out.append(f"{where['file']}:{where['line']}: {where['rest']}")
            out.append(quote["pad"] + own)
        else:
            shift = moved - (int(where["col"]) - 1)
            out.append(f"{where['file']}:{where['line']}:{moved + 1}: {where['rest']}")
            out.append(quote["pad"] + own)
            pad = " " * (len(quote["pad"]) - 2) + "| "
            for mark in marks:
                body = mark.lstrip(" ")
                out.append(pad + " " * max(0, len(mark) - len(body) + shift) + body)
        i = j
    return "\n".join(out)


def _line_of(sources: dict[str, str], name: str, number: int) -> str | None:
    text = sources.get(name)
    if text is None:
        ends = [k for k in sources if name.endswith("/" + k) or k.endswith("/" + name)]
        text = sources[ends[0]] if len(ends) == 1 else None
    if text is None:
        return None
    found = text.split("\n")
    return found[number - 1].rstrip("\r") if 0 < number <= len(found) else None


def _moved_column(rewritten: str, own: str, column: int, mark: str) -> int | None:
    """Where in `own` the token g++ marks at `column` of `rewritten` is (0-based), when that
    token is found there as often as in `rewritten` (the n-th in one is the n-th in the other)."""
    start = column
    end = len(mark.rstrip()) if mark.strip() else column + 1
    if start >= len(rewritten):
        return None
    token = rewritten[start:max(end, start + 1)]
    word = re.match(r"\w+", rewritten[start:])
    if word:
        token = word.group()
    pattern = re.compile(rf"(?<!\w){re.escape(token)}(?!\w)" if word else re.escape(token))
    before = [m.start() for m in pattern.finditer(rewritten)]
    there = [m.start() for m in pattern.finditer(own)]
    if start not in before or not there:
        return None
    if len(there) == 1:
        return there[0]
    return there[before.index(start)] if len(there) == len(before) else None
