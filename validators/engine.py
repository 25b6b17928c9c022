"""Validate a program for a task: build, run every case in the sandbox, compare, anti-cheat.

`check(...)` never raises for a bad program (every problem is a status with a reason); it
raises `BackendUnavailable` when the backend cannot work here. Each run gets a fresh
directory holding only a copy of the case's inputs; reference outputs are computed in a
separate sandbox and live in the reference cache, outside the program's reach.

Order of decisions:
1. static analysis: features the backend cannot run -> `needs_gpu` (nothing built); static
   anti-cheat reasons (no launch, hard-coded table, literal foreign paths) -> `rejected`
   once the program is known to build (else `compile_error`);
2. per case, per build variant x schedule: build (cached) -> `compile_error` / `needs_gpu`;
   run in the sandbox; the backend's verdict on the outcome (`needs_gpu`, `timeout`,
   `runtime_error`) except that forbidden file or network access seen by the access log is
   `rejected` first; then modified read-only inputs or inputs never opened -> `rejected`;
   a decided run ends the case;
3. outputs must agree across all runs of a case (else `failed`, "schedule-dependent"); then
   constant/all-zero outputs where the reference is not -> `rejected`; then the comparison
   with the reference outputs -> `failed` with the first mismatch, or `passed`;
4. integrity: one case with random inputs, chosen by a seed drawn now, runs with that seed
   (`+fresh`, `ValidationResult.fresh_seed`; answers prepared from the published seeds fail
   it). It is checked first, and the checking builds made for its sizes alone (the cpu
   backend's race build) also run every case that shares them, so a program cannot know which
   sizes those checks see. Every case, once it passed, runs once more with the device seeing
   another draw of its inputs than the host
   (`validators.kernel_work`): outputs that still follow the host's inputs, or a device that
   received nothing that changes with the inputs, are `rejected` ("outputs do not depend on the
   kernels"). Where that run cannot tell (inputs transformed on the host before the upload, no
   random input, a reference that draws its own), the older no-launch run decides (every
   kernel launch a no-op: outputs that still match are rejected), and
   `ValidationResult.kernel_check` says which run decided and why. The runtime's logs those
   runs read must carry the run's nonce (`LOG_TAMPERED`): a log the program pre-created,
   blocked, planted in or replaced is `rejected`, never "could not tell";
5. the overall status is the worst case status (`schemas.worst_status`).

`error` is no verdict: our own machinery failed (the sandbox or a reference harness could not
start: `ErrorOrigin.VALIDATOR`), or the task's reference did (`ErrorOrigin.TASK`). It ranks
below every verdict on the program (a case that ran and failed still fails the program) and
above `passed` (an unchecked case is no pass); `ValidationResult.error_origin` says whose.

Before any of this, `validators.caps` refuses a task whose sizes are negative or too large
(CapExceeded, nothing allocated) and a program too large to analyse (`rejected`); a task
whose tolerance is looser than its output dtype's bound (`schemas.TOLERANCE_BOUNDS`, which
the schema enforces; a task built around it) is `error` of origin `task`, nothing run. Every run
gets its own workspace (`validators.sandbox.workspace`: a size- and inode-limited tmpfs) with
the inputs root-owned and read-only; "never read" comes from their access times.
"""

from __future__ import annotations

import logging
import os
import random
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from schemas import (
    CaseResult,
    CompileInfo,
    ErrorOrigin,
    InputCase,
    OutputCheck,
    Program,
    Status,
    Task,
    ValidationResult,
    worst_status,
)

from . import anticheat, kernel_work
from .backends import Backend, BackendUnavailable, Executable, RunOutcome, get_backend
from .build_cache import BuildCache
from .caps import Caps, check_task, program_reason
from .cases import materialize, write_arrays
from .compare import compare_arrays, read_output
from .reference import BATCH_INPUT_BYTES, ReferenceError, ReferenceRunner
from .run_timing import RUN_TIMING_FILE, RunSplit, read_split
from .safe_fs import copy_untrusted
from .sandbox import Limits, SandboxError, inputs_read, run_sandboxed, workspace

TAIL = 2000
_log = logging.getLogger(__name__)
_PROCESS_FRESH_SEEDS: dict[str, int] = {}

DEFAULT_LIMITS = Limits(cpu_seconds=60, wall_seconds=90)
MIN_RUN_SECONDS = 0.5
"""Less than this left of `Engine.program_seconds` and a run is not started (`timeout`)."""


def _tail(text: str, n: int = TAIL) -> str:
    return text[-n:]


def _resolve(backend: str | Backend) -> Backend:
    if isinstance(backend, Backend):
        why = backend.available()
        if why:
            raise BackendUnavailable(f"backend {backend.name!r} is unavailable: {why}")
        return backend
    return get_backend(backend)


def _analyze(source: str) -> tuple[int, list[str], str]:
    """(number of launch sites, feature flags, decoded text) from the shared static analysis."""
    from .analysis import analyze

    a = analyze(source)
    if a.refused:
        # Not parsed (nested past the parser's limit, too long to parse): no launch found is
        # no evidence; the compiler and the runs decide, as when the analysis fails.
        raise ValueError(a.errors[0] if a.errors else "the source was not parsed")
    launches = len(a.launches) + len(getattr(a, "api_launches", []))  # <<<>>> and cudaLaunchKernel
    return launches, list(a.features), a.text


@dataclass
class _Run:
    """One run of one case under one variant and schedule."""

    variant: str
    schedule: str
    outcome: RunOutcome
    status: Status | None = None
    reason: str = ""
    outputs: list[OutputCheck] = field(default_factory=list)
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    uploads: set[tuple[int, int]] = field(default_factory=set)
    """(bytes, upload_hash) of each host-to-device copy, from the no-launch run."""
    poison: int | None = None
    """The byte device and shared memory started as (None: not poisoned)."""
    poison_log: dict[int, str] = field(default_factory=dict)
    """Poisoned buffers by number, as the runtime described them."""


