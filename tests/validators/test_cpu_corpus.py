"""Acceptance corpus of the CPU backend: correct programs pass, mutants are rejected.

The correct programs are the built-in tasks (`sources.builtin`, 5 cases each). Mutants are
recorded textual edits of those programs, each with the reason it must be rejected for:

- `out_of_bounds`: AddressSanitizer (the `asan` variant) reports the access with its line;
- `wrong_result`: an output differs from the reference, or differs between the `forward` and
  `reverse` schedules (`schedule-dependent`, a race / missing barrier);
- `launch_error`: the program's own error check fails on the error a GPU sets;
- `uninitialised`: device or shared memory read before anything wrote it (the checking
  variants start memory as two different bytes; `EQUIVALENT` lists mutants that compute the
  same outputs);
- `lost_update`: an atomic read-modify-write made plain; threads of a block never interleave in
  the emulator, so every schedule computes the right sum, and only the `race` build's detector
  (two unordered writes of different values to one location) can reject it.

`test_acceptance_table` (slow) runs three mutants of each kind (spread over the corpus's tasks)
with the engine's full checks and prints the table; the fast tests run one of each kind.
`benchmarks/bench_acceptance.py` runs the whole corpus (every kind's first nine tasks, 86
mutants, and with `--correct` every built-in program) and prints the same table. That every correct program passes the same checks
is the full default build's test (tests/builder/test_build_full.py keeps all of them): checking
them here again repeated its runs.
"""

from __future__ import annotations

import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from schemas import Program, Status, Task
from validators.backends.cpu import CpuBackend
from validators.engine import Engine

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

EXPECT = {
    "out_of_bounds": (Status.RUNTIME_ERROR, re.compile(r"out-of-bounds access \(AddressSanitizer")),
    "wrong_result": (
        Status.FAILED,
        re.compile(r"schedule-dependent|differ|mismatch|not equal|elements"),
    ),
    # A race on indices can also surface as a wild access: that is the right reason too.
    "race": (Status.FAILED, re.compile(r"schedule-dependent|differ|elements")),
    "launch_error": (
        Status.RUNTIME_ERROR,
        re.compile(r"invalid configuration argument|invalid argument"),
    ),
    # device and shared memory start as a different byte in each checking variant
    "uninitialised": (Status.FAILED, re.compile(r"reads uninitialised memory: \S")),
    # the race build names the kernel, the memory and both writes' lines
    "lost_update": (
        Status.FAILED,
        re.compile(r"race in kernel '[^']+': lost update of (shared|global) memory.* at \S+:\d+"),
    ),
}


@dataclass(frozen=True)
class Mutation:
    kind: str
    """What the edit breaks (the issue's list: off-by-one bound, missing barrier, ...)."""
    pattern: str
    replacement: str
    expect: str
    """A key of EXPECT."""


