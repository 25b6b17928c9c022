"""Stream capture of the rest of the stream work on the cpu backend: CUB's device-wide
algorithms (`cub::cudashim_detail::enqueue`), Thrust's `par_nosync.on(s)` algorithms that a GPU
records (thrust/system/cuda/detail/cudashim_capture.h), cudaMemcpyTo/FromSymbolAsync and the
array and 3-D async copies (`cudashim::_async_copy`) are nodes of the graph, run by each launch
and not by the call. They ran at the call, so a captured graph launched N times applied them
once. `cpu_programs/capture_cub_thrust_copies.cu` checks the values after each of 3 launches,
that nothing ran at capture, and the calls a GPU refuses in a capture: cudaStreamAddCallback,
cudaEventQuery/Synchronize of an event recorded in it, Thrust's `par` (it synchronises) and a
`par_nosync` reduce (its result goes to the host)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas import Program, Status
from validators.backends import get_backend
from validators.cpu.toolchain import cccl_dir
from validators.engine import run_program

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"

pytestmark = [
    pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed"),
    pytest.mark.skipif(cccl_dir() is None, reason="the toolkit's CCCL headers (Thrust) are not installed"),
]


@pytest.mark.parametrize("variant", ["plain", "asan"])
def test_captured_cub_thrust_and_copies_run_at_each_graph_launch(variant):
    prog = Program(source=(PROGRAMS / "capture_cub_thrust_copies.cu").read_text(), filename="main.cu")
    res = run_program(prog, get_backend("cpu"), variant=variant)
    stdout = res.outcome.stdout if res.outcome else ""
    assert res.status == Status.PASSED, (res.reason, stdout[-2000:])
    assert stdout.strip().endswith("PASS")
