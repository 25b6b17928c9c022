"""Several cases' references in one sandboxed process (`ReferenceRunner.prefetch`): the same
outputs as one run per case, each case kept apart, and any trouble left to the single run."""

from __future__ import annotations

import numpy as np
import pytest

import validators.reference as reference_module
from schemas import InputCase, Reference, Task, TensorSpec
from validators.cases import materialize
from validators.reference import ReferenceError, ReferenceRunner
from validators.sandbox import Limits

TIGHT = Limits(cpu_seconds=2, wall_seconds=30, memory_bytes=1 << 30, file_size_bytes=1 << 20,
               max_processes=32, output_bytes=64 << 10)


def _task(code: str, n_cases: int = 4) -> Task:
    return Task(
        name="scale", description="c = 2 a",
        inputs=[TensorSpec(name="a", dtype="float32", shape=["N"])],
        outputs=[TensorSpec(name="c", dtype="float32", shape=["N"])],
        sizes={"N": 64},
        cases=[InputCase(name=f"c{i}", seed=i + 1, sizes={"N": 64 + 7 * i})
               for i in range(n_cases)],
        reference=Reference(code=code),
    )


def _items(task: Task) -> list[tuple[InputCase, dict[str, np.ndarray]]]:
    return [(c, materialize(task, c)) for c in task.cases]


@pytest.fixture
def processes(monkeypatch) -> list[list[str]]:
    """The reference processes started (their argv)."""
    started: list[list[str]] = []
    real = reference_module.run_sandboxed

    def spy(argv, *a, **kw):
        started.append(list(argv))
        return real(argv, *a, **kw)

    monkeypatch.setattr(reference_module, "run_sandboxed", spy)
    return started


# Module-level state that would leak from one case into the next if the cases shared a process:
# each call doubles a global factor.
STATEFUL = """
import numpy as np
FACTOR = [1.0]
def reference(inputs, sizes):
    FACTOR[0] *= 2.0
    np.seterr(all="raise")
    return {"c": inputs["a"] * np.float32(FACTOR[0])}
"""


def test_one_process_gives_each_case_what_its_own_run_gives(tmp_path, processes):
    task = _task(STATEFUL)
    batch = ReferenceRunner(tmp_path / "batch", limits=TIGHT)
    assert batch.prefetch(task, _items(task)) == len(task.cases)
    assert len(processes) == 1
    alone = ReferenceRunner(tmp_path / "alone", limits=TIGHT)
    for case, inputs in _items(task):
        got, cached = batch.outputs(task, case, inputs)
        assert cached  # no second process
        want, was_cached = alone.outputs(task, case, inputs)
        assert not was_cached
        np.testing.assert_array_equal(got["c"], want["c"])
        np.testing.assert_array_equal(got["c"], inputs["a"] * 2)  # state did not carry over
    assert len(processes) == 1 + len(task.cases)
    # Stored on disk too: a new runner on the same folder starts nothing.
    again = ReferenceRunner(tmp_path / "batch", limits=TIGHT)
    case, inputs = _items(task)[0]
    assert again.outputs(task, case, inputs)[1]
    assert len(processes) == 1 + len(task.cases)


FAILS_ON_ONE = """
def reference(inputs, sizes):
    if sizes["N"] == 71:
        raise ValueError("no size 71 here")
    if sizes["N"] == 78:
        while True:
            pass
    return {"c": inputs["a"] * 2}
"""


def test_a_failing_case_is_left_to_its_own_run_and_reports_as_before(tmp_path, processes):
    task = _task(FAILS_ON_ONE)
    runner = ReferenceRunner(tmp_path / "refs", limits=TIGHT)
    # N=71 raises, N=78 never ends (its own CPU limit stops it): the other two are stored.
    assert runner.prefetch(task, _items(task)) == 2
    items = _items(task)
    for case, inputs in items:
        n = task.case_sizes(case)["N"]
        if n == 71:
            with pytest.raises(ReferenceError, match="no size 71 here"):
                runner.outputs(task, case, inputs)
        elif n == 78:
            with pytest.raises(ReferenceError, match="cpu limit|timed out"):
                runner.outputs(task, case, inputs)
        else:
            outs, cached = runner.outputs(task, case, inputs)
            assert cached
            np.testing.assert_array_equal(outs["c"], inputs["a"] * 2)
    assert len(processes) == 3  # the batch, then one run for each failing case


def test_nothing_to_batch_starts_nothing(tmp_path, processes):
    task = _task("def reference(inputs, sizes):\n    return {'c': inputs['a'] * 2}\n")
    runner = ReferenceRunner(tmp_path / "refs", limits=TIGHT)
    items = _items(task)
    assert runner.prefetch(task, items[:1]) == 0  # one case: its own run is as cheap
    runner.outputs(task, *items[0])
    runner.outputs(task, *items[1])
    processes.clear()
    assert runner.prefetch(task, items[:2]) == 0  # both cached
    assert processes == []


def test_outputs_handed_out_twice_cannot_be_changed_by_a_caller(tmp_path):
    task = _task("def reference(inputs, sizes):\n    return {'c': inputs['a'] * 2}\n")
    runner = ReferenceRunner(tmp_path / "refs", limits=TIGHT,
                             persist=lambda t, c: False)  # held in memory only
    case, inputs = _items(task)[0]
    outs, _ = runner.outputs(task, case, inputs)
    with pytest.raises(ValueError):
        outs["c"][0] = 123.0
    again, cached = runner.outputs(task, case, inputs)
    assert cached and np.array_equal(again["c"], inputs["a"] * 2)


def test_a_check_runs_its_cases_references_in_one_process(tmp_path, processes):
    from schemas import Program
    from validators.backends import get_backend
    from validators.engine import Engine

    task = _task("def reference(inputs, sizes):\n    return {'c': inputs['a'] * 2}\n", 3)
    task = task.model_copy(update={"sizes": {"N": 64}})
    source = r"""
#include <cstdio>
#include <cuda_runtime.h>
#ifndef N
#define N 64
#endif
__global__ void scale(const float* a, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = 2.0f * a[i];
}
int main() {
  static float a[N], c[N];
  FILE* f = fopen("data/a.bin", "rb"); fread(a, 4, N, f); fclose(f);
  float *da, *dc; cudaMalloc(&da, sizeof a); cudaMalloc(&dc, sizeof c);
  cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
  scale<<<(N + 63) / 64, 64>>>(da, dc, N);
  cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost);
  f = fopen("data/c.bin", "wb"); fwrite(c, 4, N, f); fclose(f);
  return 0;
}
"""
    engine = Engine(get_backend("cpu"), references=ReferenceRunner(tmp_path / "refs"))
    result = engine.check(task, Program(source=source), thorough=False)
    assert result.status.value == "passed", result.reason
    # Three published cases and the fresh one in one process; then only the kernel-work
    # run's second draw (its inputs are known only after the device run).
    assert len(processes) <= 3, processes