# Each rule is applied at its first match after the first `__global__`, at most once per task.
RULES: list[Mutation] = [
    Mutation(
        "off_by_one_bound",
        r"if \((\w+) < (n|N|count|total|size)\)",
        r"if (\1 <= \2)",
        "out_of_bounds",
    ),
    Mutation(
        "missing_tail_check",
        r"if \((\w+) < (n|N|count|total|size)\)",
        r"if (\1 >= 0)",
        "out_of_bounds",
    ),
    Mutation(
        "out_of_bounds_read", r"= (\w+)\[(i|idx|gid|tid)\];", r"= \1[\2 + 1];", "out_of_bounds"
    ),
    Mutation("missing_syncthreads", r"__syncthreads\(\);", "", "race"),
    Mutation("shared_memory_race", r"(for \([^)]*\) \{[^{}]*?)__syncthreads\(\);", r"\1", "race"),
    Mutation(
        "wrong_index",
        r"blockIdx\.x \* blockDim\.x \+ threadIdx\.x",
        "blockIdx.x + threadIdx.x",
        "wrong_result",
    ),
    Mutation(
        "wrong_reduction_scope",
        r"blockDim\.x / 2; (\w+) > 0",
        r"blockDim.x / 4; \1 > 0",
        "wrong_result",
    ),
    Mutation(
        "wrong_reduction_scope",
        r"(WARP_SIZE|warpSize|32) / 2; (\w+) > 0",
        r"\1 / 4; \2 > 0",
        "wrong_result",
    ),
    Mutation(
        "wrong_launch_config",
        r"<<<(\w+), (BLOCK_SIZE|BLOCK|THREADS|kThreads|BLOCK_DIM|block)>>>",
        r"<<<\1, 2 * 1024>>>",
        "launch_error",
    ),
    Mutation(
        "wrong_launch_config",
        r"<<<([^,<>]+), ([^,<>]+), ([^,<>]+)>>>",
        r"<<<\1, \2, (1 << 17)>>>",
        "launch_error",
    ),
    # an accumulator or output never cleared: the kernel adds to whatever the allocation held
    Mutation("missing_memset", r"CUDA_CHECK\(cudaMemset\([^;]*\)\);", "", "uninitialised"),
    # a tile's out-of-range elements left unset instead of zeroed: edge blocks read them
    Mutation(
        "tile_edge_unset",
        r"(\w+(?:\[[^\]=]+\])+) = \(?([^;?=]+?)\)? \? ([^;:]+) : 0(?:\.0)?f?;",
        r"if (\2) \1 = \3;",
        "uninitialised",
    ),
    # an atomic update made a plain read-modify-write: updates are lost on a GPU
    Mutation("atomic_to_plain", r"atomicAdd\(&([^,;]+?), ([^;]+)\);", r"\1 += \2;", "lost_update"),
    Mutation("atomic_to_plain", r"atomicAdd\((\w+), ([^;]+)\);", r"*\1 += \2;", "lost_update"),
]


# Mutants that compute the same outputs (checked by hand): no check can or should reject them.
EQUIVALENT = {
    ("exclusive_scan", "tile_edge_unset"): "elements past n only feed prefixes past n, never written",
    ("inclusive_scan", "tile_edge_unset"): "elements past n only feed prefixes past n, never written",
    ("row_cumsum", "tile_edge_unset"): "elements past the row end only feed sums never written",
    ("matmul_tiled", "tile_edge_unset"): "the unset A elements are multiplied by B's zeroed ones",
    ("stencil_1d", "tile_edge_unset"): "boundary points are copied, the halo past them unused",
}


def mutate(source: str, rule: Mutation) -> str | None:
    start = source.find("__global__")
    if start < 0:
        return None
    head, body = source[:start], source[start:]
    new_body, n = re.subn(rule.pattern, rule.replacement, body, count=1)
    return head + new_body if n else None


@dataclass
class Row:
    task: str
    kind: str
    expect: str
    status: str
    reason: str

    @property
    def ok(self) -> bool:
        if self.expect == "pass":
            return self.status == Status.PASSED.value
        status, pattern = EXPECT[self.expect]
        if self.expect == "race" and self.status == Status.RUNTIME_ERROR.value:
            return bool(re.search(r"out-of-bounds|invalid memory access", self.reason))
        if self.expect == "uninitialised" and self.status == Status.RUNTIME_ERROR.value:
            # the program's own check tripped over the poison (an error flag never cleared):
            # caught, by the program itself, before the two bytes could be compared
            return bool(re.search(r"exit code [1-9]", self.reason))
        return self.status == status.value and bool(pattern.search(self.reason))


def builtin_tasks() -> list[tuple[Task, Program]]:
    from sources.builtin import load_all

    return load_all().tasks


def mutants(
    tasks: list[tuple[Task, Program]], limit_per_kind: int | None = None
) -> list[tuple[Task, Program, Mutation]]:
    out = []
    used: dict[tuple[str, str], int] = {}
    for rule in RULES:
        for task, prog in tasks:
            key = (rule.kind, rule.expect)
            if limit_per_kind is not None and used.get(key, 0) >= limit_per_kind:
                break
            if any(t.name == task.name and m.kind == rule.kind for t, _, m in out):
                continue
            if (task.name, rule.kind) in EQUIVALENT:
                continue
            text = mutate(prog.source, rule)
            if text is None or text == prog.source:
                continue
            out.append((task, Program(source=text, filename=prog.filename), rule))
            used[key] = used.get(key, 0) + 1
    return out