@dataclass
class Engine:
    """The pieces `check` uses; build one to share caches across many checks."""

    backend: Backend
    limits: Limits = DEFAULT_LIMITS
    cache: BuildCache | None = None
    references: ReferenceRunner | None = None
    access_log: bool = True
    caps: Caps = field(default_factory=Caps.from_env)
    kernel_check: bool = True
    """Run one case with every kernel launch a no-op: outputs that still match are rejected."""
    kernel_work: bool = True
    """Decide kernel dependence by the device-input run first (`validators.kernel_work`); off,
    only the no-launch run (what checks did before it; kept to measure its cost)."""
    fresh_case: bool = True
    """Re-seed one case at validation time (off only to measure what it costs)."""
    fresh_per_check: bool = False
    """Draw the fresh seed anew for every check instead of once per task for the process's
    life: a service whose callers see verdicts (and may learn a case from one) sets it, at the
    cost of one reference run of the fresh case per check."""
    program_seconds: float | None = None
    """The wall seconds the program's own runs may take in one check, all of them together
    (None: the per-run limits only). A caller whose check has a deadline (the service's job
    timeout) sets it below that deadline: a program that spends it is `timeout`, a verdict on
    the program, instead of running the check past the deadline (no verdict, no reward). The
    builds and references, our time, do not count."""
    _shim: Path | None = None
    _budget: threading.local = field(default_factory=threading.local)
    _fresh_seeds: dict[str, int] = field(default_factory=lambda: _PROCESS_FRESH_SEEDS)
    """Shared by every engine of the process (the module-level `check()` makes one per call)."""

    def __post_init__(self) -> None:
        self.references = self.references or ReferenceRunner()
        if self.access_log:
            self._shim = anticheat.shim_library(self.cache)

    # --- the whole check ------------------------------------------------------------------

    def check(self, task: Task, program: Program, *, thorough: bool = True,
              fresh_seed: int | None = None) -> ValidationResult:
        """Validate; raises CapExceeded for a task larger than `caps` (before any allocation).

        One case with random inputs, chosen by a seed drawn now, is run with that seed
        (`fresh_seed` reproduces a result): answers computed ahead from the published seeds
        cannot pass it. The program's runs share `program_seconds`, when set."""
        budget = self.__dict__.setdefault("_budget", threading.local())
        budget.left = getattr(self, "program_seconds", None)
        try:
            return self._check(task, program, thorough=thorough, fresh_seed=fresh_seed)
        finally:
            budget.left = None

    def _check(self, task: Task, program: Program, *, thorough: bool,
               fresh_seed: int | None) -> ValidationResult:
        started = time.monotonic()
        check_task(task, self.caps)
        result = ValidationResult(task=task.name, program_digest=program.digest(),
                                  backend=self.backend.name, status=Status.PASSED)
        loose = task.tolerance_problems()
        if loose:
            # A task built without the schema's check (model_construct, model_copy) gets no
            # silently loose comparison: no verdict on the program, the task is at fault.
            result.error_origin = ErrorOrigin.TASK
            return self._finish(result, Status.ERROR, started, reason="; ".join(loose))
        too_big = program_reason(program, self.caps)
        if too_big:
            return self._finish(result, Status.REJECTED, started, reason=too_big)
        try:
            launches, features, text = _analyze(program.sources_text())
        except Exception as exc:  # analysis must not stop a check
            launches, features, text = 1, [], program.sources_text()
            result.reason = f"static analysis failed: {exc}"
        result.features = features
        blocked = self.backend.unsupported_features(features)
        if blocked:
            return self._finish(result, Status.NEEDS_GPU, started, reason=(
                f"uses {', '.join(blocked)}, which the {self.backend.name} backend cannot run"))
        static = anticheat.static_reasons(text, task, launches, features)
        if static:
            # A cheat that does not even compile is a compile error, not a rejection.
            try:
                exe = self.backend.build_case(program, task.defines_for(task.cases[0]),
                                              size_defaults(task))
            except SandboxError as exc:
                result.error_origin = ErrorOrigin.VALIDATOR
                return self._finish(result, Status.ERROR, started,
                                    reason=f"could not build: {exc}")
            result.compile = exe.compile
            if exe.needs_gpu:
                return self._finish(result, Status.NEEDS_GPU, started,
                                    reason=f"needs a GPU feature: {exe.needs_gpu}")
            if exe.path is None or not exe.compile.ok:
                return self._finish(result, Status.COMPILE_ERROR, started,
                                    reason=_compile_reason(exe.compile))
            return self._finish(result, Status.REJECTED, started, reason="; ".join(static))

        variants = self.backend.variants(thorough=thorough)
        schedules = self.backend.schedules(thorough=thorough)
        if fresh_seed is None and self.fresh_case:
            # One seed per task for this process's life: drawn here, never published, and its
            # reference computed once however many programs are checked against the task (an
            # eval's samples, an RL batch). Programs cannot learn it: each run is sealed off.
            key = _task_key(task)
            fresh_seed = (secrets.randbits(31) if self.fresh_per_check
                          else self._fresh_seeds.setdefault(key, task_fresh_seed(key)))
        cases, fresh = (with_fresh_case(task, fresh_seed) if self.fresh_case
                        else (list(task.cases), None))
        result.fresh_seed = fresh.seed if fresh is not None else None
        kernels = self._kernel_check_plan(features)
        # The fresh case (a published case drawn at random, its values drawn now) goes first:
        # the builds it makes tell which other cases share its checking builds
        # (`Backend.shares_build`). A task without random inputs starts with its first case.
        probe = fresh if fresh is not None else cases[0]
        first_only = self.backend.first_build_variants()
        given = self._prefetch_references(task, cases, kernel_check=not kernels)
        for case in [probe, *(c for c in cases if c is not probe)]:
            is_fresh = fresh is not None and case is fresh
            case_vars = list(case_variants(task, [probe, case], variants, first_only)[1])
            # A checking build made only for the probe's sizes also runs every case whose
            # build it is anyway (the cpu backend's run-time sizes): no extra build, and a
            # program that switches on a size cannot keep it from the sizes it shares.
            case_vars += [v for v in variants if v not in case_vars and self.backend.shares_build(
                program, task.defines_for(probe), task.defines_for(case), size_defaults(task), v)]
            case_vars.sort(key=variants.index)
            # Every case, not one: a host path for the sizes the check does not look at
            # (odd sizes, the edge values) would otherwise pass behind an honest kernel.
            res = self._check_case(task, program, case, case_vars, schedules, result,
                                   kernel_check=not kernels, inputs=given.get(id(case)))
            res.seed, res.fresh = case.seed, is_fresh
            result.cases.append(res)
            if res.status == Status.COMPILE_ERROR and not task.defines_for(case):
                break  # the default build does not compile: no other case will
        order = {c.name: i for i, c in enumerate(cases)}
        result.cases.sort(key=lambda r: order.get(r.case, len(order)))
        if kernels:
            result.kernel_check = kernels
        status = worst_status([c.status for c in result.cases])
        worst = next((c for c in result.cases if c.status == status), None)
        reason = f"case {worst.case}: {worst.reason}" if worst and status != Status.PASSED else ""
        if status == Status.ERROR:
            # Ours outranks the task's: a validator failure may hide what the task would do.
            origins = {c.error_origin for c in result.cases if c.status == Status.ERROR}
            result.error_origin = (ErrorOrigin.VALIDATOR if ErrorOrigin.VALIDATOR in origins
                                   or None in origins else ErrorOrigin.TASK)
        return self._finish(result, status, started, reason=reason)

    def _prefetch_references(self, task: Task, cases: list[InputCase], *,
                             kernel_check: bool = False) -> dict[int, dict[str, np.ndarray]]:
        """Every case's inputs (by `id(case)`), with the uncached reference outputs computed
        in one sandboxed process rather than one per case (`ReferenceRunner.prefetch`); with
        `kernel_check`, also those of each case's device-input run (the second draw)."""
        given: dict[int, dict[str, np.ndarray]] = {}
        batch: list[tuple[InputCase, dict[str, np.ndarray]]] = []
        held = 0
        for c in cases:
            try:
                # A torch reference that draws some inputs itself still takes the others from
                # here; the case's check then reads what it drew from the reference's cache.
                draws = self.references.draws_inputs(task, c)  # type: ignore[union-attr]
                inputs = materialize(task, c)
            except Exception:  # noqa: BLE001 - the case's own check raises it where it always did
                continue
            held += sum(int(a.nbytes) for a in inputs.values())
            if held > BATCH_INPUT_BYTES:
                break  # large cases: one at a time, as their checks draw them
            batch.append((c, inputs))
            if not draws:
                given[id(c)] = inputs
        if kernel_check and self.kernel_work:
            # What the device-input run compares with when every replaced input reached the
            # device whole (the usual case): its references start in the same process.
            for c, inputs in list(batch):
                if id(c) not in given:
                    continue
                second = materialize(task, kernel_work.second_case(c))
                planned = kernel_work.plan(task, c, inputs, second)
                held += sum(int(a.nbytes) for a in planned.second.values())
                if not planned.names or held > BATCH_INPUT_BYTES:
                    continue
                batch.append((c, {**inputs, **planned.second}))
        prefetch = getattr(self.references, "prefetch", None)
        if prefetch is not None:
            try:
                prefetch(task, batch)
            except (SandboxError, OSError):
                pass  # each case's own reference run reports what is wrong
        return given

    def _kernel_check_plan(self, features: list[str]) -> str:
        """'' when the kernel check runs, else why it is skipped.

        A program naming a library (cuBLAS, CUB, Thrust, ...) gets the check too: its library
        calls may compute without a kernel launch, which only the no-launch run depends on. The
        device-input run (`validators.kernel_work`) does not: it judges what the device saw,
        whoever computed on it, so it runs, and only where it cannot tell is the no-launch run
        left out for such a program (`_library_fallback`). Naming a library (the features are
        read from the text: an include, a namespace) waives nothing else. On a backend whose
        libraries launch through its runtime (cuda: Thrust, CUB), the executable says instead
        which copies and launches its runtime cannot follow (`Backend.kernel_work_limits`)."""
        budget = self.__dict__.setdefault("_budget", threading.local())
        budget.libraries = (sorted(anticheat.LIBRARY_FEATURES & set(features))
                            if self.backend.library_calls_are_host_code else [])
        if not self.kernel_check:
            return "skipped: disabled"
        if self.backend.no_launch_env() is None:
            return f"skipped: the {self.backend.name} backend cannot turn launches into no-ops"
        return ""

    def _library_fallback(self, why: str) -> str:
        """For a program naming a library whose last run did library work, the note that
        replaces the no-launch run where the device-input run could not tell (`why`); '' for any
        other program (the no-launch run decides). Library work is what the cpu runtime notes
        (`_read_library_work`): a call of cuBLAS, cuSPARSE, CUB's device-wide algorithms,
        cuRAND's host API or Thrust's device system that computes; a program that only names a
        library, or only moves data with it, gets the no-launch run. Where the last run left no
        such note (it did not finish), naming the library is taken at its word."""
        budget = self.__dict__.get("_budget")
        used = getattr(budget, "libraries", None)
        if not used:
            return ""
        worked = getattr(budget, "library_work", None)
        if worked is not None and not worked:
            return ""
        return (f"skipped: the no-launch run, since library calls ({', '.join(sorted(worked or used))}) "
                f"compute without a kernel launch; the device-input run could not tell ({why})")

    def _finish(self, result: ValidationResult, status: Status, started: float, *,
                reason: str = "") -> ValidationResult:
        result.status = status
        if reason:
            result.reason = reason
        result.seconds = time.monotonic() - started
        return result

    # --- one case ---------------------------------------------------------------------------

    def _check_case(self, task: Task, program: Program, case: InputCase, variants: list[str],
                    schedules: list[str], result: ValidationResult, *,
                    kernel_check: bool = False,
                    inputs: dict[str, np.ndarray] | None = None) -> CaseResult:
        t0 = time.monotonic()
        sizes = task.case_sizes(case)
        if self.references.draws_inputs(task, case):  # type: ignore[union-attr]
            # The torch reference draws some inputs itself: run it first (cached with its
            # outputs, which _judge then finds under the same key).
            try:
                inputs, _, _ = self.references.case_data(task, case)  # type: ignore[union-attr]
            except (ReferenceError, SandboxError) as exc:
                return _error_case(case.name, f"no reference inputs: {exc}", exc,
                                   time.monotonic() - t0)
        elif inputs is None:
            inputs = materialize(task, case)
        ref_error: ReferenceError | None = None
        try:
            # Before any build: when our own harness cannot produce this case's reference, no
            # build or run of the program can give the case a verdict, and a broken environment
            # should cost a build's first records seconds, not compiles. Cached: _judge finds it.
            self.references.outputs(task, case, inputs)  # type: ignore[union-attr]
        except SandboxError as exc:
            return _error_case(case.name, f"no reference outputs: {exc}", exc,
                               time.monotonic() - t0)
        except ReferenceError as exc:
            ref_error = exc  # the task's own failure: the program's runs still come first
        defines = task.defines_for(case)
        runs: list[_Run] = []
        exe: Executable | None = None
        # The checking variants start device and shared memory filled with different bytes:
        # outputs that change with the byte read memory nobody wrote.
        poisons = ({v: POISON_BYTES[i % len(POISON_BYTES)] for i, v in enumerate(variants)}
                   if len(variants) > 1 and self.backend.poison_env(0) is not None else {})
        exes: dict[str, Executable] = {}
        for variant in variants:
            try:
                exe = self.backend.build_case(program, defines, size_defaults(task),
                                              variant=variant)
            except SandboxError as exc:  # the build's sandbox could not be set up: ours
                return _error_case(case.name, f"could not build: {exc}", exc,
                                   time.monotonic() - t0)
            if result.compile is None or (not defines and variant == variants[0]):
                result.compile = exe.compile
            planned = self.backend.schedules_for(variant, variants, schedules)
            fallback = self.backend.fallback_variant(variant)
            failed = exe.needs_gpu or exe.path is None or not exe.compile.ok
            if failed and fallback in exes:
                # A checking build only observes: when it alone does not build, the program is
                # judged by the build it stands in for, and the result says so.
                why = exe.needs_gpu or _compile_reason(exe.compile)
                result.notes.append(f"case {case.name}: the {variant} build failed ({why}); "
                                    f"the {fallback} build ran its schedules instead")
                variant, exe = fallback, exes[fallback]
            # A failed build that names a GPU-only construct is needs_gpu, not compile_error.
            elif exe.needs_gpu:
                return CaseResult(case=case.name, status=Status.NEEDS_GPU,
                                  reason=f"needs a GPU feature: {exe.needs_gpu}",
                                  seconds=time.monotonic() - t0)
            elif exe.path is None or not exe.compile.ok:
                return CaseResult(case=case.name, status=Status.COMPILE_ERROR,
                                  reason=_compile_reason(exe.compile), seconds=time.monotonic() - t0)
            exes[variant] = exe
            poison_env = self.backend.poison_env(poisons[variant]) if variant in poisons else None
            for schedule in planned:
                run = self._run_once(task, exe, case, inputs, sizes, variant, schedule,
                                     extra_env=poison_env)
                run.poison = poisons.get(variant)
                fallback = self.backend.fallback_variant(variant)
                if run.status is not None and fallback in exes and _out_of_time(run):
                    result.notes.append(
                        f"case {case.name}: the {variant} build's {schedule} run stopped "
                        f"({run.reason}); the {fallback} build's run judged it instead")
                    env = (self.backend.poison_env(poisons[fallback]) if fallback in poisons
                           else None)
                    run = self._run_once(task, exes[fallback], case, inputs, sizes, fallback,
                                         schedule, extra_env=env)
                    run.poison = poisons.get(fallback)
                runs.append(run)
                if run.status is not None:
                    # Decided (crash, limit, cheat, no GPU): the remaining variants would only
                    # repeat it at a higher cost, and a hostile program gets one run, not six.
                    return self._judge(task, case, inputs, sizes, runs, time.monotonic() - t0,
                                       ref_error=ref_error)
        for run in runs:  # behaviour CUDA leaves undefined that ran as GPUs do: said, not judged
            for note in self.backend.run_notes(run.outcome):
                if note not in result.notes:
                    result.notes.append(note)
        if poisons:
            uninit = self._uninitialised_reads(task, case, inputs, sizes, runs, exes)
            if uninit:
                last = runs[-1].outcome
                return CaseResult(case=case.name, seconds=time.monotonic() - t0,
                                  schedules=sorted({r.schedule for r in runs}), status=Status.FAILED,
                                  reason=uninit, exit_code=last.exit_code,
                                  stdout_tail=_tail(last.stdout), stderr_tail=_tail(last.stderr))
        judged = self._judge(task, case, inputs, sizes, runs, time.monotonic() - t0,
                             ref_error=ref_error)
        if kernel_check and judged.status == Status.PASSED and exe is not None:
            # Its runs start device memory as this build's runs did: a run that alone left it
            # unpoisoned would tell the program which run it is in.
            exe = exes.get(self.backend.kernel_work_variant(list(exes)), exe)
            note = self._kernel_work(task, exe, case, inputs, sizes, runs[0].arrays,
                                     poison=poisons.get(exe.variant))
            # The first case's note (the fresh case's) stands for the check unless a later
            # case decides otherwise.
            if not result.kernel_check:
                result.kernel_check = note or f"outputs depend on the kernels (case {case.name})"
            if note.startswith(("outputs do not depend", LOG_TAMPERED)):
                judged.status, judged.reason = Status.REJECTED, note
                result.kernel_check = note
            elif note.startswith(NO_KERNEL_CHECK):  # a pass without its check is no pass
                judged.status, judged.reason = Status.ERROR, note
                judged.error_origin = ErrorOrigin.VALIDATOR
                result.kernel_check = note
            judged.seconds = time.monotonic() - t0
        return judged

    def _uninitialised_reads(self, task: Task, case: InputCase, inputs: dict[str, np.ndarray],
                             sizes: dict[str, int], runs: list[_Run],
                             exes: dict[str, Executable]) -> str:
        """A failure reason when two runs of one schedule under different poison bytes disagree,
        naming the buffer: runs that poison only one buffer differently find it."""
        for a in runs:
            for b in runs:
                if not (a.schedule == b.schedule and a.poison is not None and b.poison is not None
                        and a.poison < b.poison):
                    continue
                diff = _first_difference(task, a, b)
                if not diff:
                    continue
                base = b  # bisect on b's build: its poison byte everywhere but buffer k
                exe = exes[base.variant]
                named = ""
                for k, desc in sorted(base.poison_log.items())[:MAX_POISON_PROBES]:
                    env = self.backend.poison_env(base.poison, only=k, alt=a.poison) or {}
                    probe = self._run_once(task, exe, case, inputs, sizes, base.variant,
                                           base.schedule, extra_env=env)
                    if probe.status is None and _first_difference(task, base, probe):
                        named = desc
                        break
                what = named or "memory no thread or copy wrote"
                return (f"reads uninitialised memory: {what} (outputs change when device and "
                        f"shared memory start as 0x{a.poison:02x} instead of 0x{b.poison:02x}: "
                        f"{diff})")
        return ""

    def kernel_seconds(self, task: Task, program: Program, *, repeats: int = 5) -> float | None:
        """The program's kernel time on the task's first case, for the speed term: the median
        over `repeats` runs after one warm-up run, each launch timed alone by the runtime
        (`Backend.timing_env`: streams synchronised, L2 flushed), not the build, the sandbox,
        the context or the host code. None where the backend cannot time, or when a timed run
        fails or writes outputs that do not match the reference (a program that behaves
        differently when timed earns no speed)."""
        import statistics

        case = task.cases[0]
        if self.backend.timing_env("x") is None or self.references.draws_inputs(task, case):  # type: ignore[union-attr]
            return None
        exe = self.backend.build_case(program, task.defines_for(case), size_defaults(task))
        if exe.path is None or not exe.compile.ok or exe.needs_gpu:
            return None
        if self.backend.kernel_work_unusable(exe):
            # The runtime would not see its launches (a static runtime): only the program
            # could write the timing file, and it could read the run's nonce from its
            # environment, which the runtime wipes only where it is loaded first.
            return None
        inputs, sizes = materialize(task, case), task.case_sizes(case)
        try:
            refs, _ = self.references.outputs(task, case, inputs)  # type: ignore[union-attr]
        except (ReferenceError, SandboxError):
            return None
        times: list[float] = []
        for i in range(repeats + 1):
            logs = {TIMING_FILE: ""}
            run = self._run_once(
                task, exe, case, inputs, sizes, exe.variant, "default", logs=logs,
                env_for=lambda w: self.backend.timing_env(str(w / TIMING_FILE)) or {})
            if run.status is not None and run.reason.startswith(LOG_TAMPERED):
                _log.warning("no speed credit: %s", run.reason)
            if run.status is not None or len(run.arrays) < len(task.outputs):
                return None
            for spec in task.outputs:
                out = run.arrays[spec.name]
                if not compare_arrays(spec.name, out, refs[spec.name].reshape(out.shape),
                                      task.tolerance_for(spec.name)).ok:
                    return None
            try:
                seconds = float(logs[TIMING_FILE].split()[0])
            except (IndexError, ValueError):
                return None  # no launch was timed
            if i:  # the first run warms caches, the driver and the GPU's clocks
                times.append(seconds)
        return statistics.median(times)

    def _kernel_work(self, task: Task, exe: Executable, case: InputCase,
                     inputs: dict[str, np.ndarray], sizes: dict[str, int],
                     outputs: dict[str, np.ndarray], poison: int | None = None) -> str:
        """The kernel-work check (`validators.kernel_work`): a rejection reason when the outputs
        follow the host's inputs while the device saw others, '' or a note when the kernels did
        the work; where it cannot tell, the no-launch run decides and the note says both."""
        unusable = self.backend.kernel_work_unusable(exe)
        if unusable:  # neither run would see the program's launches: no verdict either way
            return f"{NO_KERNEL_CHECK}{unusable}"
        copies_unseen, launches_unseen = self.backend.kernel_work_limits(exe)
        if not self.kernel_work:
            why: object = "it is turned off"
        else:
            why = copies_unseen or self._device_inputs_run(task, exe, case, inputs, sizes, poison)
        if isinstance(why, str) and why.startswith(LOG_TAMPERED):
            return why
        if isinstance(why, kernel_work.Verdict):
            if why.kind == "host":
                return why.note
            if why.kind == "device":
                return why.note
            why = why.note
        if launches_unseen:
            # Kernels the no-launch run cannot stop still run there: only its uploads can tell.
            uploaded = self._without_kernels(task, exe, case, inputs, sizes, outputs, poison,
                                             judge_outputs=False)
            return uploaded or (f"skipped: the no-launch run, since {launches_unseen}; the "
                                f"device-input run could not tell ({why})")
        skipped = self._library_fallback(str(why))
        if skipped:
            return skipped
        fallback = self._without_kernels(task, exe, case, inputs, sizes, outputs, poison)
        if fallback.startswith(("outputs do not depend", NO_KERNEL_CHECK, LOG_TAMPERED)):
            return fallback
        said, _, how = (fallback or f"outputs depend on the kernels (case {case.name})").partition(": ")
        how = f" ({how})" if how else ""
        return f"{said}, by the no-launch run{how}: the device-input run could not tell ({why})"

    def _poison_env(self, poison: int | None) -> dict[str, str]:
        return (self.backend.poison_env(poison) or {}) if poison is not None else {}

    def _device_inputs_run(self, task: Task, exe: Executable, case: InputCase,
                           inputs: dict[str, np.ndarray], sizes: dict[str, int],
                           poison: int | None = None) -> kernel_work.Verdict | str:
        """Run the case with the device seeing a second draw of its inputs; a Verdict, or why
        the run could not be made."""
        if self.references.draws_inputs(task, case):  # type: ignore[union-attr]
            return "the reference draws inputs itself"
        if self.backend.kernel_inputs_env("x", "y") is None:
            return f"the {self.backend.name} backend cannot replace the device's inputs"
        second = materialize(task, kernel_work.second_case(case))
        plan = kernel_work.plan(task, case, inputs, second)
        if not plan.names:
            return plan.reason
        files = {kernel_work.INPUTS_FILE: kernel_work.inputs_file(plan, inputs)}
        logs: dict[str, str] = {}

        def env_for(work: Path) -> dict[str, str]:
            return self.backend.kernel_inputs_env(  # type: ignore[return-value]
                str(work / kernel_work.INPUTS_FILE), str(work / kernel_work.LOG_FILE))

        logged = self.backend.upload_log_env() or {}
        poisoned = self._poison_env(poison)
        run = self._run_once(task, exe, case, inputs, sizes, exe.variant, "default",
                             extra_env={**poisoned, **logged}, extra_files=files,
                             env_for=env_for, logs=logs)
        if run.status is not None and run.reason.startswith(LOG_TAMPERED):
            return run.reason  # not "could not tell": the weaker no-launch run must not decide
        if run.status is not None:
            return f"the program did not finish ({run.reason})"
        if len(run.arrays) < len(task.outputs):
            return "the program wrote no usable outputs"
        ranges, returned = kernel_work.parse_log(logs.get(kernel_work.LOG_FILE, ""), plan)
        device, share = kernel_work.device_inputs(inputs, plan, ranges)
        try:
            refs_host, _ = self.references.outputs(task, case, inputs)  # type: ignore[union-attr]
            refs_device, _ = self.references.outputs(  # type: ignore[union-attr]
                task, case, device if any(share.values()) else {**inputs, **plan.second})
        except (ReferenceError, SandboxError) as exc:
            return f"no reference outputs ({exc})"
        if not any(share.values()):
            # No run of an input reached the device: either the host transformed its inputs
            # before the upload (honest), or the device never got anything that depends on them
            # (a mask of ones, a sentinel): the host alone computed the outputs. One run with
            # the host reading the second draw tells them apart by what it uploads.
            if not logged or not run.uploads:
                if logged and _informative(task, refs_host, refs_device):
                    return kernel_work.Verdict("host", kernel_work.NOTHING_UPLOADED.format(
                        case=case.name), share)
                return "no input reached the device by a copy"
            other = self._run_once(task, exe, case, {**inputs, **plan.second}, sizes,
                                   exe.variant, "default", extra_env={**poisoned, **logged})
            if other.status is not None and other.reason.startswith(LOG_TAMPERED):
                return other.reason
            if (other.status is None and other.uploads == run.uploads
                    and _informative(task, refs_host, refs_device)):
                return kernel_work.Verdict("host", kernel_work.NOTHING_UPLOADED.format(
                    case=case.name), share)
            return ("no input reached the device by a copy (mapped or managed memory, or "
                    "inputs transformed on the host)")
        return kernel_work.judge(task, run.arrays, refs_host, refs_device, device, plan, share,
                                 returned, case.name, host_inputs=inputs)

    def _without_kernels(self, task: Task, exe: Executable, case: InputCase,
                         inputs: dict[str, np.ndarray], sizes: dict[str, int],
                         outputs: dict[str, np.ndarray], poison: int | None = None, *,
                         judge_outputs: bool = True) -> str:
        """Run the case once with every launch a no-op. A rejection reason when the outputs
        still match the reference, or when an output the program wrote in its real runs was
        uploaded whole by the host before any kernel ran (a kernel only copied it); '' when
        the kernels matter, or why the check could not decide. Without `judge_outputs` (some
        launches could not be stopped) only the uploads are judged: '' unless they reject."""
        run = self._run_once(task, exe, case, inputs, sizes, exe.variant, "default",
                             extra_env={**self._poison_env(poison),
                                        **(self.backend.no_launch_env() or {})})
        given = {upload_hash(a.tobytes()) for a in inputs.values()}
        for name, arr in outputs.items():
            h = upload_hash(arr.astype(arr.dtype.newbyteorder("<")).tobytes())
            if h in run.uploads and h not in given and arr.size > 1:
                return (f"outputs do not depend on the kernels: output {name} was uploaded to the "
                        f"device whole before any kernel ran (computed on the host; a kernel "
                        f"only copied it)")
        if run.status is not None and run.reason.startswith(LOG_TAMPERED):
            return run.reason  # a stop of its own making must not read as "the kernels matter"
        if not judge_outputs:
            return ""
        if run.status == Status.ERROR:
            return f"{NO_KERNEL_CHECK}{run.reason}"
        # Kernels that matter, and how it showed: said, so a surprising pass can be traced.
        if run.status is not None:
            return (f"outputs depend on the kernels (case {case.name}): without them the program "
                    f"stopped ({run.status.value}: {run.reason[:200]})")
        if len(run.arrays) < len(task.outputs):
            return (f"outputs depend on the kernels (case {case.name}): without them the program "
                    f"wrote no usable outputs")
        try:
            refs, _ = self.references.outputs(task, case, inputs)  # type: ignore[union-attr]
        except (ReferenceError, SandboxError) as exc:
            return f"skipped: no reference outputs ({exc})"
        informative = False
        for spec in task.outputs:
            out = run.arrays[spec.name]
            ref = refs[spec.name].reshape(out.shape)
            if not compare_arrays(spec.name, out, ref, task.tolerance_for(spec.name)).ok:
                return (f"outputs depend on the kernels (case {case.name}): without them "
                        f"{spec.name} differs from the reference")
            r = ref.ravel()
            informative |= r.size > 1 and not bool(np.all(r == r[0]))
        if not informative:
            return "skipped: constant reference outputs cannot tell"
        if _reference_is_an_input(task, refs, inputs):
            # A case whose answer is one of its inputs (a sorted input to sort, a grid with no
            # interior to update): kernels that work in place and do nothing leave it there.
            return "skipped: the reference equals an input in this case, so it cannot tell"
        return ("outputs do not depend on the kernels: with every kernel launch a no-op the "
                "outputs still match the reference (computed on the host?)")

    def _run_once(self, task: Task, exe: Executable, case: InputCase, inputs: dict[str, np.ndarray],
                  sizes: dict[str, int], variant: str, schedule: str,
                  extra_env: dict[str, str] | None = None,
                  extra_files: dict[str, bytes] | None = None,
                  env_for: Callable[[Path], dict[str, str]] | None = None,
                  logs: dict[str, str] | None = None) -> _Run:
        """One sandboxed run. `extra_files` are written beside the inputs (the program's to
        read or remove), `env_for(work)` adds settings that name the work folder, and the
        runtime's files named in `logs` are read back into it after the run. Within the check's
        `program_seconds`: a run gets at most what its runs so far left of it."""
        left = getattr(self.__dict__.get("_budget"), "left", None)
        if left is None:
            return self._run_limited(task, exe, case, inputs, sizes, variant, schedule,
                                     extra_env, extra_files, env_for, logs, cap=None)
        spent = f"the program's runs took the check's {self.program_seconds:g} s"
        if left < MIN_RUN_SECONDS:
            return _Run(variant, schedule, RunOutcome(exit_code=None, timed_out=True),
                        Status.TIMEOUT, f"{spent} before this run (its time limit for all "
                        "runs together)")
        run = self._run_limited(task, exe, case, inputs, sizes, variant, schedule, extra_env,
                                extra_files, env_for, logs, cap=left)
        self._budget.left = left - run.outcome.seconds
        if run.status == Status.TIMEOUT and run.outcome.extra.get("capped"):
            run.reason = (f"{spent} (its time limit for all runs together; this run was "
                          f"stopped at {run.outcome.seconds:.1f} s)")
        return run

    def _run_limited(self, task: Task, exe: Executable, case: InputCase,
                     inputs: dict[str, np.ndarray], sizes: dict[str, int], variant: str,
                     schedule: str, extra_env: dict[str, str] | None,
                     extra_files: dict[str, bytes] | None,
                     env_for: Callable[[Path], dict[str, str]] | None,
                     logs: dict[str, str] | None, *, cap: float | None) -> _Run:
        limits = _scaled(self.limits.with_overrides(self.backend.sandbox_overrides(exe)),
                         self.backend.time_scale(exe))
        capped = cap is not None and cap < limits.wall_seconds
        if capped:
            limits = limits.with_overrides(
                wall_seconds=cap, cpu_seconds=min(limits.cpu_seconds or cap, cap))
        reserve = sum(int(a.nbytes) for a in inputs.values())
        budget = self.__dict__.setdefault("_budget", threading.local())
        budget.library_work = None  # `_library_fallback`: this run's, once it finished
        with workspace(limits, reserve_bytes=reserve) as root:
            work = root / "work"
            work.mkdir()
            write_arrays(inputs, work)
            for rel, data in (extra_files or {}).items():
                (work / rel).write_bytes(data)
            protect = {f"data/{name}.bin" for name in inputs}
            before = anticheat.input_digests(work, task)
            argv, env = self.backend.command(exe, [], schedule=schedule)
            env = {**env, **(extra_env or {}), **(env_for(work) if env_for else {})}
            nonce = ""
            if any(k.startswith("CUDASHIM_") for k in env):  # the cpu runtime's own logs
                env["CUDASHIM_UPLOAD_LOG"] = str(work / UPLOAD_LOG).ljust(SHIM_LOG_WIDTH)
                env["CUDASHIM_POISON_LOG"] = str(work / POISON_LOG).ljust(SHIM_LOG_WIDTH)
                # The runtime creates its logs before the program's code runs and writes this
                # first in each at exit (`_log_tampering`); one width, so every run's wiped
                # environment has the same shape.
                nonce = secrets.token_hex(16)
                env["CUDASHIM_LOG_NONCE"] = nonce
                # The runtime's fatal lines carry a tag of their own (`cpu.diagnostics.
                # runtime_verdict`): "needs a GPU" printed by the program is not the runtime's.
                env["CUDASHIM_FATAL_TAG"] = fatal_tag = secrets.token_hex(16)
                if env_for is None:
                    # Every run gets the kernel-work run's input file (empty: nothing replaced),
                    # which the runtime removes as it starts: the work folder changes alike in
                    # every run, so its times do not single out the kernel-work run.
                    (work / kernel_work.INPUTS_FILE).write_bytes(b"")
                    env.update(self.backend.kernel_inputs_env(
                        str(work / kernel_work.INPUTS_FILE), str(work / kernel_work.LOG_FILE)) or {})
            preload: list[Path] = []
            if variant not in ("memcheck", "racecheck"):
                preload += self.backend.preloads(exe)  # an interposed runtime (cuda)
            if self._shim is not None and variant not in ("memcheck", "racecheck"):
                preload.append(self._shim)
                env["CKD_ACCESS_LOG"] = str(work / anticheat.ACCESS_LOG)
                env.setdefault("ASAN_OPTIONS", "verify_asan_link_order=0")
            try:
                outcome = run_sandboxed(argv, work, limits=limits, env=env, preload=preload,
                                        expose=self.backend.expose(exe),
                                        protect=sorted(protect))
            except SandboxError as exc:  # set-up failed before the program started: ours
                return _Run(variant, schedule, RunOutcome(exit_code=None, stderr=str(exc)),
                            Status.ERROR, f"could not run: {exc}")
            outcome.schedule = schedule
            if capped:
                outcome.extra["capped"] = "1"  # its limit was what the check's share left
            if nonce:
                outcome.extra["fatal_tag"] = fatal_tag
            run = _Run(variant, schedule, outcome)
            entries = anticheat.read_access_log(work) if self._shim is not None else None
            verdict = self.backend.classify(exe, outcome)
            # The runtime itself (e.g. ASan symbolising) may open the executable and the shim.
            own = tuple(str(p.parent) + "/" for p in (exe.path, *preload) if p is not None)
            own += self.backend.runtime_paths()
            reasons = anticheat.access_reasons(entries, work, task, extra_allowed=own,
                                               extra_reads=self.backend.runtime_reads(),
                                               extra_removes=self.backend.runtime_removes())
            forbidden = [r for r in reasons if not r.startswith("never read input")]
            if forbidden and verdict.status is not None and verdict.reason.startswith(
                "out-of-bounds access"
            ):
                # A sanitizer report is the run's cause: its symbolizer reads files too.
                run.status = verdict.status
                run.reason = f"{verdict.reason}; also {'; '.join(forbidden)}"
                return run
            if forbidden:
                # Before a `needs_gpu` too: what the program did before it stopped is judged.
                run.status, run.reason = Status.REJECTED, "; ".join(forbidden)
                return run
            if verdict.status is not None:
                run.status, run.reason = verdict.status, verdict.reason
                return run
            # Access times of root-owned inputs, where the run could not forge them; the access
            # log (which a program can bypass or delete) only where they are not available.
            # Read before hashing the inputs below: our own read sets them too.
            read = inputs_read(work, sorted(protect))
            modified = anticheat.modified_inputs(before, work, task)
            if read is not None:
                unread = [f"never read input {rel[5:-4]} ({rel}): outputs cannot depend on it"
                          for rel, seen in sorted(read.items()) if not seen]
            else:
                unread = [r for r in reasons if r.startswith("never read input")]
            if modified or unread:
                run.status, run.reason = Status.REJECTED, "; ".join([*modified, *unread])
                return run
            tampered = _log_tampering(work, _logs_read(env, logs), nonce) if nonce else ""
            if tampered:
                run.status, run.reason = Status.REJECTED, tampered
                return run
            self._compare(task, work, sizes, run)
            run.uploads = _read_uploads(work)
            budget.library_work = _read_library_work(work, nonce) if nonce else None
            run.poison_log = _read_poison_log(work)
            if logs is not None:
                from .safe_fs import read_regular

                for rel in list(logs) or [kernel_work.LOG_FILE]:
                    try:
                        logs[rel] = _log_body(read_regular(work, rel, 1 << 24).decode(
                            "ascii", "replace"))
                    except OSError:
                        logs[rel] = ""
            return run

    def _compare(self, task: Task, work: Path, sizes: dict[str, int], run: _Run) -> None:
        # Reference outputs are attached later (see _judge) so a run's directory can go now.
        for spec in task.outputs:
            arr, why = read_output(work, spec, sizes)
            if arr is None:
                run.outputs.append(OutputCheck(name=spec.name, ok=False, reason=why))
            else:
                run.arrays[spec.name] = arr

    # --- verdict of a case -------------------------------------------------------------------

    def _judge(self, task: Task, case: InputCase, inputs: dict[str, np.ndarray],
               sizes: dict[str, int], runs: list[_Run], seconds: float, *,
               ref_error: ReferenceError | None = None) -> CaseResult:
        """`ref_error`: the reference already failed for this case (not run again)."""
        base = dict(case=case.name, seconds=seconds, schedules=sorted({r.schedule for r in runs}))
        last = runs[-1].outcome
        tails = dict(exit_code=last.exit_code, stdout_tail=_tail(last.stdout),
                     stderr_tail=_tail(last.stderr))
        decided = [r for r in runs if r.status is not None]
        if decided:
            r = max(decided, key=lambda r: _severity(r.status))
            where = f" [{r.variant}/{r.schedule}]" if len(runs) > 1 else ""
            return CaseResult(**base, **{**tails, "exit_code": r.outcome.exit_code,
                                         "stdout_tail": _tail(r.outcome.stdout),
                                         "stderr_tail": _tail(r.outcome.stderr)},
                              status=r.status, reason=r.reason + where,
                              error_origin=(ErrorOrigin.VALIDATOR if r.status == Status.ERROR
                                            else None))
        try:
            if ref_error is not None:
                raise ref_error
            refs, _ = self.references.outputs(task, case, inputs)  # type: ignore[union-attr]
        except (ReferenceError, SandboxError) as exc:
            return CaseResult(**base, **tails, status=Status.ERROR,
                              error_origin=_origin_of(exc),
                              reason=f"no reference outputs: {exc}")
        # Results must agree across schedules/variants: a difference is a race.
        first = runs[0]
        for other in runs[1:]:
            diff = _first_difference(task, first, other)
            if diff:
                return CaseResult(**base, **tails, status=Status.FAILED, reason=(
                    f"schedule-dependent: {diff} between {first.variant}/{first.schedule} and "
                    f"{other.variant}/{other.schedule} (a race or a missing barrier?)"))
        checks: list[OutputCheck] = list(first.outputs)
        degenerate: list[str] = []
        for spec in task.outputs:
            if spec.name not in first.arrays:
                continue
            out = first.arrays[spec.name]
            ref = refs[spec.name].reshape(out.shape)
            checks.append(compare_arrays(spec.name, out, ref, task.tolerance_for(spec.name)))
            bad = anticheat.degenerate_output(spec.name, out, ref)
            if bad:
                degenerate.append(bad)
        order = {t.name: i for i, t in enumerate(task.outputs)}
        checks.sort(key=lambda c: order.get(c.name, 0))
        if degenerate:
            return CaseResult(**base, **tails, outputs=checks, status=Status.REJECTED,
                              reason="; ".join(degenerate))
        failed = [c for c in checks if not c.ok]
        if failed:
            return CaseResult(**base, **tails, outputs=checks, status=Status.FAILED,
                              reason="; ".join(c.reason for c in failed))
        return CaseResult(**base, **tails, outputs=checks, status=Status.PASSED)


