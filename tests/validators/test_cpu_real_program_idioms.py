"""Idioms of real programs (HeCBench, unseen before a sweep of its CUDA folders) that nvcc builds
and a GPU runs, and the cpu backend refused: each program prints PASS on the cpu backend under
every checking build."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas import Program, Status
from validators.backends import get_backend
from validators.engine import run_program

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


@pytest.mark.parametrize(
    "name",
    [
        # A byte __shared__ array carved into float4 (nbnxm): a 1-aligned static made the vector
        # store fault.
        "shared_bytes_as_float4.cu",
        # cub::Traits<T>::UnsignedBits and the radix twiddles (topk).
        "cub_traits_twiddle.cu",
        # std::cout without <iostream> next to Thrust, whose headers include it under nvcc (mtf).
        "thrust_cout_no_iostream.cu",
        # cuComplex reached through <cublas_v2.h> alone, as NVIDIA's header includes it (gels).
        "cublas_cucomplex.cu",
    ],
)
@pytest.mark.parametrize("variant", ["plain", "asan"])
def test_real_program_idiom_runs(name, variant):
    prog = Program(source=(PROGRAMS / name).read_text(), filename="main.cu")
    res = run_program(prog, get_backend("cpu"), variant=variant, schedule="reverse")
    assert res.status == Status.PASSED, res.reason
    assert res.outcome is not None and res.outcome.stdout.strip().endswith("PASS")