def spread(found: list[tuple[Task, Program, Mutation]], per_kind: int
           ) -> list[tuple[Task, Program, Mutation]]:
    """`per_kind` mutants of each kind, evenly spaced over the tasks that kind has (its first
    and its last among them), in the corpus's order."""
    by_kind: dict[str, list[int]] = {}
    for i, (_, _, rule) in enumerate(found):
        by_kind.setdefault(rule.kind, []).append(i)
    keep: set[int] = set()
    for idx in by_kind.values():
        n = min(per_kind, len(idx))
        keep |= {idx[round(j * (len(idx) - 1) / max(n - 1, 1))] for j in range(n)}
    return [m for i, m in enumerate(found) if i in keep]


def check_mutant(engine: Engine, task: Task, program: Program) -> tuple[str, str]:
    """Case by case, stopping at the first case that rejects it (same checks, less time)."""
    for case in task.cases:
        one = task.model_copy(update={"cases": [case]})
        res = engine.check(one, program, thorough=True)
        if res.status != Status.PASSED:
            return res.status.value, res.reason
    return Status.PASSED.value, "survived every case"


def print_table(rows: list[Row]) -> None:
    print()
    print(f"{'task':22s} {'mutation':22s} {'expected':14s} {'got':14s} ok  reason")
    for r in rows:
        print(
            f"{r.task:22s} {r.kind:22s} {r.expect:14s} {r.status:14s} {'yes' if r.ok else 'NO ':3s} {r.reason[:110]}"
        )
    good = sum(r.ok for r in rows)
    print(f"{good}/{len(rows)} as expected")


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(CpuBackend())


MUTANTS_PER_KIND = 9
"""The corpus: each kind's first nine tasks (hand-checked: see EQUIVALENT)."""
SUITE_PER_KIND = 3
"""The suite's share of it; the benchmark runs all of it (each mutant costs a cold thorough check)."""
FAST_TASKS = ("sum_reduction", "histogram", "transpose")


def test_a_few_correct_programs_pass_under_every_schedule_and_asan(engine):
    tasks = [tp for tp in builtin_tasks() if tp[0].name in FAST_TASKS]
    assert len(tasks) == len(FAST_TASKS)
    for task, prog in tasks:
        one = task.model_copy(update={"cases": task.cases[:2]})
        res = engine.check(one, prog, thorough=True)
        assert res.status == Status.PASSED, (task.name, res.reason)
        assert all(c.schedules == ["forward", "reverse"] for c in res.cases)


@pytest.mark.parametrize("kind", ["off_by_one_bound", "missing_syncthreads", "wrong_launch_config",
                                  "missing_memset", "tile_edge_unset", "atomic_to_plain"])
def test_a_mutant_of_each_kind_is_rejected_for_its_reason(engine, kind):
    tasks = [
        tp for tp in builtin_tasks()
        if tp[0].name in ("sum_reduction", "vector_add_int", "saxpy", "histogram", "relu")
    ]
    found = [m for m in mutants(tasks) if m[2].kind == kind]
    assert found, kind
    task, program, rule = found[0]
    status, reason = check_mutant(engine, task, program)
    row = Row(task.name, rule.kind, rule.expect, status, reason)
    assert row.ok, (task.name, rule, status, reason)


@pytest.mark.slow
def test_acceptance_table(engine):
    tasks = builtin_tasks()

    def mutant(task: Task, program: Program, rule) -> Row:
        status, reason = check_mutant(engine, task, program)
        return Row(task.name, rule.kind, rule.expect, status, reason)

    # Two checks at a time: most of the time is single-threaded g++ builds of the mutants, and
    # every check runs in its own sandbox, so the verdicts are the same as one at a time.
    corpus = mutants(tasks, limit_per_kind=MUTANTS_PER_KIND)
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(mutant, t, p, r) for t, p, r in spread(corpus, SUITE_PER_KIND)]
        rows = [f.result() for f in futures]
    print_table(rows)
    assert {r.kind for r in rows} == {m.kind for _, _, m in corpus}
    assert len(rows) >= 30 and all(r.expect != "pass" for r in rows)
    assert all(r.ok for r in rows), [r for r in rows if not r.ok]
