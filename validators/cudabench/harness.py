"""Judge a program on one CUDABench scale: gen.py -> the program -> compare.py, all sandboxed.

Order of decisions (statuses as in `validators.engine`):
1. `gen.py` runs (or its cached result is used, see `scripts`); when it fails or is refused the
   result is `error` (no verdict on the program) with reason `harness: gen.py failed: ...` and
   `error_origin` `task` (the benchmark's script failed) or `validator` (our harness or sandbox
   could not start it);
2. static analysis: GPU-only features the backend cannot run -> `needs_gpu`; no kernel launch or
   a hard-coded table of results -> `rejected` once the program builds;
3. build -> `compile_error` / `needs_gpu` (the backend names a GPU-only construct);
4. the program runs in a fresh work directory holding only the declared inputs. The hidden-
   reference rule: of the files gen.py wrote, exactly `data/<input>.bin` (or `data/<input>`)
   for a declared input is given to the program; everything else (CUDABench writes references
   as `data/ref_*.bin`, some gen.py write other names) stays out of its reach until it exits.
   The backend's verdict on the run -> `needs_gpu` / `timeout` / `runtime_error`, but a network
   socket, a file opened outside the work directory and the system locations, or an attempt to
   open a hidden reference file (seen by the access log) -> `rejected` first;
5. the hidden files are put back, overwriting whatever the program left at those paths (it
   cannot forge a reference), except at a declared output's own path (`data/<output>.bin`),
   where the program's file is what compare.py must judge; then `compare.py` runs: the last
   non-empty line of its stdout `T` -> `passed`, `F` -> `failed`; a crash or anything else ->
   `failed` with the reason (stricter than CUDABench, which fails only on an `F` anywhere),
   except that compare.py never reached (the interpreter or the sandbox could not start) is
   `error` (`validator`): the program was not judged.

With `thorough=True` every build variant and thread schedule of the backend (cpu: an
AddressSanitizer build, reversed thread order) is run and judged; the worst verdict wins.
`check` never raises for a bad program; it raises `BackendUnavailable` when the backend
cannot work here, like `validators.engine.check`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from schemas import CaseResult, ErrorOrigin, Program, Status, ValidationResult, worst_status

from .. import anticheat
from ..backends import Backend, Executable
from ..compare import read_no_follow
from ..engine import DEFAULT_LIMITS, _compile_reason, _resolve
from ..sandbox import Limits, SandboxError, run_sandboxed, workspace
from .loader import CudaBenchScale
from .scripts import ScriptError, generated_data, place_file, run_script

TAIL = 2000
HARNESS = "harness: "


def split_generated(files: list[str], scale: CudaBenchScale) -> tuple[list[str], list[str]]:
    """(files the program gets, files hidden from it) among the relative paths gen.py wrote."""
    visible = {f"data/{n}.bin" for n in scale.inputs} | {f"data/{n}" for n in scale.inputs}
    given = [f for f in files if f in visible]
    return given, [f for f in files if f not in visible]


def _output_paths(scale: CudaBenchScale) -> set[str]:
    return {f"data/{n}.bin" for n in scale.outputs} | {f"data/{n}" for n in scale.outputs}


def _copy(src_root: Path, rels: list[str], dest_root: Path) -> None:
    # The generated files live in our cache, written by us from what gen.py produced (regular
    # files only); read them without following links all the same.
    for rel in rels:
        place_file(dest_root, rel, read_no_follow(src_root / rel, root=src_root))


def _program_access(work: Path, hidden: list[str], allowed: tuple[str, ...]) -> list[str]:
    entries = anticheat.read_access_log(work)
    if not entries:
        return []
    root = os.path.realpath(work)
    secret = {os.path.normpath(os.path.join(root, h)) for h in hidden}
    out: list[str] = []
    for kind, target in entries:
        if kind == "net":
            why = f"opened a network socket ({target})"
        elif "/" not in target:
            continue  # a shared library by soname
        else:
            norm = os.path.normpath(target if target.startswith("/") else os.path.join(root, target))
            if norm in secret:
                verb = "read" if kind == "r" else "write or remove"
                why = f"tried to {verb} the hidden reference file {os.path.relpath(norm, root)}"
            elif norm == root or norm.startswith(root + os.sep):
                continue
            elif kind != "d" and norm.startswith((*anticheat.ALLOWED_PREFIXES, *allowed)):
                continue
            else:
                why = f"opened a file outside its work directory: {target}"
        if why not in out:
            out.append(why)
    return out[:5]


def _static(source: str, backend: Backend) -> tuple[list[str], list[str], list[str]]:
    """(features, features the backend cannot run, static anti-cheat reasons)."""
    from ..analysis import analyze

    try:
        a = analyze(source)
    except Exception:  # analysis must not stop a check
        return [], [], []
    features = list(a.features)
    launches = len(a.launches) + len(getattr(a, "api_launches", []))
    cheats = [r for r in (anticheat.no_kernel_launch(a.text, launches, features),
                          anticheat.hardcoded_table(a.text)) if r]
    return features, backend.unsupported_features(features), cheats


def _verdict_from_compare(stdout: str) -> tuple[Status, str]:
    lines = [ln.strip() for ln in stdout.splitlines() if ln.strip()]
    if not lines:
        return Status.FAILED, "compare.py printed nothing (no T/F verdict)"
    if lines[-1] == "T":
        return Status.PASSED, ""
    if lines[-1] == "F":
        return Status.FAILED, "compare.py printed F: the outputs differ from the reference"
    return Status.FAILED, f"compare.py printed no T/F verdict: {lines[-1][:200]!r}"


class _Checker:
    def __init__(self, scale: CudaBenchScale, backend: Backend, limits: Limits) -> None:
        self.scale, self.backend, self.limits = scale, backend, limits
        self.shim = anticheat.shim_library()

    def run_one(self, exe: Executable, gen_dir: Path, given: list[str], hidden: list[str],
                schedule: str) -> CaseResult:
        t0 = time.monotonic()
        name = f"{self.scale.row_id}"
        with workspace(self.limits, prefix="ckd-cbrun-") as root:
            work = root / "work"
            (work / "data").mkdir(parents=True)
            _copy(gen_dir, given, work)
            argv, env = self.backend.command(exe, [], schedule=schedule)
            env = dict(env)
            preload = None
            if self.shim is not None and exe.variant not in ("memcheck", "racecheck"):
                preload = self.shim
                env["CKD_ACCESS_LOG"] = str(work / anticheat.ACCESS_LOG)
                env.setdefault("ASAN_OPTIONS", "verify_asan_link_order=0")
            limits = self.limits.with_overrides(self.backend.sandbox_overrides(exe))
            try:
                outcome = run_sandboxed(argv, work, limits=limits, env=env, preload=preload)
            except SandboxError as exc:  # set-up failed before the program started: ours
                return CaseResult(case=name, status=Status.ERROR, error_origin=ErrorOrigin.VALIDATOR,
                                  reason=f"could not run: {exc}", seconds=time.monotonic() - t0)
            tails = dict(exit_code=outcome.exit_code, stdout_tail=outcome.stdout[-TAIL:],
                         stderr_tail=outcome.stderr[-TAIL:], schedules=[schedule])
            verdict = self.backend.classify(exe, outcome)
            if verdict.status == Status.NEEDS_GPU:
                return CaseResult(case=name, status=verdict.status, reason=verdict.reason,
                                  seconds=time.monotonic() - t0, **tails)
            own = tuple(str(p.parent) + "/" for p in (exe.path, self.shim) if p is not None)
            forbidden = _program_access(work, hidden, own)
            if forbidden:
                return CaseResult(case=name, status=Status.REJECTED, reason="; ".join(forbidden),
                                  seconds=time.monotonic() - t0, **tails)
            if verdict.status is not None:
                return CaseResult(case=name, status=verdict.status, reason=verdict.reason,
                                  seconds=time.monotonic() - t0, **tails)
            (work / anticheat.ACCESS_LOG).unlink(missing_ok=True)
            outputs = _output_paths(self.scale)
            missing = [f"data/{n}.bin" for n in self.scale.outputs
                       if not (work / f"data/{n}.bin").is_file()
                       and not (work / f"data/{n}").is_file()]
            _copy(gen_dir, [h for h in hidden if h not in outputs], work)
            try:
                cmp_out = run_script("compare.py", self.scale.compare_py, work)
            except SandboxError as exc:  # compare.py never ran: the program is not judged
                return CaseResult(case=name, status=Status.ERROR, error_origin=ErrorOrigin.VALIDATOR,
                                  reason=f"{HARNESS}{exc}", seconds=time.monotonic() - t0, **tails)
            except ScriptError as exc:
                why = f"{exc}" + (f" (the program wrote no {', '.join(missing)})" if missing else "")
                return CaseResult(case=name, status=Status.FAILED, reason=why,
                                  seconds=time.monotonic() - t0, **tails)
            status, reason = _verdict_from_compare(cmp_out.stdout)
            if status != Status.PASSED and missing:
                reason += f" (the program wrote no {', '.join(missing)})"
            return CaseResult(case=name, status=status, reason=reason,
                              seconds=time.monotonic() - t0, **tails)


def check(scale: CudaBenchScale, program_source: str, backend: str | Backend = "auto", *,
          thorough: bool = False, limits: Limits | None = None,
          gen_cache_dir: Path | None = None) -> ValidationResult:
    """Validate `program_source` on one CUDABench scale (see the module docstring).

    `gen_cache_dir` replaces `<cache root>/cudabench` as the home of gen.py's cached results.
    """
    started = time.monotonic()
    be = _resolve(backend)
    try:
        program = Program(source=program_source)
        digest = program.digest()
    except Exception:  # an empty completion is a program that does not compile
        program, digest = None, ""
    result = ValidationResult(task=scale.task_name, program_digest=digest, backend=be.name,
                              status=Status.PASSED)

    def finish(status: Status, reason: str = "", origin: ErrorOrigin | None = None
               ) -> ValidationResult:
        result.status, result.reason, result.error_origin = status, reason, origin
        result.seconds = time.monotonic() - started
        return result

    try:
        gen_dir, _ = generated_data(scale.row_id, scale.gen_py, cache_dir=gen_cache_dir)
    except (ScriptError, SandboxError) as exc:
        origin = ErrorOrigin.VALIDATOR if isinstance(exc, SandboxError) else ErrorOrigin.TASK
        return finish(Status.ERROR, f"{HARNESS}{exc}", origin)
    files = sorted(p.relative_to(gen_dir).as_posix() for p in gen_dir.rglob("*") if p.is_file())
    given, hidden = split_generated(files, scale)
    if program is None:
        return finish(Status.COMPILE_ERROR, "does not compile: the program is empty")
    features, blocked, cheats = _static(program.source, be)
    result.features = features
    if blocked:
        return finish(Status.NEEDS_GPU, f"uses {', '.join(blocked)}, which the {be.name} "
                                        "backend cannot run")
    checker = _Checker(scale, be, limits or DEFAULT_LIMITS)
    for variant in be.variants(thorough=thorough):
        try:
            exe = be.build(program, {}, variant=variant)
        except SandboxError as exc:  # the build's sandbox could not be set up: ours
            return finish(Status.ERROR, f"could not build: {exc}", ErrorOrigin.VALIDATOR)
        if result.compile is None:
            result.compile = exe.compile
        if exe.needs_gpu:
            return finish(Status.NEEDS_GPU, f"needs a GPU feature: {exe.needs_gpu}")
        if exe.path is None or not exe.compile.ok:
            return finish(Status.COMPILE_ERROR, _compile_reason(exe.compile))
        if cheats:
            return finish(Status.REJECTED, "; ".join(cheats))
        for schedule in be.schedules_for(variant, be.variants(thorough=thorough),
                                         be.schedules(thorough=thorough)):
            case = checker.run_one(exe, gen_dir, given, hidden, schedule)
            if len(be.variants(thorough=thorough)) > 1 and case.reason:
                case.reason += f" [{variant}/{schedule}]"
            result.cases.append(case)
            if case.status != Status.PASSED:
                break  # a hostile or broken program gets one decided run, not six
        if result.cases and result.cases[-1].status != Status.PASSED:
            break
    status = worst_status([c.status for c in result.cases])
    worst = next((c for c in result.cases if c.status == status), None)
    return finish(status, worst.reason if worst and status != Status.PASSED else "",
                  worst.error_origin if worst is not None and status == Status.ERROR else None)

