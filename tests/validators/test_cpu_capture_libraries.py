"""Library calls in a stream capture on the cpu backend (runtime `capture_library_call`, the
headers' `_enqueue`): cuBLAS, cuFFT, cuRAND and cuSPARSE calls on a handle, plan or generator
bound to a capturing stream are nodes of the graph, run by each launch and not by the call, as on
a GPU. They ran at the call and were absent from the graph, so a program that captured a
cublasSaxpy and launched the graph 100 times got it applied once and passed (OLCF hw13's
axpy_cublas_solution). `cpu_programs/capture_library_calls.cu` checks the values after each
launch, host against device pointer-mode scalars, the per-thread and legacy streams, and the
invalidated capture of a call a GPU refuses in one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas import Program, Status
from validators.backends import get_backend
from validators.engine import run_program

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


@pytest.mark.parametrize("variant", ["plain", "asan"])
def test_captured_library_calls_run_at_each_graph_launch(variant):
    prog = Program(source=(PROGRAMS / "capture_library_calls.cu").read_text(), filename="main.cu")
    res = run_program(prog, get_backend("cpu"), variant=variant)
    stdout = res.outcome.stdout if res.outcome else ""
    assert res.status == Status.PASSED, (res.reason, stdout[-2000:])
    assert stdout.strip().endswith("PASS")
