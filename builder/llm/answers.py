"""What the LLM must answer, as pydantic models, and the checks an answer must pass before a
program is ever built from it.

An answer is untrusted: these checks only decide whether it is worth validating (it names the
task's tensors, declares its sizes, keeps the original kernel, gives a reference that stays
inside NumPy: an allow-list, `reference_rules`). Whether the program is right is decided by the
validator, never here.
"""

from __future__ import annotations

import ast
import re
import zlib

from pydantic import BaseModel, ConfigDict, Field

from schemas import (
    CASES_PER_TASK,
    InputCase,
    Reference,
    Task,
    TensorSpec,
    Tolerance,
    ValueDistribution,
)
from schemas.base import IDENT_RE

from .reference_rules import reference_problems

_BLOCK_MULTIPLE = 32
"""A case size that is not a multiple of the warp size is not a multiple of any usual block edge
either, so it exercises the bounds checks a CUDA kernel needs."""


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")


class CaseAnswer(_Answer):
    name: str = Field(pattern=IDENT_RE)
    sizes: dict[str, int] = Field(default_factory=dict)
    distributions: dict[str, ValueDistribution] = Field(default_factory=dict)
    description: str = ""


class KernelAnswer(_Answer):
    """A raw kernel (or a PyTorch extension) turned into a level-1 task, five cases, a NumPy
    reference and the canonical standalone program that keeps the original kernel."""

    task_name: str = Field(pattern=IDENT_RE, max_length=80)
    description: str = Field(min_length=40)
    inputs: list[TensorSpec] = Field(default_factory=list)
    """Empty for a generator (fill, iota): its outputs follow from the sizes alone."""
    outputs: list[TensorSpec] = Field(min_length=1)
    sizes: dict[str, int] = Field(default_factory=dict)
    cases: list[CaseAnswer] = Field(min_length=CASES_PER_TASK, max_length=CASES_PER_TASK)
    reference: str = Field(min_length=20)
    tolerance: Tolerance | None = None
    program: str = Field(min_length=50)


class ModuleAnswer(_Answer):
    """A PyTorch module's task: its description and the CUDA program (the module itself is the
    reference; the cases come from the module's own input generator)."""

    task_name: str = Field(pattern=IDENT_RE, max_length=80)
    description: str = Field(min_length=40)
    program: str = Field(min_length=50)


class RepairAnswer(_Answer):
    """A corrected program after a failed validation."""

    program: str = Field(min_length=50)


def case_seed(record_id: str, index: int) -> int:
    """Seeds are ours, not the LLM's: stable per record and case, distinct across cases."""
    return (zlib.crc32(record_id.encode()) % 100_000) * 10 + index


def task_from_answer(ans: KernelAnswer, record_id: str) -> Task:
    """The `schemas.Task` an answer describes; raises ValueError (pydantic's, readable) when the
    parts do not fit together (a shape naming an unknown size, a case for an unknown input)."""
    cases = [
        InputCase(name=c.name, seed=case_seed(record_id, i), sizes=c.sizes,
                  distributions=c.distributions, description=c.description)
        for i, c in enumerate(ans.cases)
    ]
    return Task(
        name=ans.task_name, description=ans.description, inputs=ans.inputs, outputs=ans.outputs,
        sizes=ans.sizes, cases=cases, reference=Reference(language="numpy", code=ans.reference),
        tolerance=ans.tolerance, tags=["synthesized"],
    )


def check_reference(code: str, entrypoint: str = "reference") -> list[str]:
    """Problems that make a NumPy reference not worth running: syntax, a missing entry point,
    anything outside the allow-list of `builder.llm.reference_rules` (what it may import, the
    builtins and attributes it may use). The sandbox it runs in is the guarantee; this gives
    the LLM a readable reason to fix."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return [f"reference: syntax error at line {exc.lineno}: {exc.msg}"]
    problems = reference_problems(tree)
    if not any(isinstance(n, ast.FunctionDef) and n.name == entrypoint for n in tree.body):
        problems.append(f"reference defines no top-level function {entrypoint}(inputs, sizes)")
    return sorted(set(problems))


def check_program_io(program: str, task: Task) -> list[str]:
    """The program convention, checked on the text: every tensor's file is named and every size
    is a macro with an `#ifndef` default equal to the task's."""
    problems = []
    for t in [*task.inputs, *task.outputs]:
        if f"{t.name}.bin" not in program:
            problems.append(f"program never names data/{t.name}.bin ({'input' if t in task.inputs else 'output'} {t.name})")
    for size, value in task.sizes.items():
        macro = task.size_macros.get(size, size)
        if not re.search(rf"#\s*ifndef\s+{re.escape(macro)}\b", program):
            problems.append(f"program does not declare size {macro} as '#ifndef {macro} / #define {macro} {value} / #endif'")
            continue
        m = re.search(rf"#\s*define\s+{re.escape(macro)}\s+\(?\s*(\d+)", program)
        if m and int(m.group(1)) != value:
            problems.append(f"program's default {macro} is {m.group(1)}, the task says {value}")
    if not re.search(r"\bmain\s*\(", program):
        problems.append("program has no main()")
    return problems


def check_cases(task: Task) -> list[str]:
    """What five cases must cover (the paper's and CUDABench's design): a size that is not a
    multiple of the block size (when the task has sizes), and edge values (when it has inputs;
    a generator has no values to choose). Distributions a dtype cannot hold were refused when
    the task was built (`schemas.ValueDistribution.problem`)."""
    problems = []
    if task.sizes:
        odd = any(v % _BLOCK_MULTIPLE for c in task.cases for v in task.case_sizes(c).values() if v > 1)
        if not odd:
            problems.append(
                f"no case has a size that is not a multiple of {_BLOCK_MULTIPLE} "
                "(add one, e.g. 1000 or 1023, so missing bounds checks fail)")
    edge = any(d.kind in ("edge", "constant") for c in task.cases for d in c.distributions.values())
    if task.inputs and not edge:
        problems.append("no case uses edge values (a distribution of kind 'edge' or 'constant')")
    return problems
