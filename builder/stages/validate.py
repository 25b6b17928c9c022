"""Validate: compile and run the program on the task's five cases (validators.engine).

The builder never judges programs itself; it records the engine's verdict, passed or not,
and the filter stage decides. The result is cached under the validators' code fingerprint,
so a changed engine or backend re-validates.
"""

from __future__ import annotations

from typing import Any

from schemas import Status

from ..fingerprint import code_fingerprint, toolchain_fingerprint
from ..item import Item
from .base import Stage


class Validate(Stage):
    name = "validate"
    version = 1

    def __init__(self, backend: str, *, thorough: bool = True):
        self.backend = backend
        self.thorough = thorough

    def config(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "thorough": self.thorough,
            "validators": code_fingerprint("validators"),
            "toolchain": toolchain_fingerprint(self.backend),
        }

    def keep(self, result: Item) -> bool:
        # A timeout may be the machine's load, not the program: a resumed build retries it.
        v = result.validation
        return v is None or v.status != Status.TIMEOUT

    def process(self, item: Item) -> Item:
        from validators.engine import check

        if item.task is None or item.program is None:
            return item.reject(self.name, "not_specified", "no task/program to validate")
        item.validation = check(item.task, item.program, backend=self.backend, thorough=self.thorough)
        return item