NO_KERNEL_CHECK = "the kernel-dependence run could not be carried out: "
LOG_TAMPERED = "the runtime's log was not the runtime's: "
"""A run whose runtime log (kernel-work substitutions, uploads, poisoned buffers, kernel time)
is missing, is not a regular file, or lacks this run's nonce line: the program's doing (the
runtime creates each before the program's code runs and writes it at exit), so the case is
rejected, never left to a weaker check ("could not tell") and never given speed credit."""
LOG_HEADER = "ckd-runtime-log"
TIMING_FILE = ".ckd-kernel-timing"
UPLOAD_LOG = anticheat.UPLOAD_LOG
POISON_LOG = anticheat.POISON_LOG
POISON_BYTES = (0xA5, 0x5A)
"""Bytes the checking variants fill fresh device and shared memory with: as floats one near zero
(-2.9e-16) and one far from it (1.5e16), far apart as integers, so a read of either shows in the
outputs of one or the other. The first alone serves `--fast` and the no-launch run: near zero, a
kernel's result that enters the outputs below the tolerance (x + 1e-5 * k) shows as irrelevant
there. Where a reference is zero it reads as a result, so an output element holding it in every
byte is judged as one nothing wrote (`validators.kernelbench.verify.unwritten_elements`)."""


def thorough_plan(backend: Backend) -> list[tuple[str, str, int | None]]:
    """(variant, schedule, poison byte or None) of every run a thorough check makes of a case,
    as `Engine.check` plans them: each checking build under its share of the schedules, device
    and shared memory starting with a different byte in each build (where the backend can)."""
    variants = backend.variants(thorough=True)
    schedules = backend.schedules(thorough=True)
    poisons = len(variants) > 1 and backend.poison_env(0) is not None
    return [(v, s, POISON_BYTES[i % len(POISON_BYTES)] if poisons else None)
            for i, v in enumerate(variants) for s in backend.schedules_for(v, variants, schedules)]
