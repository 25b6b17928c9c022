"""Device arithmetic that x86 computes differently from a GPU, fixed in the shim's headers:
float->integer intrinsics saturate (NaN gives 0 or 1 << (width - 1), as PTX cvt), __fdividef
flushes the reciprocal of a huge divisor, sinpi/cospi reduce before multiplying by pi, the
_rz/_ru/_rd intrinsics round in their direction, the _rn ones are never contracted into an FMA,
and __sad wraps. The program prints PASS when every value is the GPU's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas import Program, Status
from validators.backends import get_backend
from validators.engine import run_program

PROGRAM = Path(__file__).resolve().parent / "cpu_programs" / "device_arithmetic_edges.cu"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


@pytest.mark.parametrize("variant", ["plain", "asan"])
def test_device_arithmetic_edges_match_the_gpu(variant):
    prog = Program(source=PROGRAM.read_text(), filename="main.cu")
    res = run_program(prog, get_backend("cpu"), variant=variant)
    assert res.status == Status.PASSED, (res.reason, res.outcome and res.outcome.stdout)
    assert res.outcome is not None and res.outcome.stdout.strip().endswith("PASS"), res.outcome.stdout
