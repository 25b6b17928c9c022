"""Validate: compile and run the program on the task's five cases (validators.engine).

The builder never judges programs itself; it records the engine's verdict, passed or not,
and the filter stage decides. The result is cached under the validators' code fingerprint,
so a changed engine or backend re-validates.
"""

from __future__ import annotations

from typing import Any

from schemas import ErrorOrigin, Status, ValidationResult

from ..fingerprint import code_fingerprint, toolchain_fingerprint
from ..item import Item
from .archive import is_archive, verify_archive
from .base import Stage
from .kernelbench_form import KERNELBENCH, verify_answer
from .specify import SYSTEM_PROMPT, SpecifyError, chat


class Validate(Stage):
    name = "validate"
    version = 3  # 3: archive records are judged by validators.kernelbench

    def __init__(self, backend: str, *, thorough: bool = True, repair: Any = None,
                 seed_key: bytes | None = None, format: str = "program"):
        self.backend = backend
        self.format = format
        """`kernelbench`: every record is a KernelBench answer, judged by validators.kernelbench."""
        self.thorough = thorough
        self.repair = repair
        self.seed_key = seed_key
        """The build's secret (kept in its stage cache, never published): each task's fresh
        seed is derived from it, so a resumed build writes identical shards while no seed can
        be known from anything public. None: a new seed per check."""
        """`builder.llm.specify.Repairer`, or None: LLM-written programs that fail get that many
        rounds of the verdict fed back to the LLM before the record is judged."""

    def config(self) -> dict[str, Any]:
        cfg = {
            "backend": self.backend,
            "thorough": self.thorough,
            "validators": code_fingerprint("validators"),
            "toolchain": toolchain_fingerprint(self.backend),
        }
        if self.repair is not None:
            cfg["repair"] = self.repair.config()
        if self.format != "program":  # the default's keys stay those of earlier builds
            cfg["format"] = self.format
        return cfg

    def keep(self, result: Item) -> bool:
        # A timeout may be the machine's load, not the program, and an error of the validator's
        # own machinery is no verdict at all: a resumed build retries both.
        v = result.validation
        return v is None or not (v.status == Status.TIMEOUT or is_validator_error(v))

    def process(self, item: Item) -> Item:
        from validators.caps import CapExceeded
        from validators.engine import check

        if item.task is None or item.program is None:
            return item.reject(self.name, "not_specified", "no task/program to validate")
        seed = fresh_seed(self.seed_key, item.task.model_dump_json()) if self.seed_key else None
        if self.format == KERNELBENCH:
            return self._verify_kernelbench(item, seed)
        if is_archive(item):
            return self._verify_archive(item, seed)
        try:
            item.validation = check(item.task, item.program, backend=self.backend,
                                    thorough=self.thorough, fresh_seed=seed)
        except CapExceeded as exc:  # the task asks for more than the validator will allocate
            return item.reject(self.name, "too_large", str(exc))
        rounds = 0
        while self.repair is not None and rounds < self.repair.rounds and self.repair.wants(item):
            rounds += 1
            try:
                program = self.repair.repair(item)
            except SpecifyError as exc:
                # No usable correction: the record is judged on the verdict it has.
                item.validation.reason += f" (repair round {rounds}: {exc.reason}: {exc.detail[:200]})"
                break
            item.program = program
            assert item.prompt is not None
            item.messages = chat(item.prompt, program.source, SYSTEM_PROMPT)
            item.validation = check(item.task, program, backend=self.backend, thorough=self.thorough,
                                    fresh_seed=seed)
        return item

    def _verify_kernelbench(self, item: Item, seed: int | None) -> Item:
        # A KernelBench-form answer (the LLM's or an archive row's, inline in ModelNew).
        from validators.kernelbench import KernelBenchInputError

        try:
            item.validation = verify_answer(item, self.backend, thorough=self.thorough,
                                            fresh_seed=seed)
        except KernelBenchInputError as exc:
            return item.reject(self.name, "not_kernelbench", str(exc)[:500])
        return item

    def _verify_archive(self, item: Item, seed: int | None) -> Item:
        # A KernelBench answer kept verbatim: judged by the KernelBench verifier as it is, never
        # repaired (no LLM wrote it).
        from validators.kernelbench import KernelBenchInputError

        try:
            item.validation = verify_archive(item, self.backend, thorough=self.thorough,
                                             fresh_seed=seed)
        except KernelBenchInputError as exc:
            return item.reject(self.name, "not_kernelbench", str(exc)[:500])
        return item


def is_validator_error(v: ValidationResult | None) -> bool:
    """An `error` result whose cause is ours (or of unknown origin): retried, never a verdict."""
    return v is not None and v.status == Status.ERROR and v.error_origin != ErrorOrigin.TASK


def fresh_seed(key: bytes, task_json: str) -> int:
    """A task's fresh seed under the build's secret key (HMAC-SHA256, 31 bits)."""
    import hashlib
    import hmac

    return int.from_bytes(hmac.new(key, task_json.encode(), hashlib.sha256).digest()[:4], "big") >> 1


def seed_key(cache_root: Any) -> bytes:
    """The build's secret for fresh seeds: `CKD_FRESH_SEED_KEY` (hex; a team that wants two
    builds from scratch byte-identical keeps one private key), else one created in the build's
    stage cache (mode 0600) on its first run, so a resumed build reuses it."""
    import os
    import secrets
    from pathlib import Path

    given = os.environ.get("CKD_FRESH_SEED_KEY")
    if given:
        try:
            return bytes.fromhex(given.strip())
        except ValueError as exc:
            raise ValueError("CKD_FRESH_SEED_KEY must be hex (e.g. `openssl rand -hex 32`)") from exc
    path = Path(cache_root) / "fresh-seed.key"
    try:
        return bytes.fromhex(path.read_text().strip())
    except (OSError, ValueError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key.hex())
    return key