MAX_POISON_PROBES = 16
SHIM_LOG_WIDTH = 160
"""Log paths are padded like the shim's other settings (see backends/cpu.py `_padded`)."""
_C0, _C1, _C2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def _scaled(limits: Limits, scale: float) -> Limits:
    if scale == 1.0:
        return limits
    return limits.with_overrides(
        cpu_seconds=None if limits.cpu_seconds is None else limits.cpu_seconds * scale,
        wall_seconds=None if limits.wall_seconds is None else limits.wall_seconds * scale)


def _informative(task: Task, a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """Whether two reference outputs differ beyond the task's tolerance."""
    for spec in task.outputs:
        if not compare_arrays(spec.name, a[spec.name], b[spec.name].reshape(a[spec.name].shape),
                              task.tolerance_for(spec.name)).ok:
            return True
    return False


def _reference_is_an_input(task: Task, refs: dict[str, np.ndarray],
                           inputs: dict[str, np.ndarray]) -> bool:
    """Whether every output's reference equals (within its tolerance) an input array of as
    many elements."""
    for spec in task.outputs:
        ref = refs[spec.name]
        if not any(a.size == ref.size and a.size > 1 and compare_arrays(
                spec.name, a.reshape(ref.shape).astype(ref.dtype, copy=False), ref,
                task.tolerance_for(spec.name)).ok for a in inputs.values()):
            return False
    return True


def upload_hash(data: bytes) -> tuple[int, int]:
    """(length, hash) of bytes as the cpu runtime notes an upload (see `note_upload_impl` in
    validators/cpu/runtime): 64-bit words, each mixed with its index, summed mod 2^64."""
    n = len(data)
    words = np.frombuffer(data + b"\0" * (-n % 8), dtype="<u8")
    idx = np.arange(words.size, dtype=np.uint64)
    with np.errstate(over="ignore"):
        mixed = (words ^ (idx * np.uint64(_C1))) * np.uint64(_C2)
        h = (np.uint64(n) * np.uint64(_C0) + mixed.sum(dtype=np.uint64)) if n else np.uint64(0)
    return n, int(h)


def _logs_read(env: dict[str, str], logs: dict[str, str] | None) -> list[str]:
    """The runtime logs a run's caller relies on, by what the run's settings turned on (the
    runtime writes every log it is given; these are the ones a verdict reads)."""
    names = list(logs or {}) or ([kernel_work.LOG_FILE] if logs is not None else [])
    if "1" in (env.get("CUDASHIM_NO_LAUNCH", "").strip(), env.get("CUDASHIM_LOG_UPLOADS", "").strip()):
        names.append(UPLOAD_LOG)
    if env.get("CUDASHIM_POISON", "").strip():
        names.append(POISON_LOG)
    return list(dict.fromkeys(names))


def _log_tampering(work: Path, names: list[str], nonce: str) -> str:
    """'' when each log starts with this run's nonce line, else a `LOG_TAMPERED` reason.

    The runtime (cpu: `cudashim_runtime.cpp`; cuda: `cuda_interposer.cpp`) opens each log with
    O_EXCL before the program's code runs, holds it, and at exit empties it and writes the
    nonce line and its text through that descriptor: a log pre-created, made unwritable, planted
    in or replaced by the program lacks the line. The program shares the runtime's address space
    and could read the nonce there to forge a whole log: this raises the bar, no more."""
    from .safe_fs import read_regular

    for rel in names:
        try:
            # Whole (a size limit's refusal would read as tampering): the runtime caps each
            # log's text at 16 MiB, and the nonce line comes on top.
            head = read_regular(work, rel, 1 << 25)[:256].decode("ascii", "replace")
        except OSError:
            return f"{LOG_TAMPERED}{rel} is missing, not a regular file, or over 32 MiB"
        first = head.split("\n", 1)[0]
        if first == f"{LOG_HEADER} {nonce}":
            continue
        if not head:
            return (f"{LOG_TAMPERED}{rel} is empty (the run ended without the runtime's exit, "
                    f"e.g. by _exit, or the log was emptied)")
        return f"{LOG_TAMPERED}{rel} lacks this run's nonce (replaced or rewritten by the program)"
    return ""


def _log_body(text: str) -> str:
    """A runtime log without its nonce line."""
    return text.split("\n", 1)[1] if text.startswith(LOG_HEADER + " ") and "\n" in text else text


def _read_uploads(work: Path) -> set[tuple[int, int]]:
    from .safe_fs import read_regular

    try:
        text = read_regular(work, UPLOAD_LOG, 1 << 22).decode("ascii", "replace")
    except OSError:
        return set()
    out = set()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            out.add((int(parts[0]), int(parts[1])))
    return out


def _read_library_work(work: Path, nonce: str) -> set[str] | None:
    """The libraries whose calls computed in a run: the "library <name> <first call>" lines the
    cpu runtime writes in its upload log (`_Note_library_work` in validators/cpu/runtime); None
    when the log is not the runtime's of this run."""
    from .safe_fs import read_regular

    try:
        text = read_regular(work, UPLOAD_LOG, 1 << 25).decode("ascii", "replace")
    except OSError:
        return None
    lines = text.splitlines()
    if not lines or lines[0] != f"{LOG_HEADER} {nonce}":
        return None
    return {ln.split()[1] for ln in lines[1:] if ln.startswith("library ") and len(ln.split()) > 1}


def _read_poison_log(work: Path) -> dict[int, str]:
    from .safe_fs import read_regular

    try:
        text = read_regular(work, POISON_LOG, 1 << 22).decode("utf-8", "replace")
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        k, _, desc = line.partition("\t")
        if k.isdigit() and desc:
            out[int(k)] = desc[:200]
    return out


def task_fresh_seed(task_key: str) -> int:
    """A task's fresh seed for this process: drawn at random, or, under `CKD_FRESH_SEED_KEY`
    (hex), derived from that secret and the task (HMAC-SHA256, 31 bits), so that a run can be
    repeated with the same fresh cases (the test suite prints its key). A check that draws anew
    every time (`fresh_per_check`, the service) never uses the key: replicas sharing it would
    draw the same sequence."""
    secret = os.environ.get("CKD_FRESH_SEED_KEY", "").strip()
    if not secret:
        return secrets.randbits(31)
    try:
        raw = bytes.fromhex(secret)
    except ValueError as exc:
        raise ValueError("CKD_FRESH_SEED_KEY must be hex (e.g. `openssl rand -hex 32`)") from exc
    import hashlib
    import hmac

    return int.from_bytes(hmac.new(raw, task_key.encode(), hashlib.sha256).digest()[:4], "big") >> 1


def _task_key(task: Task) -> str:
    import hashlib

    return hashlib.sha256(task.model_dump_json().encode()).hexdigest()


SEEDED_KINDS = {"uniform", "normal", "randint", "permutation", "edge", "reference"}


def with_fresh_case(task: Task, seed: int | None = None) -> tuple[list[InputCase], InputCase | None]:
    """The task's cases with one of those whose inputs are drawn at random, chosen by the seed,
    re-seeded now (`seed` to reproduce a run): (cases, the fresh case or None when no input
    is random).

    Its sizes, distributions and build stay the published case's; only the values change, so
    it costs no extra build and no extra run, and a table of answers computed ahead from the
    published seeds does not match it."""
    from .cases import default_distribution

    seeded = [i for i, case in enumerate(task.cases)
              if {(case.distributions.get(t.name) or default_distribution(t)).kind
                  for t in task.inputs} & SEEDED_KINDS]
    if not seeded:
        return list(task.cases), None
    new_seed = seed if seed is not None else secrets.randbits(31)
    # Which case, as well as its values, follows from the secret seed: the checks made on the
    # fresh case's sizes alone (the race build where its build is not shared) cannot be
    # steered to by a program that behaves only at the sizes it expects to be checked.
    i = seeded[random.Random(new_seed).randrange(len(seeded))]
    fresh = task.cases[i].model_copy(update={"seed": new_seed,
                                             "name": f"{task.cases[i].name}+fresh"})
    return [*task.cases[:i], fresh, *task.cases[i + 1:]], fresh


def _origin_of(exc: BaseException) -> ErrorOrigin:
    """A reference that ran and failed is the task's fault; a sandbox or harness that could not
    start is ours."""
    return ErrorOrigin.VALIDATOR if isinstance(exc, SandboxError) else ErrorOrigin.TASK


def _error_case(case: str, reason: str, exc: BaseException, seconds: float) -> CaseResult:
    return CaseResult(case=case, status=Status.ERROR, error_origin=_origin_of(exc),
                      reason=reason, seconds=seconds)


def _severity(status: Status | None) -> int:
    from schemas.validation import STATUS_SEVERITY

    return STATUS_SEVERITY[status] if status is not None else -1


def size_defaults(task: Task) -> dict[str, int]:
    """The sizes the program writes itself, by macro name (what `Task.defines_for` leaves out),
    when another case of the task sets every one of them (its build is the one the case that
    changes none could share); else none: an attempt no other case makes would cost a build."""
    defaults = {task.size_macros.get(k, k): v for k, v in task.sizes.items()}
    if defaults and any(task.defines_for(c).keys() == defaults.keys() for c in task.cases):
        return defaults
    return {}


def case_variants(task: Task, cases: list[InputCase], variants: list[str],
                  first_build_only: frozenset[str]) -> list[list[str]]:
    """The build variants each case runs: all of them on the cases built like the first case
    (same defines: no extra build), the others without `first_build_only`."""
    first = task.defines_for(cases[0]) if cases else {}
    return [variants if task.defines_for(c) == first else
            [v for v in variants if v not in first_build_only] for c in cases]


def _out_of_time(run: _Run) -> bool:
    """The run was stopped by a time, CPU or memory limit (not by what the program did)."""
    return run.outcome.timed_out or run.outcome.limit_hit in ("cpu", "memory")


def _compile_reason(info: CompileInfo) -> str:
    lines = [ln for ln in info.diagnostics.splitlines() if "error" in ln.lower()]
    first = lines[0] if lines else (info.diagnostics.strip().splitlines() or ["build failed"])[0]
    return f"does not compile: {first.strip()[:300]}"


def _first_difference(task: Task, a: _Run, b: _Run) -> str:
    for spec in task.outputs:
        x, y = a.arrays.get(spec.name), b.arrays.get(spec.name)
        if (x is None) != (y is None):
            return f"output {spec.name} written in one run only"
        if x is None or y is None:
            continue
        if x.shape != y.shape or x.tobytes() != y.tobytes():
            # Float atomics and reductions legitimately round differently with the order of
            # blocks and threads (on a GPU too): within the task's tolerance is not a race.
            if (x.shape == y.shape and x.dtype.kind == "f"
                    and compare_arrays(spec.name, x, y, task.tolerance_for(spec.name)).ok):
                continue
            xf, yf = x.ravel(), y.ravel()
            same = (xf == yf) | (np.isnan(xf) & np.isnan(yf)) if xf.dtype.kind == "f" else xf == yf
            idx = int(np.argmin(same)) if not same.all() else 0
            return (f"output {spec.name} differs at index {idx} "
                    f"({xf[idx].item()!r} vs {yf[idx].item()!r})")
    return ""


def check(task: Task, program: Program, *, backend: str | Backend = "auto", thorough: bool = True,
          limits: Limits | None = None, cache: BuildCache | None = None,
          fresh_seed: int | None = None) -> ValidationResult:
    """Validate `program` for `task` (see the module docstring)."""
    be = _resolve(backend)
    if cache is not None and isinstance(backend, str) and hasattr(be, "cache"):
        be.cache = cache  # a backend made here builds into the caller's cache
    engine = Engine(be, limits=limits or DEFAULT_LIMITS, cache=cache)
    return engine.check(task, program, thorough=thorough, fresh_seed=fresh_seed)


# --- standalone programs (HeCBench style) ---------------------------------------------------

@dataclass
class ProgramRun:
    """What `run_program` reports."""

    status: Status
    reason: str
    compile: CompileInfo
    outcome: RunOutcome | None
    build_seconds: float
    run_seconds: float
    outputs: list[str] = field(default_factory=list)
    """Files the program created or changed, copied to `keep_outputs` (relative paths)."""
    timing: RunSplit | None = None
    """Where the run's time went (`validators.run_timing`), where the runtime reported it."""
    notes: list[str] = field(default_factory=list)
    """What the runtime said without failing the run (`Backend.run_notes`: portability)."""


class RunDirError(ValueError):
    """A run directory `run_program` cannot lay out as asked: two entries of one name, or a
    start folder (`cwd`) that is not a folder of it. The message names what clashed."""


def _check_run_dir_names(paths: list[Path]) -> None:
    """Every entry copied into the run directory lands at its own name."""
    seen: dict[str, Path] = {}
    for p in paths:
        if p.name in seen:
            raise RunDirError(f"{seen[p.name]} and {p} would both be copied into the run "
                              f"directory as {p.name!r}")
        seen[p.name] = p


def check_run_cwd(cwd: str) -> str:
    """`cwd` as `run_program` takes it: a relative path without `..` (a folder of the run
    directory), `/`-separated and normalised; RunDirError otherwise."""
    rel = Path(cwd)
    if not cwd or rel.is_absolute() or ".." in rel.parts:
        raise RunDirError(f"bad start folder {cwd!r}: it must be a folder of the run directory, "
                          "relative to it and without '..'")
    return rel.as_posix()


def run_program(program: Program, backend: str | Backend = "auto", args: list[str] | None = None,
                *, limits: Limits | None = None, workdir_files: list[Path] | None = None,
                defines: dict[str, int] | None = None, variant: str = "plain",
                schedule: str = "default", keep_outputs: Path | None = None,
                extra_env: dict[str, str] | None = None, cwd: str | None = None) -> ProgramRun:
    """Build and run a standalone program once (no task): exit status, output, timings.

    `workdir_files` are copied into the run directory (e.g. input files the program reads),
    each at its own name (two of one name: RunDirError). `cwd`: the folder of the run directory
    (relative, e.g. `app`, from a copied folder) the program starts in, as a program run with
    `cd app && ./a.out` that opens `../data/...`; the run directory stays the run's (what
    `keep_outputs` looks at, `HOME`). Default: the run directory itself.
    `variant` and `schedule` name one of the backend's builds and thread orders (cpu: `asan`,
    `reverse`, ...), for a caller that runs the program under several. `limits` replace
    `DEFAULT_LIMITS` (the backend may still lift some: ASan needs unlimited address space).
    `keep_outputs`: a directory that receives the files the program wrote in its run
    directory (new or changed ones; listed in `ProgramRun.outputs`). `extra_env`: the backend's
    own settings for this run (e.g. `Backend.poison_env`).
    """
    from .run_outputs import copy_outputs, snapshot

    _check_run_dir_names([Path(f) for f in workdir_files or []])
    start = check_run_cwd(cwd) if cwd is not None else None
    be = _resolve(backend)
    t0 = time.monotonic()
    exe = be.build(program, defines or {}, variant=variant)
    build_seconds = time.monotonic() - t0
    if exe.needs_gpu:
        return ProgramRun(Status.NEEDS_GPU, f"needs a GPU feature: {exe.needs_gpu}", exe.compile,
                          None, build_seconds, 0.0)
    if exe.path is None or not exe.compile.ok:
        return ProgramRun(Status.COMPILE_ERROR, _compile_reason(exe.compile), exe.compile, None,
                          build_seconds, 0.0)
    lim = (limits or DEFAULT_LIMITS).with_overrides(be.sandbox_overrides(exe))
    caps = Caps.from_env()
    with workspace(lim, reserve_bytes=caps.copy_bytes) as root:
        work = root / "work"
        work.mkdir()
        copied = 0
        for f in workdir_files or []:
            # The folder is untrusted (a scraped benchmark): links, devices and FIFOs in it are
            # skipped, and the whole copy is bounded.
            report = copy_untrusted(Path(f), work, max_bytes=caps.copy_bytes - copied,
                                    max_files=caps.copy_files)
            copied += report.bytes
        if start is not None and (not (work / start).is_dir()
                                  or (work / start).resolve() != work.resolve() / start):
            raise RunDirError(f"start folder {start!r} is not a folder of the run directory "
                              "(it holds " + (", ".join(sorted(p.name for p in work.iterdir()))
                                              or "nothing") + ")")
        argv, env = be.command(exe, list(args or []), schedule=schedule)
        timing_env = be.run_timing_env(str(work / RUN_TIMING_FILE))
        # The split comes from the runtime the program calls (an interposed one on cuda, which
        # like the engine's runs stays out of compute-sanitizer's own process).
        preload = (be.preloads(exe) if timing_env and variant not in ("memcheck", "racecheck")
                   else [])
        inputs = snapshot(work)
        spawned = time.monotonic()
        outcome = run_sandboxed(argv, work, limits=lim,
                                env={**env, **(extra_env or {}), **(timing_env or {})},
                                preload=preload, expose=be.expose(exe), cwd=start)
        returned = time.monotonic()
        timing = read_split(work, spawned, returned) if timing_env else None
        kept = copy_outputs(work, Path(keep_outputs), inputs) if keep_outputs else []
    verdict = be.classify(exe, outcome)
    status = verdict.status or Status.PASSED
    return ProgramRun(status, verdict.reason, exe.compile, outcome, build_seconds, outcome.seconds,
                      kept, timing, be.run_notes(outcome))
