"""What the `cuda` backend changes for a KernelBench answer's process: nothing inside it, only
how it is started.

On the cpu backend the answer's process gets the project's `load_inline` and a cuda device over
CPU memory (`validators.cpu.torch_cuda`). On `cuda` it gets the real ones: torch's extension
builder runs nvcc (through ninja) in the answer's own sandbox, and `.cuda()` is a real GPU. What
this module supplies is the sandbox profile the `cuda` backend gives GPU programs
(`validators/backends/cuda.py`: that GPU's device nodes only, no address-space limit, the
driver's library folders, `CUDA_CACHE_DISABLE`) plus what torch's builder needs (the toolkit,
ninja, a writable `TORCH_EXTENSIONS_DIR` in the run's workspace, the device's architecture).
Everything else (reference process, seeds, defences, comparison) is the cpu path's.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from validators.sandbox import SAFE_PATH, Limits

POISON_LARGE_MIN = 64 << 20
POISON_LARGE_MAX = 1 << 30
POISON_SMALL_BLOCKS = 32
"""1 MiB blocks (the caching allocator's small pool serves requests up to 1 MiB from 2 MiB
segments): 32 of them poison 16 segments, more than a forward's small allocations use."""


@dataclass(frozen=True)
class GpuProfile:
    """How the answer's process is started on the cuda backend."""

    limits: Limits
    env: dict[str, str]
    expose: list[Path]
    readable: list[Path]
    """Folders the in-process guard lets Python read (the toolkit's headers, for the builder)."""


def toolkit_root() -> Path | None:
    """The CUDA toolkit torch's builder will use (the folder holding bin/nvcc), or None."""
    from validators.nvcc import NvccUnavailable, _real_nvcc, nvcc_path

    try:
        nvcc = _real_nvcc(nvcc_path())
    except NvccUnavailable:
        return None
    return Path(nvcc).resolve().parent.parent


def gpu_unavailable() -> str:
    """Why KernelBench answers cannot run on a real GPU here ('' when they can): torch without
    CUDA, no toolkit for torch's extension builder, or no GPU answering the cuda backend's
    sandboxed probe."""
    import torch

    from validators.backends.cuda import probe_gpu

    if torch.version.cuda is None:
        return (f"the installed torch ({torch.__version__}) is built without CUDA: "
                "it cannot run an answer on a GPU")
    if toolkit_root() is None:
        return "nvcc not found: torch's extension builder needs the CUDA toolkit"
    probe = probe_gpu()
    if not probe.ok:
        return probe.reason()
    if not torch.cuda.is_available():
        return (f"a GPU answered the probe ({probe.device}) but torch {torch.__version__} "
                f"(CUDA {torch.version.cuda}) sees none")
    return ""


def arch_list() -> str:
    """`TORCH_CUDA_ARCH_LIST` for the device (`9.0`), so nvcc builds for it alone; '' when the
    probe gives no capability (torch then asks the device itself)."""
    from validators.backends.cuda import probe_gpu

    probe = probe_gpu()
    cap = probe.capability if probe.ok else None
    return f"{cap[0]}.{cap[1]}" if cap else ""


def gpu_profile(work: Path, base: Limits, *, device: str | None = None,
                arch: str | None = None) -> GpuProfile:
    """The answer's sandbox profile and environment on the cuda backend, for a run whose
    workspace is `work` (its extensions are built under `work/build/torch_extensions`)."""
    from validators.backends.cuda import driver_lib_dirs

    device = device if device is not None else os.environ.get("CUDA_VISIBLE_DEVICES", "0")
    toolkit = toolkit_root()
    drivers = driver_lib_dirs()
    # The CUDA driver reserves a very large virtual range (unified addressing): an address-space
    # limit breaks every GPU process, so the memory cgroup bounds it instead (as for programs).
    limits = base.with_overrides(memory_bytes=None, gpu=device)
    tools = [str(toolkit / "bin")] if toolkit else []
    ninja = shutil.which("ninja")
    tools += [str(Path(sys.executable).resolve().parent)]
    if ninja:
        tools.append(str(Path(ninja).resolve().parent))
    env = {
        "CUDA_VISIBLE_DEVICES": device,
        # The JIT cache would live in $HOME, the work folder: files the answer did not write.
        "CUDA_CACHE_DISABLE": "1",
        "TORCH_EXTENSIONS_DIR": str(work / "build" / "torch_extensions"),
        "PATH": ":".join(dict.fromkeys([*tools, *SAFE_PATH.split(":")])),
        "MAX_JOBS": str(max(1, min(8, os.cpu_count() or 1))),
    }
    if toolkit:
        env["CUDA_HOME"] = str(toolkit)
    arch = arch_list() if arch is None else arch
    if arch:
        env["TORCH_CUDA_ARCH_LIST"] = arch
    if drivers:
        env["LD_LIBRARY_PATH"] = ":".join(str(d) for d in drivers)
    expose = [*([toolkit] if toolkit else []), *drivers,
              *([Path(ninja).resolve().parent] if ninja else [])]
    return GpuProfile(limits=limits, env=env, expose=expose,
                      readable=[*([toolkit] if toolkit else []), *drivers])


def poison_large_bytes(largest_tensor_bytes: int) -> int:
    """The size of the poisoned large-pool block: room for any single tensor of the check
    several times over (a block serves every smaller request by splitting)."""
    return max(POISON_LARGE_MIN, min(POISON_LARGE_MAX, 4 * largest_tensor_bytes))
