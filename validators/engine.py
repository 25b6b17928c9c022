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
4. the overall status is the worst case status (`schemas.worst_status`).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from schemas import (
    CaseResult,
    CompileInfo,
    InputCase,
    OutputCheck,
    Program,
    Status,
    Task,
    ValidationResult,
    worst_status,
)

from . import anticheat
from .backends import Backend, BackendUnavailable, Executable, RunOutcome, get_backend
from .build_cache import BuildCache
from .cases import materialize, write_arrays
from .compare import compare_arrays, read_output
from .reference import ReferenceError, ReferenceRunner
from .sandbox import Limits, SandboxError, run_sandboxed

TAIL = 2000

DEFAULT_LIMITS = Limits(cpu_seconds=60, wall_seconds=90)


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


@dataclass
class Engine:
    """The pieces `check` uses; build one to share caches across many checks."""

    backend: Backend
    limits: Limits = DEFAULT_LIMITS
    cache: BuildCache | None = None
    references: ReferenceRunner | None = None
    access_log: bool = True
    _shim: Path | None = None

    def __post_init__(self) -> None:
        self.references = self.references or ReferenceRunner()
        if self.access_log:
            self._shim = anticheat.shim_library(self.cache)

    # --- the whole check ------------------------------------------------------------------

    def check(self, task: Task, program: Program, *, thorough: bool = True) -> ValidationResult:
        started = time.monotonic()
        result = ValidationResult(task=task.name, program_digest=program.digest(),
                                  backend=self.backend.name, status=Status.PASSED)
        try:
            launches, features, text = _analyze(program.source)
        except Exception as exc:  # analysis must not stop a check
            launches, features, text = 1, [], program.source
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
                exe = self.backend.build(program, task.defines_for(task.cases[0]))
            except SandboxError as exc:
                return self._finish(result, Status.COMPILE_ERROR, started,
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
        for case in task.cases:
            res = self._check_case(task, program, case, variants, schedules, result)
            result.cases.append(res)
            if res.status == Status.COMPILE_ERROR and not task.defines_for(case):
                break  # the default build does not compile: no other case will
        status = worst_status([c.status for c in result.cases])
        worst = next((c for c in result.cases if c.status == status), None)
        reason = f"case {worst.case}: {worst.reason}" if worst and status != Status.PASSED else ""
        return self._finish(result, status, started, reason=reason)

    def _finish(self, result: ValidationResult, status: Status, started: float, *,
                reason: str = "") -> ValidationResult:
        result.status = status
        if reason:
            result.reason = reason
        result.seconds = time.monotonic() - started
        return result

    # --- one case ---------------------------------------------------------------------------

    def _check_case(self, task: Task, program: Program, case: InputCase, variants: list[str],
                    schedules: list[str], result: ValidationResult) -> CaseResult:
        t0 = time.monotonic()
        sizes = task.case_sizes(case)
        if self.references.draws_inputs(task, case):  # type: ignore[union-attr]
            # The torch reference draws some inputs itself: run it first (cached with its
            # outputs, which _judge then finds under the same key).
            try:
                inputs, _, _ = self.references.case_data(task, case)  # type: ignore[union-attr]
            except (ReferenceError, SandboxError) as exc:
                return CaseResult(case=case.name, status=Status.FAILED,
                                  reason=f"no reference inputs: {exc}",
                                  seconds=time.monotonic() - t0)
        else:
            inputs = materialize(task, case)
        defines = task.defines_for(case)
        runs: list[_Run] = []
        exe: Executable | None = None
        for variant in variants:
            try:
                exe = self.backend.build(program, defines, variant=variant)
            except SandboxError as exc:  # not cached; the program may have asked for it (-I)
                return CaseResult(case=case.name, status=Status.COMPILE_ERROR,
                                  reason=f"could not build: {exc}", seconds=time.monotonic() - t0)
            if result.compile is None or (not defines and variant == variants[0]):
                result.compile = exe.compile
            # A failed build that names a GPU-only construct is needs_gpu, not compile_error.
            if exe.needs_gpu:
                return CaseResult(case=case.name, status=Status.NEEDS_GPU,
                                  reason=f"needs a GPU feature: {exe.needs_gpu}",
                                  seconds=time.monotonic() - t0)
            if exe.path is None or not exe.compile.ok:
                return CaseResult(case=case.name, status=Status.COMPILE_ERROR,
                                  reason=_compile_reason(exe.compile), seconds=time.monotonic() - t0)
            for schedule in schedules:
                run = self._run_once(task, exe, case, inputs, sizes, variant, schedule)
                runs.append(run)
                if run.status is not None:
                    # Decided (crash, limit, cheat, no GPU): the remaining variants would only
                    # repeat it at a higher cost, and a hostile program gets one run, not six.
                    return self._judge(task, case, inputs, sizes, runs, time.monotonic() - t0)
        return self._judge(task, case, inputs, sizes, runs, time.monotonic() - t0)

    def _run_once(self, task: Task, exe: Executable, case: InputCase, inputs: dict[str, np.ndarray],
                  sizes: dict[str, int], variant: str, schedule: str) -> _Run:
        root = Path(tempfile.mkdtemp(prefix="ckd-run-"))
        try:
            work = root / "work"
            work.mkdir()
            write_arrays(inputs, work)
            before = anticheat.input_digests(work, task)
            argv, env = self.backend.command(exe, [], schedule=schedule)
            env = dict(env)
            preload = None
            if self._shim is not None and variant not in ("memcheck", "racecheck"):
                preload = self._shim
                env["CKD_ACCESS_LOG"] = str(work / anticheat.ACCESS_LOG)
                env.setdefault("ASAN_OPTIONS", "verify_asan_link_order=0")
            limits = self.limits.with_overrides(self.backend.sandbox_overrides(exe))
            try:
                outcome = run_sandboxed(argv, work, limits=limits, env=env, preload=preload)
            except SandboxError as exc:
                return _Run(variant, schedule, RunOutcome(exit_code=None, stderr=str(exc)),
                            Status.RUNTIME_ERROR, f"could not run: {exc}")
            outcome.schedule = schedule
            run = _Run(variant, schedule, outcome)
            entries = anticheat.read_access_log(work) if self._shim is not None else None
            verdict = self.backend.classify(exe, outcome)
            if verdict.status == Status.NEEDS_GPU:
                run.status, run.reason = verdict.status, verdict.reason
                return run
            # The runtime itself (e.g. ASan symbolising) may open the executable and the shim.
            own = tuple(str(p.parent) + "/" for p in (exe.path, self._shim) if p is not None)
            reasons = anticheat.access_reasons(entries, work, task, extra_allowed=own)
            forbidden = [r for r in reasons if not r.startswith("never read input")]
            if forbidden and verdict.status is not None and verdict.reason.startswith(
                "out-of-bounds access"
            ):
                # A sanitizer report is the run's cause: its symbolizer reads files too.
                run.status = verdict.status
                run.reason = f"{verdict.reason}; also {'; '.join(forbidden)}"
                return run
            if forbidden:
                run.status, run.reason = Status.REJECTED, "; ".join(forbidden)
                return run
            if verdict.status is not None:
                run.status, run.reason = verdict.status, verdict.reason
                return run
            modified = anticheat.modified_inputs(before, work, task)
            unread = [r for r in reasons if r.startswith("never read input")]
            if modified or unread:
                run.status, run.reason = Status.REJECTED, "; ".join([*modified, *unread])
                return run
            self._compare(task, work, sizes, run)
            return run
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def _compare(self, task: Task, work: Path, sizes: dict[str, int], run: _Run) -> None:
        # Reference outputs are attached later (see _judge) so a run's directory can go now.
        for spec in task.outputs:
            path = work / "data" / f"{spec.name}.bin"
            arr, why = read_output(path, spec, sizes)
            if arr is None:
                run.outputs.append(OutputCheck(name=spec.name, ok=False, reason=why))
            else:
                run.arrays[spec.name] = arr

    # --- verdict of a case -------------------------------------------------------------------

    def _judge(self, task: Task, case: InputCase, inputs: dict[str, np.ndarray],
               sizes: dict[str, int], runs: list[_Run], seconds: float) -> CaseResult:
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
                              status=r.status, reason=r.reason + where)
        try:
            refs, _ = self.references.outputs(task, case, inputs)  # type: ignore[union-attr]
        except (ReferenceError, SandboxError) as exc:
            return CaseResult(**base, **tails, status=Status.FAILED,
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


def _severity(status: Status | None) -> int:
    from schemas.validation import STATUS_SEVERITY

    return STATUS_SEVERITY[status] if status is not None else -1


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
            return f"output {spec.name} differs at index {idx} ({xf[idx]!r} vs {yf[idx]!r})"
    return ""


def check(task: Task, program: Program, *, backend: str | Backend = "auto", thorough: bool = True,
          limits: Limits | None = None, cache: BuildCache | None = None) -> ValidationResult:
    """Validate `program` for `task` (see the module docstring)."""
    be = _resolve(backend)
    if cache is not None and isinstance(backend, str) and hasattr(be, "cache"):
        be.cache = cache  # a backend made here builds into the caller's cache
    engine = Engine(be, limits=limits or DEFAULT_LIMITS, cache=cache)
    return engine.check(task, program, thorough=thorough)


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


def run_program(program: Program, backend: str | Backend = "auto", args: list[str] | None = None,
                *, limits: Limits | None = None, workdir_files: list[Path] | None = None,
                defines: dict[str, int] | None = None, variant: str = "plain",
                schedule: str = "default", keep_outputs: Path | None = None) -> ProgramRun:
    """Build and run a standalone program once (no task): exit status, output, timings.

    `workdir_files` are copied into the run directory (e.g. input files the program reads).
    `variant` and `schedule` name one of the backend's builds and thread orders (cpu: `asan`,
    `reverse`, ...), for a caller that runs the program under several. `limits` replace
    `DEFAULT_LIMITS` (the backend may still lift some: ASan needs unlimited address space).
    `keep_outputs`: a directory that receives the files the program wrote in its run
    directory (new or changed ones; listed in `ProgramRun.outputs`).
    """
    from .run_outputs import copy_outputs, snapshot

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
    root = Path(tempfile.mkdtemp(prefix="ckd-run-"))
    try:
        work = root / "work"
        work.mkdir()
        for f in workdir_files or []:
            f = Path(f)
            if f.is_dir():
                shutil.copytree(f, work / f.name, dirs_exist_ok=True)
            else:
                shutil.copy2(f, work / f.name)
        argv, env = be.command(exe, list(args or []), schedule=schedule)
        lim = (limits or DEFAULT_LIMITS).with_overrides(be.sandbox_overrides(exe))
        inputs = snapshot(work)
        outcome = run_sandboxed(argv, work, limits=lim, env=env)
        kept = copy_outputs(work, Path(keep_outputs), inputs) if keep_outputs else []
    finally:
        shutil.rmtree(root, ignore_errors=True)
    verdict = be.classify(exe, outcome)
    status = verdict.status or Status.PASSED
    return ProgramRun(status, verdict.reason, exe.compile, outcome, build_seconds, outcome.seconds,
                      kept)
