"""Runtime API calls beyond the basics that the CPU shim emulates (occupancy search, opt-in
dynamic shared memory, stream-attached managed memory, stream/event/device queries, 2D/3D fills,
peer copies on the one device, stream-ordered memory pools, stream attributes): a correct
program nvcc 13 builds must run here, not be refused as `needs_gpu` or `compile_error`.
`cpu_programs/runtime_api_coverage.cu` builds unchanged with nvcc 13; its expected lines are
what the emulated device (4 SMs of 2048 threads, 8 blocks, 164 KiB of shared memory) answers."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from validators.cpu.diagnostics import gpu_feature_from_errors
from validators.cpu.toolchain import compile_program

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


def _run(exe: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0"}
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, env=env, cwd=exe.parent)


EXPECTED = [
    # CUDA's block-size search over the emulated SM: the largest block with the most resident
    # threads, and the grid that fills the 4 SMs with it.
    "potential 8 1024",
    "potential_limit 32 200",
    "variable 16 512",  # 64 bytes of shared memory per thread: 512 threads x 4 blocks fill the SM
    "variable_flags 32 256",
    "potential_flags 8 1024",
    "available 83968",  # 164 KiB shared by 2 blocks
    "available_too_many 0",  # 16 blocks of 256 threads never fit one SM
    "per_sm 8",
    "big_smem_before cudaErrorInvalidValue",  # 80000 bytes without the opt-in
    f"big_smem_after {sum(range(20000)) % 1000003}",
    "func_max_dynamic 80000",
    "set_attr_too_big cudaErrorInvalidValue",
    "managed_sum 500500",
    "stream flags=1 prio=-1 dev=0 ids_differ=1",
    "capture_none 1",
    "device chosen=0 sched=4 maphost=1",
    "pci 0000:00:00.0 -> 0",
    "attrs integrated=0 prohibited=0 optin=166912 blocks_sm=8 pools=1 regs_sm=65536",
    "prop optin=166912 pools=1 host_atomics=1",
    "persisting_l2 max=1 window=1 attrs_agree=1 limit_set=1",
    "p2p_same_device cudaErrorInvalidDevice",
    "host_flags portable=1 mapped=1",
    "memset2d sevens=15",
    "memset3d nines=36",
    "peer 1 16",
    "pool current_is_default=1",
    "pool used=5120 access_rw=1",
    "pool kernel 1 1",
    "pool after_free used=0 high=5120",
    "pool via_device used=256",
    "stream_attr bytes=64 same_base=1",
    "done",
]


@pytest.mark.parametrize("variant", ["plain", "asan"])
def test_runtime_api_coverage_program_runs_with_the_expected_answers(tmp_path: Path, variant: str) -> None:
    out = compile_program((PROGRAMS / "runtime_api_coverage.cu").read_text(), tmp_path / variant, variant=variant)
    assert out.ok, out.diagnostics
    proc = _run(out.exe)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == EXPECTED


def test_error_names_cover_every_cuda_13_error(tmp_path: Path) -> None:
    source = r"""
        #include <cstdio>
        #include <cuda_runtime.h>
        int main() {
          const cudaError_t errs[] = {cudaErrorPeerAccessAlreadyEnabled, cudaErrorPeerAccessNotEnabled,
                                      cudaErrorMissingConfiguration, cudaErrorNoKernelImageForDevice,
                                      cudaErrorHostMemoryAlreadyRegistered, cudaErrorTimeout};
          for (cudaError_t e : errs) printf("%d %s\n", (int)e, cudaGetErrorName(e));
          int v = -1;
          cudaDeviceGetAttribute(&v, cudaDevAttrIntegrated, 0);
          printf("integrated %d\n", v);
          return 0;
        }
    """
    out = compile_program(source, tmp_path / "names")
    assert out.ok, out.diagnostics
    proc = _run(out.exe)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "704 cudaErrorPeerAccessAlreadyEnabled",
        "705 cudaErrorPeerAccessNotEnabled",
        "52 cudaErrorMissingConfiguration",
        "209 cudaErrorNoKernelImageForDevice",
        "712 cudaErrorHostMemoryAlreadyRegistered",
        "909 cudaErrorTimeout",
        "integrated 0",
    ]


@pytest.mark.parametrize(
    ("call", "name"),
    [
        ("cudaIpcMemHandle_t h; cudaIpcGetMemHandle(&h, p);", "cudaIpcMemHandle_t"),
        ("const char* nm; cudaFuncGetName(&nm, (const void*)p);", "cudaFuncGetName"),
        ("cudaLibrary_t lib; cudaLibraryLoadFromFile(&lib, \"k.cubin\", 0, 0, 0, 0, 0, 0);", "cudaLibrary_t"),
    ],
)
def test_apis_the_shim_cannot_emulate_are_needs_gpu_naming_them(tmp_path: Path, call: str, name: str) -> None:
    source = "#include <cuda_runtime.h>\nint main() { void* p = 0; cudaMalloc(&p, 16); " + call + " return 0; }\n"
    out = compile_program(source, tmp_path / "gpu")
    assert not out.ok
    feature = gpu_feature_from_errors(out.diagnostics)
    assert feature is not None and name in feature, out.diagnostics
