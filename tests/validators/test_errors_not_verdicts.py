"""When our own machinery fails, the result is `error` with its cause, never a verdict.

The conditions are real: an interpreter the sandbox cannot start, a reference that raises, a
virtual environment reached through a link. Only the sandbox set-up failure is injected (no
real host makes `unshare` fail on demand)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from schemas import ErrorOrigin, Program, Reference, Status, worst_status
from sources.builtin.loader import load_tasks
from validators import engine as engine_mod
from validators import reference as reference_mod
from validators.backends import get_backend
from validators.engine import Engine
from validators.reference import ReferenceRunner
from validators.sandbox import HarnessError, SandboxError, harness_reached, sandbox_mode

ROOT = Path(__file__).resolve().parents[2]


def _clamp():
    task, program = next((t, p) for t, p in load_tasks() if t.name == "clamp")
    return task, program


@pytest.fixture
def engine(tmp_path) -> Engine:
    return Engine(get_backend("cpu"), references=ReferenceRunner(tmp_path / "refs"))


def test_error_ranks_below_every_verdict_and_above_passed():
    assert worst_status([Status.PASSED, Status.ERROR]) == Status.ERROR
    for verdict in (Status.FAILED, Status.TIMEOUT, Status.RUNTIME_ERROR, Status.REJECTED,
                    Status.COMPILE_ERROR):
        assert worst_status([Status.ERROR, verdict]) == verdict
        assert worst_status([verdict, Status.ERROR]) == verdict


def test_an_interpreter_the_sandbox_cannot_start_is_a_validator_error(engine, monkeypatch):
    task, program = _clamp()
    monkeypatch.setattr(reference_mod, "python_executable", lambda: "/nonexistent/bin/python3")
    r = engine.check(task, program, thorough=False)
    assert r.status == Status.ERROR, (r.status, r.reason)
    assert r.error_origin == ErrorOrigin.VALIDATOR
    assert "reference harness could not start" in r.reason
    assert all(c.status == Status.ERROR and c.error_origin == ErrorOrigin.VALIDATOR
               for c in r.cases)


def test_a_harness_that_cannot_start_costs_no_build(engine, monkeypatch):
    """Our failure is known before the program is compiled: a broken environment must not spend
    a build's first records on compiles whose runs could never be judged."""
    task, program = _clamp()
    builds = []
    real_build = engine.backend.build
    monkeypatch.setattr(engine.backend, "build",
                        lambda *a, **k: builds.append(k.get("variant")) or real_build(*a, **k))
    monkeypatch.setattr(reference_mod, "python_executable", lambda: "/nonexistent/bin/python3")
    r = engine.check(task, program, thorough=True)
    assert r.status == Status.ERROR and r.error_origin == ErrorOrigin.VALIDATOR, (r.status, r.reason)
    assert builds == []


def test_a_reference_that_raises_is_the_tasks_error_not_the_programs_failure(engine):
    task, program = _clamp()
    broken = task.model_copy(update={"reference": Reference(
        code="import numpy as np\ndef reference(inputs, sizes):\n    raise ValueError('boom')\n")})
    r = engine.check(broken, program, thorough=False)
    assert r.status == Status.ERROR and r.error_origin == ErrorOrigin.TASK, (r.status, r.reason)
    assert "ValueError: boom" in r.reason


def test_a_reference_failure_never_hides_a_wrong_program(engine):
    """A program that fails a case that could be judged still fails."""
    task, _ = _clamp()
    # Case 0 judged against a working reference, later cases against one that raises.
    code = textwrap.dedent("""
        import numpy as np
        def reference(inputs, sizes):
            if sizes['N'] != %d:
                raise ValueError('only the default size')
            return {'y': np.clip(inputs['x'], -1.5, 2.0)}
    """) % task.case_sizes(task.cases[0])["N"]
    half = task.model_copy(update={"reference": Reference(code=code)})
    wrong = Program(source=_clamp()[1].source.replace("-1.5f", "-1.25f"))
    r = engine.check(half, wrong, thorough=False)
    assert r.status == Status.FAILED, (r.status, r.reason)


def test_a_sandbox_that_cannot_be_set_up_is_a_validator_error(engine, monkeypatch):
    task, program = _clamp()

    def broken(*args, **kwargs):
        raise SandboxError("cannot start the sandbox (namespaces+uid): unshare: Operation "
                           "not permitted")

    monkeypatch.setattr(engine_mod, "run_sandboxed", broken)
    r = engine.check(task, program, thorough=False)
    assert r.status == Status.ERROR and r.error_origin == ErrorOrigin.VALIDATOR, r.reason
    assert "could not run" in r.reason and "unshare" in r.reason


FORGED_SET_UP_FAILURE = r"""
#include <cstdio>
#include <unistd.h>
__global__ void k(float* p) { if (p) p[threadIdx.x] = 0.f; }
int main() {
  FILE* f = fopen("data/x.bin", "rb"); char c; if (f) { if (fread(&c, 1, 1, f)) {} fclose(f); }
  float* d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); cudaDeviceSynchronize();
  fprintf(stderr, "ckd-sandbox-setup-failed: mount: /proc: Device or resource busy\n");
  fflush(stderr);
  _exit(125);
}
"""


@pytest.mark.skipif(sandbox_mode() == "rlimits", reason="needs the namespace sandbox")
def test_a_program_that_prints_the_set_up_failure_gets_a_verdict(engine):
    """The red-team audit's p5: exit 125 and the set-up's marker line, printed by the program
    after it ran, made every case an `error` of origin validator (on the RL service a reward of
    None instead of 0). The set-up now says on its own pipe that it handed over; after that the
    status is the program's. (A real set-up failure: test_sandbox.py, and the test above.)"""
    task, _ = _clamp()
    r = engine.check(task, Program(source=FORGED_SET_UP_FAILURE), thorough=False)
    assert r.status == Status.RUNTIME_ERROR and r.error_origin is None, (r.status, r.reason)


def test_harness_marker_is_what_tells_our_failure_from_the_codes():
    assert not harness_reached("Traceback ...\nModuleNotFoundError: No module named 'numpy'\n")
    assert harness_reached("CKD-HARNESS-READY\nREFERENCE-ERROR: ValueError: boom\n")
    assert issubclass(HarnessError, SandboxError)


@pytest.mark.skipif(sandbox_mode() == "rlimits", reason="needs the namespace sandbox")
def test_a_virtual_environment_reached_through_a_link_runs_references(tmp_path):
    """`.venv -> /elsewhere/venv`: the sandbox binds real paths, so the interpreter must be
    started where it really lives (it used to be `validation_failed` for every record)."""
    real = tmp_path / "elsewhere" / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(real)], check=True)
    project = tmp_path / "project"
    project.mkdir()
    (project / ".venv").symlink_to(real)
    probe = textwrap.dedent("""
        import sys
        from pathlib import Path
        from sources.builtin.loader import load_tasks
        from validators.cases import materialize
        from validators.reference import ReferenceRunner
        task = next(t for t, _ in load_tasks() if t.name == "clamp")
        case = task.cases[0]
        out, _ = ReferenceRunner(Path(sys.argv[1])).outputs(task, case, materialize(task, case))
        print("shape", out["y"].shape)
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([str(project / ".venv" / "bin" / "python"), "-c", probe,
                           str(tmp_path / "refs")], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "shape (" in done.stdout
