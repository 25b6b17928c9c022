"""The LLM specifiers: a raw kernel or a PyTorch module becomes a task and a program.

Two jobs (see `prompts/`):
- `KernelSpecifier`: CUDA code with no task (a scraped file, one kernel of it, a PyTorch
  extension) -> a level-1 description, five cases, a NumPy reference, tolerances and the
  canonical standalone program that keeps the original kernel verbatim;
- `ModuleSpecifier`: a PyTorch module -> the task's tensors, sizes and five cases come from the
  module itself (`builder.modules.module_task`, run in the sandbox), the LLM writes the
  description and the program (keeping the original kernel when the record has one, as the
  AI CUDA Engineer's extensions do); the module is the reference.

Answers are checked (`answers.py`) before anything is built; an invalid answer is asked again
with the problems fed back (the client's `schema_retries`), then the record is rejected with
the reason. `Repairer` is the loop the validate stage runs after a failed verdict. Nothing the
LLM says is trusted: the validator decides what is kept.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from schemas import Program, Task, ValidationResult

from ..item import Item, Synthesis
from ..stages.specify import SYSTEM_PROMPT, Specification, SpecifyError, chat
from . import answers
from .context import ContextOptions, kernel_context
from .fidelity import kernel_kept

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
PROMPT_VERSION = "v1"
MAX_CONTEXT_CHARS = 60_000
"""Untrusted code shown to the LLM per record (the file, then its headers), so one huge file
cannot blow the context or the bill."""


@cache
def prompt(name: str, version: str = PROMPT_VERSION) -> str:
    return (PROMPTS_DIR / f"{name}.{version}.md").read_text()


@functools.cache
def prompts_digest(version: str = PROMPT_VERSION) -> str:
    """Part of every cache key: editing a prompt file re-asks (the next build; read once per
    process, not once per record's key)."""
    h = hashlib.sha256()
    for p in sorted(PROMPTS_DIR.glob(f"*.{version}.md")):
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def fill(template: str, **values: str) -> str:
    # Plain token replacement: the values are code full of braces and dollars.
    for k, v in values.items():
        template = template.replace(f"<<{k}>>", v)
    return template


def untrusted(text: str) -> str:
    """Untrusted code may not close our fence early: the marker is defused inside it."""
    return text.replace("END UNTRUSTED", "END_UNTRUSTED_")


def code_context(item: Item, limit: int = MAX_CONTEXT_CHARS,
                 options: ContextOptions | None = None) -> tuple[str, str]:
    """(the code shown to the LLM, a note about what it holds): the focus kernel's excerpt of
    the record's text (`context.kernel_context`: the kernel, what it uses, its short launchers;
    the whole file when it is small or has one kernel), then the local headers it includes,
    large ones excerpted the same way, each labelled with its path, within `limit` characters."""
    raw = item.raw
    ctx = kernel_context(raw.text, raw.focus, raw.files, path=raw.provenance.path or raw.id,
                         options=options)
    parts = [f"// ===== file: {ctx.main.path} =====\n{ctx.main.text}"]
    used = len(parts[0])
    shown, skipped = [], []
    for h in ctx.headers:
        cut = "" if h.whole else " (excerpt)"
        block = f"// ===== local header: {h.path}{cut} =====\n{h.text}"
        if used + len(block) > limit:
            skipped.append(h.path)
            continue
        parts.append(block)
        used += len(block)
        shown.append(h.path)
    notes = [ctx.note(raw.focus)]
    if shown:
        notes.append(f"The code includes local headers, shown after the file: {', '.join(shown)}.")
    if skipped:
        notes.append(f"Headers too large to show: {', '.join(skipped)}.")
    text = "\n\n".join(parts)
    if len(text) > limit:
        text = text[:limit] + "\n// ... (truncated)"
    return untrusted(text), " ".join(n for n in notes if n)


def _client(cfg: Any):
    from . import LLMClient

    return LLMClient(cfg)


def _llm_errors() -> tuple[type[BaseException], type[BaseException]]:
    from . import LLMAnswerError, LLMError

    return LLMAnswerError, LLMError


def _problems_error(problems: list[str]) -> None:
    if problems:
        raise ValueError("; ".join(problems))


@dataclass
class _LLMSpecifier:
    """What both specifiers share: the config, a lazily made client (never pickled to Ray
    workers) and the fidelity threshold."""

    llm: Any
    """`builder.llm.LLMConfig`."""
    min_kernel_kept: float = 0.9
    context: ContextOptions = field(default_factory=ContextOptions)
    """How much of a scraped file the prompt shows (`context.py`)."""
    _client: Any = field(default=None, repr=False, compare=False)

    name = "llm"
    version = 1

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_client"] = None
        return state

    @property
    def client(self):
        if self._client is None:
            self._client = _client(self.llm)
        return self._client

    def config(self) -> dict[str, Any]:
        return {"llm": self.llm.params(), "prompts": prompts_digest(),
                "min_kernel_kept": self.min_kernel_kept, "context": asdict(self.context)}

    def _synthesis(self) -> Synthesis:
        return Synthesis(specifier=self.name, model=self.llm.model, prompt_version=PROMPT_VERSION)

    def _ask(self, item: Item, messages: list[dict[str, str]], model_cls, validate, syn: Synthesis):
        answer_error, llm_error = _llm_errors()
        try:
            got = self.client.structured(messages, model_cls, validate=validate)
        except answer_error as exc:
            syn.add_usage(getattr(exc, "usage", None))
            raise SpecifyError("invalid_answer", str(getattr(exc, "detail", exc))[:800],
                               synthesis=syn) from None
        except llm_error as exc:
            syn.add_usage(getattr(exc, "usage", None))
            raise SpecifyError(f"llm_{getattr(exc, 'reason', 'error')}",
                               str(getattr(exc, "detail", exc))[:500], synthesis=syn) from None
        syn.add_usage(got.usage)
        syn.attempts += got.attempts
        return got.value


class KernelSpecifier(_LLMSpecifier):
    """CUDA code without a task -> task, cases, NumPy reference and program (see module doc)."""

    name = "llm_kernel"
    version = 2  # 2: the prompt holds the focus kernel's excerpt, not the whole file

    def applies(self, item: Item) -> bool:
        raw = item.raw
        return raw.task is None and raw.module is None and bool(raw.text.strip())

    def messages(self, item: Item) -> list[dict[str, str]]:
        code, note = code_context(item, options=self.context)
        focus = item.raw.focus
        user = fill(prompt("kernel"), RECORD_ID=item.id, CODE=code, FILES_NOTE=note,
                    FOCUS=focus if focus else "(every __global__ function of the code)")
        return [{"role": "system", "content": prompt("system")}, {"role": "user", "content": user}]

    def specify(self, item: Item) -> Specification:
        syn = self._synthesis()
        original, focus = item.raw.text, item.raw.focus

        def validate(ans: answers.KernelAnswer) -> None:
            task = answers.task_from_answer(ans, item.id)
            problems = answers.check_reference(ans.reference)
            problems += answers.check_program_io(ans.program, task)
            problems += answers.check_cases(task)
            kept = kernel_kept(original, ans.program, focus)
            if kept < self.min_kernel_kept:
                problems.append(
                    f"the program keeps only {kept:.0%} of the original kernel"
                    f"{' ' + focus if focus else ''}: copy it verbatim (same name and body)")
            _problems_error(problems)

        ans = self._ask(item, self.messages(item), answers.KernelAnswer, validate, syn)
        task = answers.task_from_answer(ans, item.id)
        syn.kernel_kept = round(kernel_kept(original, ans.program, focus), 4)
        program = Program(source=ans.program)
        return Specification(task=task, program=program, prompt=task.description,
                             messages=chat(task.description, program.source, SYSTEM_PROMPT),
                             synthesis=syn)


def tensor_lines(task: Task) -> str:
    def shape(t) -> str:
        return "[" + ", ".join(str(d) for d in t.shape) + "]"

    lines = [f"- input `{t.name}`: {t.dtype} {shape(t)}  (data/{t.name}.bin)" for t in task.inputs]
    lines += [f"- output `{t.name}`: {t.dtype} {shape(t)}  (data/{t.name}.bin)" for t in task.outputs]
    return "\n".join(lines)


def task_name_for(record_id: str) -> str:
    stem = record_id.rsplit("/", 1)[-1]
    name = re.sub(r"[^A-Za-z0-9_]", "_", stem).strip("_").lower() or "task"
    return ("t_" + name if name[0].isdigit() else name)[:80]


class ModuleSpecifier(_LLMSpecifier):
    """A PyTorch module (with or without an original CUDA extension) -> task from the module,
    description and program from the LLM (see module doc)."""

    name = "llm_module"
    version = 2  # 2: the prompt holds the focus kernel's excerpt, not the whole file

    def applies(self, item: Item) -> bool:
        return item.raw.task is None and item.raw.module is not None

    def messages(self, item: Item, task: Task) -> list[dict[str, str]]:
        raw = item.raw
        has_kernel = bool(raw.text.strip())
        if has_kernel:
            code, note = code_context(item, options=self.context)
            kernel_code = f"\nThe original CUDA implementation (a PyTorch extension):\n\nBEGIN UNTRUSTED\n{code}\nEND UNTRUSTED\n"
            kernel_note = ("An original CUDA implementation follows the module. " + note).strip()
            keep = (" copied verbatim from the original CUDA implementation (same names and "
                    "bodies; replace only the PyTorch extension glue by a plain main())")
        else:
            kernel_code = kernel_note = keep = ""
        sizes = "\n".join(f"- {k} = {v}" for k, v in task.sizes.items()) or "- (none: fixed shapes)"
        user = fill(prompt("module"), RECORD_ID=item.id, MODULE=untrusted(raw.module or ""),
                    KERNEL_NOTE=kernel_note, KERNEL_CODE=kernel_code, TENSORS=tensor_lines(task),
                    SIZES=sizes, KEEP=keep)
        return [{"role": "system", "content": prompt("system")}, {"role": "user", "content": user}]

    def specify(self, item: Item) -> Specification:
        from ..modules import ModuleTaskError, module_task

        syn = self._synthesis()
        raw = item.raw
        try:
            # KernelBook names its class per row; KernelBench and the others call it Model.
            task = module_task(task_name_for(item.id), raw.module or "",
                               entrypoint=raw.meta.get("entry_point") or "Model")
        except ModuleTaskError as exc:
            # e.g. module_too_large, module_needs_cuda, module_not_a_module
            raise SpecifyError(f"module_{exc.reason}", str(exc)[:800], synthesis=syn) from None
        has_kernel = bool(raw.text.strip())

        def validate(ans: answers.ModuleAnswer) -> None:
            problems = answers.check_program_io(ans.program, task)
            if has_kernel:
                kept = kernel_kept(raw.text, ans.program, raw.focus)
                if kept < self.min_kernel_kept:
                    problems.append(f"the program keeps only {kept:.0%} of the original CUDA "
                                    "kernel(s): copy them verbatim")
            _problems_error(problems)

        ans = self._ask(item, self.messages(item, task), answers.ModuleAnswer, validate, syn)
        task = task.model_copy(update={"name": ans.task_name, "description": ans.description})
        task = Task.model_validate(task.model_dump())
        if has_kernel:
            syn.kernel_kept = round(kernel_kept(raw.text, ans.program, raw.focus), 4)
        program = Program(source=ans.program)
        return Specification(task=task, program=program, prompt=task.description,
                             messages=chat(task.description, program.source, SYSTEM_PROMPT),
                             synthesis=syn)


# ------------------------------------------------------------------------------ repair

REPAIRABLE = frozenset({"failed", "compile_error", "runtime_error", "rejected"})
"""Verdicts a corrected program may change. `needs_gpu` and `timeout` are about this machine,
not the program."""


def verdict_details(v: ValidationResult, limit: int = 3000) -> str:
    parts = []
    if v.compile is not None and not v.compile.ok and v.compile.diagnostics:
        parts.append("Compiler output:\n" + v.compile.diagnostics[:1500])
    for c in v.cases:
        if c.status.value != "passed":
            line = f"case {c.case}: {c.status.value}: {c.reason[:300]}"
            if c.stderr_tail.strip():
                line += "\n  stderr: " + c.stderr_tail.strip()[-400:]
            parts.append(line)
    return "\n".join(parts)[:limit]


@dataclass
class Repairer(_LLMSpecifier):
    """After a failed validation of an LLM-written program: feed the verdict back and ask for
    a corrected program, `rounds` times at most. The task does not change; the program must
    still keep the original kernel."""

    rounds: int = 1

    name = "llm_repair"
    version = 1

    def config(self) -> dict[str, Any]:
        return {**super().config(), "rounds": self.rounds}

    def wants(self, item: Item) -> bool:
        v = item.validation
        return (self.rounds > 0 and item.synthesis is not None and v is not None
                and v.status.value in REPAIRABLE and item.task is not None
                and item.program is not None)

    def messages(self, item: Item) -> list[dict[str, str]]:
        assert item.task is not None and item.program is not None and item.validation is not None
        from validators.disclosure import redact_fresh

        # The LLM writes the next program: it must not learn the case drawn for the check (its
        # expected values, its inputs printed by the program), or it could answer from a table.
        v = redact_fresh(item.validation)
        keep = ""
        if item.raw.text.strip():
            focus = item.raw.focus
            keep = (f"Keep the original kernel {focus or ''} exactly as the author wrote it; fix "
                    "the rest of the program (main, launch configuration, helpers).").replace("  ", " ")
        user = (f"Task:\n{item.task.description}\n\nYour program:\n```cuda\n{item.program.source}\n```\n\n"
                + fill(prompt("repair"), STATUS=v.status.value, REASON=v.reason[:600],
                       DETAILS=verdict_details(v), KEEP=keep))
        return [{"role": "system", "content": prompt("system")}, {"role": "user", "content": user}]

    def repair(self, item: Item) -> Program:
        """One round: a corrected program (raises SpecifyError when the LLM gives none)."""
        assert item.synthesis is not None and item.task is not None
        task, raw = item.task, item.raw

        def validate(ans: answers.RepairAnswer) -> None:
            problems = answers.check_program_io(ans.program, task)
            if raw.text.strip():
                kept = kernel_kept(raw.text, ans.program, raw.focus)
                if kept < self.min_kernel_kept:
                    problems.append(f"the program keeps only {kept:.0%} of the original kernel")
            _problems_error(problems)

        ans = self._ask(item, self.messages(item), answers.RepairAnswer, validate, item.synthesis)
        item.synthesis.repair_rounds += 1
        if raw.text.strip():
            item.synthesis.kernel_kept = round(kernel_kept(raw.text, ans.program, raw.focus), 4)
        return Program(source=ans.program)
