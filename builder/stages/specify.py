"""Specify: turn a record into a task + program + prompt/chat.

A `Specifier` is asked in turn whether it applies to a record; the first that does writes the
specification. `FromTask` serves records whose source already knows the task (builtin,
kernelbench). Records with no task need a specifier that writes one (the LLM synthesis of a
later issue: an OpenAI-compatible client implementing this same interface); until one is
configured they are rejected with reason `no_task_specifier`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from schemas import ChatMessage, Program, Task

from ..item import Item, Synthesis
from .base import Stage

SYSTEM_PROMPT = (
    "You are an expert CUDA programmer. Answer with one complete, standalone CUDA program: "
    "it includes its headers, defines its __global__ kernel(s), and its main() reads every "
    "input from data/<name>.bin and writes every output to data/<name>.bin (raw little-endian "
    "arrays, relative to the working directory). Problem sizes are macros with #ifndef "
    "defaults so they can be overridden with -D definitions."
)


@dataclass
class Specification:
    task: Task
    program: Program
    prompt: str
    messages: list[ChatMessage]
    synthesis: Synthesis | None = None
    """What an LLM did for it (None for a record that carried its task)."""


@runtime_checkable
class Specifier(Protocol):
    name: str
    version: int

    def applies(self, item: Item) -> bool: ...

    def specify(self, item: Item) -> Specification:
        """Write the specification; raise `SpecifyError` to reject the record with a reason."""
        ...

    def config(self) -> dict[str, Any]:
        """Settings the output depends on (model, temperature...): part of the cache key."""
        ...


class SpecifyError(Exception):
    def __init__(self, reason: str, detail: str = "", *, synthesis: Synthesis | None = None):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        self.synthesis = synthesis
        """Tokens spent before giving up still count in the manifest."""


TRANSIENT_PREFIX = "llm_"
"""Rejections from the endpoint's state (rate limits, outages, timeouts), not from the record:
never cached, so a resumed build asks again."""


def chat(prompt: str, response: str, system: str | None = SYSTEM_PROMPT) -> list[ChatMessage]:
    msgs = [ChatMessage(role="system", content=system)] if system else []
    return [*msgs, ChatMessage(role="user", content=prompt), ChatMessage(role="assistant", content=response)]


class FromTask:
    """The record carries its task and its text is the canonical program."""

    name = "from_task"
    version = 1

    def applies(self, item: Item) -> bool:
        return item.raw.task is not None

    def config(self) -> dict[str, Any]:
        return {"system": SYSTEM_PROMPT}

    def specify(self, item: Item) -> Specification:
        task = item.raw.task
        assert task is not None
        program = Program(source=item.raw.text)
        prompt = task.description
        return Specification(task=task, program=program, prompt=prompt, messages=chat(prompt, program.source))


class Specify(Stage):
    name = "specify"
    version = 1

    def __init__(self, specifiers: list[Specifier] | None = None):
        self.specifiers: list[Specifier] = list(specifiers) if specifiers is not None else [FromTask()]

    def config(self) -> dict[str, Any]:
        return {s.name: {"version": s.version, **s.config()} for s in self.specifiers}

    def keep(self, result: Item) -> bool:
        rej = result.rejection
        return rej is None or not rej.reason.startswith(TRANSIENT_PREFIX)

    def process(self, item: Item) -> Item:
        for spec in self.specifiers:
            if spec.applies(item):
                try:
                    out = spec.specify(item)
                except SpecifyError as exc:
                    item.synthesis = exc.synthesis
                    return item.reject(self.name, exc.reason, exc.detail)
                item.task, item.program = out.task, out.program
                item.prompt, item.messages = out.prompt, out.messages
                item.synthesis = out.synthesis
                return item
        what = "a PyTorch module" if item.raw.module is not None else "CUDA code"
        return item.reject(self.name, "no_task_specifier",
                           f"the record is {what} without a task, and no LLM is configured to "
                           "write one (--llm-model, --llm-base-url)")
