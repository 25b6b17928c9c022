"""A KernelBench answer must not be able to turn its own result into a non-verdict: the
runtime's words printed by the answer, or a check run past its caller's deadline."""

from __future__ import annotations

import pytest
from test_verify_extensions import PROBLEM, answer

from schemas import Status
from validators.kernelbench import verify
from validators.kernelbench.answer import emulation_available

pytestmark = pytest.mark.skipif(not emulation_available(),
                                reason="validators.cpu.torch_cuda (CUDA extensions on the CPU) "
                                       "is not available")


def test_the_runtime_s_words_from_the_answer_are_the_answer_s() -> None:
    # "needs a GPU" printed by the answer before its process ends is a crash, not a skip.
    dies = ("import os, sys\nsys.stderr.write('cudashim: needs a GPU: tensor cores\\n')\n"
            "sys.stderr.flush()\nos._exit(70)")
    r = verify(PROBLEM, answer(dies, name="leaky_dies"), fast=True)
    assert r.status == Status.RUNTIME_ERROR, (r.status, r.reason)


def test_an_answer_that_spends_the_check_s_time_is_timeout() -> None:
    # Every forward call sleeps 1 s: within the process's limit, over a 5 s share for all of
    # the check's answer processes together. A verdict, before a caller's deadline.
    slow = "import time\ntime.sleep(1.0)\nreturn ext.leaky(x, self.slope)"
    r = verify(PROBLEM, answer(slow, name="leaky_slow"), fast=True, program_seconds=5)
    assert r.status == Status.TIMEOUT, (r.status, r.reason)
    assert "took the check's" in r.reason, r.reason
