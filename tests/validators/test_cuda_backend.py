"""The cuda backend on a machine that may have no GPU: needs_gpu, never passed; the registry."""

from __future__ import annotations

import glob
import shutil

import pytest
from engine_programs import MUTANT, vecadd_program, vecadd_task

from schemas import CompileInfo, Status
from validators.backends import BackendUnavailable, Executable, RunOutcome, get_backend
from validators.backends.cuda import CudaBackend, probe_gpu
from validators.build_cache import BuildCache
from validators.engine import check, run_program
from validators.sandbox import Limits

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")

LIMITS = Limits(cpu_seconds=10, wall_seconds=60)


def test_probe_reports_what_cuda_runtime_says():
    probe = probe_gpu()
    print(f"GPU probe: {probe}")
    if not glob.glob("/dev/nvidia[0-9]*"):
        assert not probe.ok and probe.devices == 0
        assert probe.error.startswith("cuda") and probe.error in probe.reason()
    else:
        assert probe.ok == (probe.devices > 0)


@pytest.mark.skipif(probe_gpu().ok, reason="a GPU answers here")
def test_correct_program_is_needs_gpu_never_passed(tmp_path):
    res = check(vecadd_task(), MUTANT, backend="cuda", limits=LIMITS, cache=BuildCache(tmp_path))
    assert res.backend == "cuda"
    assert res.status == Status.NEEDS_GPU, res.reason
    assert all(c.status == Status.NEEDS_GPU for c in res.cases)
    assert "cudaGetDeviceCount" in res.reason and res.compile.ok


@pytest.mark.skipif(probe_gpu().ok, reason="a GPU answers here")
def test_compile_errors_still_reported_without_gpu(tmp_path):
    bad = vecadd_program(replace=("size_t count = N;", "size_t count = N; nope();"))
    res = check(vecadd_task(cases=1), bad, backend="cuda", limits=LIMITS, cache=BuildCache(tmp_path))
    assert res.status == Status.COMPILE_ERROR and "nope" in res.reason


@pytest.mark.skipif(probe_gpu().ok, reason="a GPU answers here")
def test_run_program_needs_gpu(tmp_path):
    run = run_program(MUTANT, CudaBackend(cache=BuildCache(tmp_path)), limits=LIMITS)
    assert run.status == Status.NEEDS_GPU and run.outcome is not None


def _exe(variant: str = "plain") -> Executable:
    return Executable(path=None, compile=CompileInfo(ok=True), backend="cuda", variant=variant)


def test_command_sets_visible_device_and_sanitizer():
    b = CudaBackend(device="1")
    argv, env = b.command(_exe(), ["x"])
    assert argv[1:] == ["x"] and env == {"CUDA_VISIBLE_DEVICES": "1", "CUDA_CACHE_DISABLE": "1"}
    argv, _ = b.command(_exe("racecheck"), [])
    assert argv[0].endswith("compute-sanitizer") and argv[1:3] == ["--tool", "racecheck"]
    assert b.sandbox_overrides(_exe()) == {"memory_bytes": None, "gpu": "1"}
    assert b.unsupported_features(["wmma", "inline_ptx"]) == []


def test_classify_signatures_without_gpu_check():
    b = CudaBackend(gpu_check=False)
    out = RunOutcome(exit_code=0, stdout="Error: cudaErrorNoDevice\n")
    assert b.classify(_exe(), out).status is None  # gpu_check off: outputs decide
    b = CudaBackend()
    if not probe_gpu().ok:
        v = b.classify(_exe(), RunOutcome(exit_code=0))
        assert v.status == Status.NEEDS_GPU and "no GPU answered" in v.reason
    sanitized = RunOutcome(exit_code=86, stdout="========= Invalid __global__ read of size 4\n"
                                                "========= ERROR SUMMARY: 3 errors\n")
    v = CudaBackend(gpu_check=False).classify(_exe("memcheck"), sanitized)
    assert v.status == Status.RUNTIME_ERROR and "memcheck: 3 error(s)" in v.reason
    assert "Invalid __global__ read of size 4" in v.reason


def test_variants_only_with_sanitizer_and_gpu():
    want = ["plain", "memcheck", "racecheck"] if (shutil.which("compute-sanitizer") and probe_gpu().ok) else ["plain"]
    assert CudaBackend().variants(thorough=True) == want
    assert CudaBackend().variants(thorough=False) == ["plain"]


def test_registry():
    assert get_backend("cuda").name == "cuda"
    with pytest.raises(BackendUnavailable, match="unknown backend 'tpu'"):
        get_backend("tpu")
    if probe_gpu().ok:
        assert get_backend("auto").name == "cuda"
    else:
        try:
            auto = get_backend("auto")
        except BackendUnavailable as exc:
            assert "no GPU answered" in str(exc)
        else:
            assert auto.name == "cpu"


def test_the_interposed_runtimes_own_failure_is_an_error_not_a_verdict():
    """The no-launch run on an H100 stopped in the interposer (exit 97) and was read as 'the
    kernels matter', so a host-computing program passed: our runtime's failure is an error."""
    from validators.backends.cuda import INTERPOSER_FATAL_EXIT

    be = CudaBackend(gpu_check=False)
    out = RunOutcome(exit_code=INTERPOSER_FATAL_EXIT, stderr=(
        f"cuda_interposer[{be._fatal_tag}]: malformed kernel-input file /w/.ckd-kernel-inputs\n"))
    v = be.classify(_exe(), out)
    assert v.status == Status.ERROR and "malformed kernel-input file" in v.reason, v
    assert be._fatal_tag not in v.reason
    # The same status without the runtime's words is the program's own exit; so is the status
    # with its words but not the tag the interposer forgets before main (the audit's p5: a
    # program printing them escaped its verdict as our error).
    for stderr in ("boom\n", "cuda_interposer: cannot read settings\n",
                   "cuda_interposer[0123]: cannot read settings\n"):
        plain = be.classify(_exe(), RunOutcome(exit_code=97, stderr=stderr))
        assert plain.status == Status.RUNTIME_ERROR, (stderr, plain)


def test_nvcc_links_the_libraries_whose_headers_a_program_includes():
    """nvcc links no CUDA library by itself: a cuBLAS program the cpu shim builds from its
    headers alone failed to link on a GPU ("undefined reference to cublasCreate_v2")."""
    from validators.nvcc import library_link_flags

    source = ('#include <cublas_v2.h>\n  #  include "curand.h"\n#include <curand_kernel.h>\n'
              "#include <cufft.h>\n#include <cuda_runtime.h>\n// #include <cusparse.h> is text\n")
    assert library_link_flags(source) == ["-lcublas", "-lcurand", "-lcufft"]
    assert library_link_flags(source, ["-lcublas", "-O2"]) == ["-lcurand", "-lcufft"]
    assert library_link_flags("#include <curand_kernel.h>\n#include <cuda_fp16.h>\n") == []
    assert library_link_flags("#include <cuda.h>\n") == []  # often included for nothing
    from schemas import Program
    from validators.nvcc import NvccOptions, NvccUnavailable, nvcc_command

    try:
        cmd = nvcc_command(Program(source=source, extra_flags=["-lcurand"]), {}, NvccOptions())
    except NvccUnavailable:
        return
    assert cmd[-2:] == ["-lcublas", "-lcufft"], cmd  # after the source, as the linker needs
