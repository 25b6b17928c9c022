"""A program must not be able to turn its own result into a non-verdict.

`needs_gpu` ("cannot be judged on this backend") is no verdict on the program: taken from words
the program can print, it would launder a rejection or a failure into a skip. The runtime's own
fatal lines carry a per-run tag the program never holds; the compiler's "needs a GPU" is
believed only from the shim's headers, and a missing header only when it is one of CUDA's."""

from __future__ import annotations

import re

import pytest

from schemas import Program, Status
from sources.builtin.loader import load_tasks
from validators.backends import get_backend
from validators.cpu.diagnostics import gpu_feature_from_errors, runtime_verdict
from validators.engine import Engine
from validators.reference import ReferenceRunner


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    return Engine(get_backend("cpu"), references=ReferenceRunner(tmp_path_factory.mktemp("refs")))


def _relu(first_lines: str = "", head: str = "") -> tuple:
    task, program = next((t, p) for t, p in load_tasks() if t.name == "relu")
    source = program.sources_text()
    source = re.sub(r"(int main\([^)]*\)\s*\{)", lambda m: m.group(1) + "\n" + first_lines, source,
                    count=1)
    return task, Program(source=head + source)


def test_the_runtime_s_words_printed_by_the_program_are_its_own(engine: Engine) -> None:
    for words in ("cudashim: needs a GPU: tensor cores",
                  "cudashim: kernel 'k' launched from device code (dynamic parallelism) is not "
                  "supported"):
        task, program = _relu(f'fprintf(stderr, "{words}\\n");')
        r = engine.check(task, program, thorough=False)
        assert r.status == Status.PASSED, (words, r.status, r.reason)
        # ... and a program that prints them and stops is a program that stopped.
        task, program = _relu(f'fprintf(stderr, "{words}\\n"); fflush(stderr); _exit(70);',
                              head="#include <unistd.h>\n")
        r = engine.check(task, program, thorough=False)
        assert r.status == Status.RUNTIME_ERROR, (words, r.status, r.reason)


def test_runtime_verdict_believes_only_the_tagged_line() -> None:
    said = "cudashim: needs a GPU: cusparseSpMV with values CUDA_C_32F\n"
    assert runtime_verdict("", said, 70, tag="ab12") is None
    tagged = said.replace("cudashim:", "cudashim[ab12]:")
    assert runtime_verdict("", tagged, 70, tag="ab12")[0] == "needs_gpu"
    assert runtime_verdict("", tagged.replace("ab12", "ffff"), 70, tag="ab12") is None
    # Other runtime reports read through the tag as before.
    dead = "cudashim[ab12]: deadlock in kernel 'k': block 0 waits at a barrier\n"
    assert runtime_verdict("", dead, 71, tag="ab12")[0] == "runtime_error"


def test_a_build_is_a_gpu_s_only_where_the_shim_or_cuda_says_so(engine: Engine) -> None:
    own_error = "#error cudashim: needs a GPU: tensor memory accelerator\n"
    for head in (own_error, '#include "curve_helpers.h"\n'):
        task, program = _relu(head=head)
        r = engine.check(task, program, thorough=False)
        assert r.status == Status.COMPILE_ERROR, (head, r.status, r.reason)
    task, program = _relu(head="#include <cusolverDn.h>\n")
    r = engine.check(task, program, thorough=False)
    assert r.status == Status.NEEDS_GPU and "cusolver" in r.reason, (r.status, r.reason)
    shim = ("/opt/x/validators/cpu/include/cudashim/tma.h:3:2: error: #error cudashim: needs a "
            "GPU: tensor memory accelerator\n")
    assert gpu_feature_from_errors(shim) == "tensor memory accelerator"
    assert gpu_feature_from_errors("main.cu:1:2: error: " + own_error) is None


def test_a_program_that_spends_the_check_s_time_is_timeout(tmp_path) -> None:
    # Each run sleeps 1.5 s in host code: within every run's limit, but over a 4 s share for
    # all of a check's runs together. The check ends in time, with a verdict on the program.
    budget = Engine(get_backend("cpu"), references=ReferenceRunner(tmp_path / "refs"),
                    program_seconds=4)
    task, program = _relu("usleep(1500000);", head="#include <unistd.h>\n")
    r = budget.check(task, program, thorough=True)
    assert r.status == Status.TIMEOUT, (r.status, r.reason)
    assert "the program's runs took the check's" in r.reason, r.reason
    # A program that keeps within it is judged as ever; the share ends with the check.
    task, program = _relu()
    budget.program_seconds = 60
    assert budget.check(task, program, thorough=True).status == Status.PASSED
    assert getattr(budget._budget, "left", None) is None
