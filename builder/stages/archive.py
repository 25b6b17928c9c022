"""Records whose text is a KernelBench answer kept verbatim (the AI CUDA Engineer archive: a
torch extension source binding `forward`, `meta["form"] == sources.hf.sakana.FORM`).

No LLM touches them. `FromArchive` (specify) makes the task from the record's problem (the
functional reference at the module's sizes) and takes the extension as the response; validate
hands the pair to `validators.kernelbench.verify` (the verifier's own "Sakana form"); filter
keeps those that passed; at write, `choose_per_task` keeps the `--per-task` fastest recorded
attempts of each task, and `archive_summary` counts the rows for the manifest and the report.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from schemas import Program, ValidationResult
from sources.hf.sakana import FORM, runtime_key, select_per_task

from ..item import Item
from .specify import Specification, SpecifyError, chat

PROMPT_VERSION = "archive.v1"
SYSTEM_PROMPT = (
    "You are an expert CUDA programmer. Answer with one PyTorch C++/CUDA extension source: it "
    "includes <torch/extension.h>, defines its __global__ kernel(s) and a host function "
    "`forward` that launches them, and binds `forward` with PYBIND11_MODULE(TORCH_EXTENSION_NAME, "
    "m). It is built with torch.utils.cpp_extension and called in place of `module_fn`."
)
INSTRUCTION = (
    "Write a CUDA extension whose `forward` computes what `module_fn` computes, taking the same "
    "arguments in the same order (the `Model` below calls it as `fn`). The sizes are those of "
    "get_inputs() and get_init_inputs()."
)
PER_TASK_REASON = "per_task_limit"


def is_archive(item: Item) -> bool:
    return item.raw.meta.get("form") == FORM


def _task_name(item: Item) -> str:
    meta = item.raw.meta
    stem = f"sakana_l{meta.get('level', '')}_{meta.get('op_name', '') or meta.get('task_id', '')}"
    return re.sub(r"[^A-Za-z0-9_]", "_", stem).strip("_").lower()[:80]


class FromArchive:
    """The extension as it is, against the problem the source assembled (no LLM)."""

    name = "from_archive"
    version = 1

    def applies(self, item: Item) -> bool:
        return is_archive(item) and item.raw.module is not None

    def config(self) -> dict[str, Any]:
        return {"system": SYSTEM_PROMPT, "instruction": INSTRUCTION, "prompt": PROMPT_VERSION}

    def specify(self, item: Item) -> Specification:
        from ..modules import ModuleTaskError, module_task

        problem = item.raw.module or ""
        prompt = f"{INSTRUCTION}\n\n```python\n{problem.rstrip()}\n```\n"
        try:
            # The task gives the record its five cases; the verdict comes from the verifier.
            task = module_task(_task_name(item), problem, description=prompt)
        except ModuleTaskError as exc:
            raise SpecifyError(f"module_{exc.reason}", str(exc)[:800]) from None
        program = Program(source=item.raw.text)
        return Specification(task=task, program=program, prompt=prompt,
                             messages=chat(prompt, program.source, SYSTEM_PROMPT))


def verify_archive(item: Item, backend: str, *, thorough: bool, fresh_seed: int | None
                   ) -> ValidationResult:
    """The verifier's verdict on the record's extension as it is. Raises
    `validators.kernelbench.KernelBenchInputError` for a pair that is not a problem and an
    extension source (the caller rejects the record with it)."""
    from validators.kernelbench import verify

    assert item.task is not None and item.program is not None
    return verify(item.raw.module or "", item.program.source, backend=backend,
                  fast=not thorough, fresh_seed=fresh_seed, task_name=item.task.name)


def task_key(item: Item) -> str:
    meta = item.raw.meta
    return f"L{meta.get('level', '')}/{meta.get('task_id', '')}"


def choose_per_task(items: list[Item], per_task: int) -> int:
    """Reject (at write, `per_task_limit`) the passing archive attempts beyond the `per_task`
    fastest recorded of their task; how many were rejected. Exact and near duplicates were
    already dropped at dedup, so the attempts kept are distinct."""
    passing = [it for it in items if it.alive and is_archive(it)]
    _, dropped = select_per_task(passing, per_task, task=task_key,
                                 runtime=lambda it: runtime_key(it.raw.meta.get("cuda_runtime")),
                                 tie=lambda it: it.id)
    for it, kept in dropped:
        it.reject("write", PER_TASK_REASON,
                  f"task {task_key(it)} keeps its {per_task} fastest passing attempt(s): "
                  + ", ".join(f"{k.id} ({k.raw.meta.get('cuda_runtime') or '?'} ms)" for k in kept)
                  + f"; this one recorded {it.raw.meta.get('cuda_runtime') or '?'} ms")
    return len(dropped)


ARCHIVE_PREFIX = "hf/sakana/"


def archive_summary(items: list[Item]) -> dict[str, int]:
    """What became of the archive's rows: read, refused by the source (`not_correct`: the
    archive's own verdict; other reasons), verified and passed, failed by reason, needed a GPU,
    kept, and left out by the per-task limit. Keys are flat (`failed:<reason>`) so the
    manifest stays a plain mapping; empty when the build read no archive row."""
    rows = [it for it in items if it.id.startswith(ARCHIVE_PREFIX) or is_archive(it)]
    if not rows:
        return {}
    c: Counter[str] = Counter()
    c["rows"] = len(rows)
    for it in rows:
        v, rej = it.validation, it.rejection
        if v is not None:
            c["verified"] += 1
            if v.status.value == "passed":
                c["passed"] += 1
            elif v.status.value == "needs_gpu":
                c["needs_gpu"] += 1
            elif v.status.value == "error":
                c[f"no_verdict:{v.error_origin.value if v.error_origin else 'validator'}"] += 1
            else:
                c[f"failed:{v.status.value}" + (f":{v.rule}" if v.rule else "")] += 1
        if rej is None:
            c["kept"] += 1
        elif rej.stage == "gather" and rej.reason == "not_correct":
            c["refused:not_correct"] += 1
        elif v is None:
            c[f"not_verified:{rej.reason}"] += 1
        elif rej.reason == PER_TASK_REASON:
            c[PER_TASK_REASON] += 1
    return dict(sorted(c.items()))
