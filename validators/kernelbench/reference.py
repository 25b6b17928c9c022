"""Run a problem's `Model` in its own sandboxed process: inputs and reference outputs per case.

Nothing of the answer is in this process, and nothing of it reaches the answer's: the verifier
keeps the outputs in memory and removes the workspace before the answer runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load as load_tensors

from validators.compare import read_no_follow
from validators.sandbox import (
    GIB,
    Limits,
    harness_failure,
    harness_reached,
    python_executable,
    python_prefixes,
    run_sandboxed,
    workspace,
)
from validators.torch_module import TORCH_ENV, TORCH_PREIMPORT

from .harness import REFERENCE_HARNESS

REFERENCE_LIMITS = Limits(cpu_seconds=300, wall_seconds=400, memory_bytes=16 * GIB,
                          file_size_bytes=1 * GIB, max_processes=64, output_bytes=256 << 10,
                          disk_bytes=4 * GIB)
"""The address space is generous because importing torch maps GiBs it never touches."""


class ReferenceFailed(Exception):
    """The problem's own code failed (the task is broken, not the answer): `kind` and reason."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind


@dataclass
class RefCase:
    name: str
    label: str
    """`get_inputs` (the problem's own draw) or `normal` (float inputs from N(0, 1))."""
    seed: int
    args: list[dict[str, Any]]
    inputs: dict[str, torch.Tensor]
    outputs: list[torch.Tensor]
    input_bytes: bytes = b""
    """The safetensors file of the inputs, copied as is into the answer's workspace."""


@dataclass
class RefGroup:
    seed: int
    init: Any
    cases: list[RefCase] = field(default_factory=list)


def run_reference(problem_source: str, seeds: list[int], *, signed: bool = True,
                  input_seeds: list[int] | None = None, limits: Limits | None = None,
                  max_bytes: int = 1 << 30) -> list[RefGroup]:
    """Inputs and outputs of `Model` per seed. The model is built under each seed; its inputs
    are drawn under `input_seeds` (default: the same seeds). Raises ReferenceFailed for the
    problem's own failure, HarnessError when our harness could not reach the problem's code."""
    with workspace(limits or REFERENCE_LIMITS, prefix="ckd-kb-ref-") as d:
        work = Path(d) / "work"
        work.mkdir()
        (work / "problem.py").write_text(problem_source)
        prefixes = [str(p) for p in python_prefixes()]
        (work / "spec.json").write_text(json.dumps({
            "seeds": seeds, "input_seeds": input_seeds or seeds, "signed": signed,
            "prefixes": prefixes}))
        out = run_sandboxed([python_executable(), "-I", "-c", REFERENCE_HARNESS], work,
                            limits=limits or REFERENCE_LIMITS, env=TORCH_ENV,
                            expose=python_prefixes(), protect=["problem.py", "spec.json"],
                            preimport=TORCH_PREIMPORT)
        try:
            found = json.loads(read_no_follow(work / "out" / "reference.json", root=work))
        except (OSError, ValueError):
            found = None
        if not isinstance(found, dict) or not found.get("ok"):
            if not harness_reached(out.stderr):
                raise harness_failure("KernelBench reference", out.stderr, out.exit_code)
            if isinstance(found, dict) and found.get("reason"):
                raise ReferenceFailed(found.get("kind") or "error", found["reason"])
            if out.timed_out or out.limit_hit:
                raise ReferenceFailed("timeout" if out.timed_out or out.limit_hit == "cpu"
                                      else "limit", f"the reference hit the sandbox "
                                      f"{out.limit_hit or 'wall'} limit after {out.seconds:.0f}s")
            tail = (out.stderr.strip().splitlines() or [f"exit code {out.exit_code}"])[-1]
            raise ReferenceFailed("error", f"the reference process failed: {tail[:300]}")
        groups = []
        for g in found["groups"]:
            group = RefGroup(seed=int(g["seed"]), init=g["init"])
            for c in g["cases"]:
                raw_in = read_no_follow(work / "out" / f"inputs-{c['name']}.safetensors",
                                        root=work, max_bytes=max_bytes)
                raw_out = read_no_follow(work / "out" / f"outputs-{c['name']}.safetensors",
                                         root=work, max_bytes=max_bytes)
                outs = load_tensors(raw_out)
                group.cases.append(RefCase(
                    name=c["name"], label=c["label"], seed=group.seed, args=c["args"],
                    inputs=load_tensors(raw_in), input_bytes=raw_in,
                    outputs=[outs[f"out{k}"] for k in range(len(c["outputs"]))]))
            groups.append(group)
        return groups
