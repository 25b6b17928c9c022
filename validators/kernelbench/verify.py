"""`verify(problem, answer)`: the verdict on a KernelBench answer (see the package README)."""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from dataclasses import dataclass

import torch

from schemas import (
    CaseResult,
    CompileInfo,
    ErrorOrigin,
    OutputCheck,
    Status,
    ValidationResult,
    worst_status,
)
from validators.engine import MAX_POISON_PROBES, POISON_BYTES
from validators.sandbox import HarnessError, SandboxError

from .answer import AnswerRun, emulation_available, program_budget, run_answer
from .compare import compare_tensor, same_tensor, tolerance_for
from .defences import (
    call_rule,
    inherits_rule,
    launch_rule,
    library_rule,
    torch_result_rule,
    weak_task,
)
from .files import extension_answer, read_answer, read_problem
from .gpu import gpu_unavailable
from .reference import ReferenceFailed, RefGroup, run_reference
from .shapes import DEFAULT_MAX_ELEMENTS, ShapeError, plan_sizes

MIN_SEEDS = 5
CPU_ONLY_NOTE = ("cuda backend: not checked here (cpu backend only): torch_fallback (launch "
                 "counting) and kernels_not_used (the no-launch run) need the emulator's "
                 "runtime; thread schedules, the race build and shared-memory poison are the "
                 "emulator's")
IMPORT_FAILED = "importing the answer failed"
"""How the reason of a `runtime_error` verdict starts when the answer's module did not import:
the service's reward counts such an answer as not compiled."""


@dataclass(frozen=True)
class Variant:
    build: str
    """`plain` or `race` (lost updates fail: the emulator's race build)."""
    schedule: str
    poison: int | None


GPU_SCHEDULE = "device"
"""A real GPU's own scheduling: the emulator's `forward`/`reverse` orders do not exist there."""


def plan_variants(*, fast: bool, emulate: bool, gpu: bool = False) -> list[Variant]:
    if gpu:
        # No schedules and no race build on a real GPU: the poison bytes remain, filled into
        # the caching allocator (two runs of one schedule: an unwritten output shows as the
        # difference `_uninitialised_reads` looks for).
        bytes_ = POISON_BYTES[:1] if fast else POISON_BYTES[:2]
        return [Variant("plain", GPU_SCHEDULE, b) for b in bytes_]
    if not emulate:
        return [Variant("plain", "forward", None)]
    if fast:
        return [Variant("plain", "forward", POISON_BYTES[0])]
    return [Variant("plain", "forward", POISON_BYTES[0]),
            Variant("plain", "reverse", POISON_BYTES[1]),
            Variant("race", "forward", POISON_BYTES[1])]


def draw_seeds(problem_source: str, n: int, fresh: int) -> list[int]:
    """n - 1 seeds fixed by the problem's text, then the fresh one."""
    digest = hashlib.sha256(problem_source.encode()).digest()
    fixed = [int.from_bytes(digest[4 * i: 4 * i + 4], "little") % 1_000_000 for i in range(n - 1)]
    return [*fixed, fresh]


def input_seeds(seeds: list[int], salt: int) -> list[int]:
    """The seed each group's inputs are drawn under: its parameter seed mixed with the salt."""
    return [int.from_bytes(hashlib.sha256(f"{salt}:{seed}".encode()).digest()[:8], "little")
            % (1 << 62) for seed in seeds]


def verify(problem_source: str, answer_source: str, *, backend: str = "cpu", fast: bool = False,
           seeds: int = MIN_SEEDS, atol: float | None = None, rtol: float | None = None,
           allow_torch_only: bool = False, allow_library: bool = True,
           fresh_seed: int | None = None, input_salt: int | None = None, max_elements: int = DEFAULT_MAX_ELEMENTS, task_name: str = "kernelbench",
           emulate: bool | None = None, timings: dict[str, float] | None = None,
           program_seconds: float | None = None) -> ValidationResult:
    """Check `answer_source` (ModelNew) against `problem_source` (Model).

    Raises `KernelBenchInputError` for files that are not a problem or an answer; every other
    outcome is a ValidationResult (`error` with `error_origin` when our machinery or the
    problem itself failed: never a verdict on the answer). `timings`, when given, receives the
    seconds spent sizing, in the reference, in the answer's processes and in extension builds,
    and how many processes the checking variants' runs started (`answer_processes`).
    `program_seconds`: the wall seconds the answer's processes may take, all together
    (`answer.program_budget`); an answer that spends them is `timeout`."""
    with program_budget(program_seconds):
        return _verify(problem_source, answer_source, backend=backend, fast=fast, seeds=seeds,
                       atol=atol, rtol=rtol, allow_torch_only=allow_torch_only,
                       allow_library=allow_library, fresh_seed=fresh_seed,
                       input_salt=input_salt, max_elements=max_elements, task_name=task_name,
                       emulate=emulate, timings=timings)


def _verify(problem_source: str, answer_source: str, *, backend: str, fast: bool, seeds: int,
            atol: float | None, rtol: float | None, allow_torch_only: bool,
            allow_library: bool, fresh_seed: int | None, input_salt: int | None,
            max_elements: int, task_name: str, emulate: bool | None,
            timings: dict[str, float] | None) -> ValidationResult:
    started = time.perf_counter()
    problem = read_problem(problem_source)
    answer = read_answer(answer_source)
    if backend not in ("cpu", "cuda"):
        raise ValueError(f"backend must be 'cpu' or 'cuda', not {backend!r}")
    if seeds < MIN_SEEDS:
        raise ValueError(f"seeds must be at least {MIN_SEEDS}, not {seeds}")
    fresh = secrets.randbelow(1_000_000) if fresh_seed is None else int(fresh_seed)
    result = ValidationResult(task=task_name, backend=backend, status=Status.ERROR,
                              program_digest=hashlib.sha256(answer_source.encode()).hexdigest(),
                              fresh_seed=fresh)

    def done(status: Status, reason: str = "", **kw: object) -> ValidationResult:
        result.status = status
        result.reason = reason
        for k, v in kw.items():
            setattr(result, k, v)
        result.seconds = time.perf_counter() - started
        return result

    if answer.needs_gpu and backend == "cpu":
        return done(Status.NEEDS_GPU, f"the answer uses {answer.needs_gpu}, which only runs on "
                    "a GPU", features=[answer.needs_gpu])
    answer_python = answer.source
    if answer.kind == "extension":
        # Raises KernelBenchInputError for a problem that is not functional (bad input).
        answer_python = extension_answer(problem, answer)
    gpu = backend == "cuda"
    if gpu:
        why = gpu_unavailable()
        if why:
            return done(Status.NEEDS_GPU, f"the cuda backend needs a GPU: {why}")
        emulate = False
    if emulate is None:
        emulate = emulation_available()
    times = timings if timings is not None else {}
    t_size = time.perf_counter()
    try:
        plan = plan_sizes(problem.source, max_elements=max_elements)
    except ShapeError as exc:
        return done(Status.ERROR, f"the problem cannot be judged on the cpu backend "
                    f"({exc.kind}): {exc}", error_origin=ErrorOrigin.TASK)
    except (HarnessError, SandboxError) as exc:
        return done(Status.ERROR, f"sizing the problem failed: {exc}",
                    error_origin=ErrorOrigin.VALIDATOR)
    times["sizing"] = time.perf_counter() - t_size
    result.sizes = plan.sizes
    if plan.scaled:
        result.original_sizes = plan.original_sizes
        result.notes.append(f"sizes scaled for the cpu backend: {plan.scaling}")
    seed_list = draw_seeds(problem.source, seeds, fresh)
    # The inputs are drawn under seeds of their own, from a salt the answer never sees: the
    # answer's parameters must start as Model's (its seed is the group's, which the answer can
    # read with torch.initial_seed()), and from that seed alone an answer could draw every
    # input itself before its calls and compute the outputs unwatched.
    if input_salt is None and os.environ.get("CKD_KB_INPUT_SALT", "").isdigit():
        input_salt = int(os.environ["CKD_KB_INPUT_SALT"])  # an operator's (a test suite's) fixed salt
    salt = secrets.randbits(62) if input_salt is None else input_salt
    result.notes.append(f"inputs drawn under the input salt {salt} (--input-salt reproduces "
                        "them)")
    t_ref = time.perf_counter()
    try:
        groups = run_reference(plan.source, seed_list, input_seeds=input_seeds(seed_list, salt))
    except ReferenceFailed as exc:
        if exc.kind == "needs_cuda":
            return done(Status.NEEDS_GPU, f"the problem's reference needs a GPU: {exc}")
        return done(Status.ERROR, f"the problem's reference failed ({exc.kind}): {exc}",
                    error_origin=ErrorOrigin.TASK)
    except (HarnessError, SandboxError) as exc:
        return done(Status.ERROR, f"the reference could not run: {exc}",
                    error_origin=ErrorOrigin.VALIDATOR)
    ref_seconds = times["reference"] = time.perf_counter() - t_ref
    result.weak_task = weak_task(groups, atol, rtol)
    if gpu:
        result.notes.append(CPU_ONLY_NOTE)
    elif not emulate:
        result.notes.append("CUDA extensions are not served on this machine "
                            "(validators.cpu.torch_cuda missing): torch-only answers only")

    runs: list[AnswerRun] = []
    cases: dict[str, CaseResult] = {}
    verdict: tuple[Status, str, str] | None = None
    wrong: tuple[Status, str, str] | None = None
    for v in plan_variants(fast=fast, emulate=emulate, gpu=gpu):
        try:
            # Every run of the check follows what PyTorch computes by itself (`torch_result`),
            # the probes and the no-launch run included: the dispatch mode on the stack tells
            # the answer nothing about which run it is in. Not where no extension can run (no
            # emulator, no GPU): there torch-only answers are all that can be checked.
            run = run_answer(answer_python, groups, variant=v.build, schedule=v.schedule,
                             poison=v.poison, emulate=emulate, gpu=gpu,
                             follow=not allow_torch_only and (emulate or gpu))
        except (HarnessError, SandboxError) as exc:
            return done(Status.ERROR, f"the answer's process could not start: {exc}",
                        error_origin=ErrorOrigin.VALIDATOR)
        runs.append(run)
        if run.poison_effective is False:
            result.notes.append(f"new GPU allocations did not start as 0x{run.poison:02x} "
                                "(the caching allocator's settings defeated the fill): outputs "
                                "left unwritten may pass in this run")
        verdict = _judge_run(run, groups, cases, count_launches=emulate and not allow_torch_only,
                             atol=atol, rtol=rtol)
        if verdict is None:
            continue
        if verdict[0] == Status.FAILED and not verdict[1] and run.status == "ok":
            # Wrong outputs: the other variants still run, as a program's do, so that the
            # reason can name the cause (a race report, memory nobody wrote, an order-dependent
            # result) instead of the wrong numbers it produced.
            wrong = wrong or verdict
            verdict = None
            continue
        if wrong is not None and verdict[0] == Status.TIMEOUT:
            verdict = None  # a slower build running out of time says less than the wrong output
            continue
        break
    probe_seconds = 0.0
    if verdict is None and wrong is not None:
        t_probe = time.perf_counter()
        verdict = (_uninitialised_reads(answer_python, groups, runs, atol, rtol, gpu=gpu)
                   or _schedule_dependent(runs, groups, atol, rtol) or wrong)
        probe_seconds = time.perf_counter() - t_probe
    _record_builds(result, runs)
    answer_seconds = sum(r.seconds - r.build_seconds for r in runs) + probe_seconds
    build_seconds = sum(r.build_seconds for r in runs)
    result.cases = list(cases.values())
    for c in result.cases:
        c.fresh = c.seed == fresh
    if verdict is None:
        verdict = library_rule(runs, result, allow=allow_library)
    if gpu and verdict is None:
        result.kernel_check = ("not checked on the cuda backend: the no-launch run needs the "
                               "emulator (--backend cpu makes it)")
    if verdict is None and emulate:
        t_dep = time.perf_counter()
        verdict = _kernel_dependence(answer_python, groups, runs, result, atol, rtol,
                                     allow_torch_only=allow_torch_only)
        answer_seconds += time.perf_counter() - t_dep
    times["answer"] = answer_seconds
    times["build"] = build_seconds
    times["answer_processes"] = sum(r.passes for r in runs)
    result.notes.append(f"time: reference {ref_seconds:.1f}s, answer {answer_seconds:.1f}s, "
                        f"extension builds {build_seconds:.1f}s")
    if verdict is not None:
        status, rule, reason = verdict
        if status == Status.FAILED and plan.scaled:
            reason += (f" (at the scaled sizes {plan.sizes}; the original sizes "
                       f"{plan.original_sizes} are too large for the cpu backend: an answer "
                       "that hard-codes them fails only here)")
        return done(status, f"{rule}: {reason}" if rule else reason, rule=rule)
    if not result.cases:
        # `_judge_run` answers every ok run that lacks a case: none judged is our own failure.
        return done(Status.ERROR, "no case of the answer was judged",
                    error_origin=ErrorOrigin.VALIDATOR)
    return done(worst_status([c.status for c in result.cases]))


def _judge_run(run: AnswerRun, groups: list[RefGroup], cases: dict[str, CaseResult], *,
               count_launches: bool, atol: float | None, rtol: float | None
               ) -> tuple[Status, str, str] | None:
    """Fill the case results from one run; the decided verdict (status, rule, reason), or None
    when every case passed."""
    where = f"{run.variant} build, {run.schedule} schedule" + (
        f", poison 0x{run.poison:02x}" if run.poison is not None else "")
    if run.read_early:
        return Status.REJECTED, "inputs_read_early", (
            "the answer's process asked for a case's inputs before the harness called forward "
            f"on it (it read inputs ahead of their call; {where})")
    if run.status == "needs_gpu":
        return Status.NEEDS_GPU, "", f"the answer uses {run.needs_gpu}, which only runs on a GPU"
    if run.status == "no_gpu":
        return Status.NEEDS_GPU, "", (f"the GPU the probe found did not answer in the answer's "
                                      f"process: {run.reason}")
    if run.status == "build_error":
        if run.needs_gpu:
            return Status.NEEDS_GPU, "", f"the extension uses {run.needs_gpu}, which only runs on a GPU"
        return Status.COMPILE_ERROR, "", f"{run.reason}: {run.diagnostics[-1500:]}"
    if run.status in ("load_error", "init_error"):
        if run.status == "load_error":
            return Status.RUNTIME_ERROR, "", f"{IMPORT_FAILED}: {run.reason}"
        return Status.RUNTIME_ERROR, "", f"building ModelNew failed: {run.reason}"
    rule = inherits_rule(run)
    if rule:
        return Status.REJECTED, rule[0], rule[1]
    if run.status == "pending":
        return Status.RUNTIME_ERROR, "", (f"the answer asked for a new extension build in each "
                                          f"of {run.passes} passes")
    by_name = {c.name: c for g in groups for c in g.cases}
    if run.status == "ok":
        # "ok" is the answer's process speaking, and the answer runs in it: it can empty the
        # harness's list of cases or end the process on a result of its own. A verdict stands
        # only on every case, each once.
        names = [c.name for c in run.calls]
        if sorted(names) != sorted(by_name):
            return Status.RUNTIME_ERROR, "", (
                f"the answer's process reported {len(set(names) & set(by_name))} of "
                f"{len(by_name)} calls ({where})")
        broken = launch_rule(run) if count_launches else None
        if broken:
            return Status.REJECTED, broken[0], f"{broken[1]} ({where})"
    decided: tuple[Status, str, str] | None = None
    for call in run.calls:
        ref = by_name.get(call.name)
        if ref is None:
            continue
        status, rule_name, reason, checks = _judge_call(call, ref, count_launches, atol, rtol)
        if status == Status.PASSED and run.poison is not None:
            left = unwritten_elements(call.outputs or [], run.poison)
            if left:
                status, reason = Status.FAILED, left
        prev = cases.get(call.name)
        schedules = sorted({*(prev.schedules if prev else []), run.schedule})
        if prev is None or prev.status == Status.PASSED:
            cases[call.name] = CaseResult(case=call.name, status=status, seed=ref.seed,
                                          reason=f"{reason} ({where})" if reason else "",
                                          outputs=checks, seconds=call.seconds,
                                          schedules=schedules)
        else:
            prev.schedules = schedules
        if status != Status.PASSED and decided is None:
            decided = (status, rule_name, f"case {call.name}: {reason} ({where})")
    if decided is not None:
        return decided
    if run.status == "ok":
        broken = torch_result_rule(run, by_name, atol, rtol)
        if broken:
            return Status.REJECTED, broken[0], f"{broken[1]} ({where})"
    if run.status != "ok" and run.runtime_verdict is not None:
        return Status(run.runtime_verdict[0]), "", f"{run.runtime_verdict[1]} ({where})"
    if run.status != "ok":
        status = Status.TIMEOUT if "out of time" in run.reason else Status.RUNTIME_ERROR
        return status, "", f"the answer's process stopped ({where}): {run.reason}"
    return None


# Element widths whose every bit pattern is a value no computation lands on by chance: an element
# that holds the fill of fresh memory bit for bit was never written. (A 16-bit float's fill is an
# ordinary value, -0.0215 for 0xA5A5, and a byte's is any byte.)
_FILL_WIDTHS = (4, 8)


def unwritten_elements(outputs: list[torch.Tensor], poison: int, *, whole: bool = False) -> str:
    """Why an output was left (partly; `whole`: entirely) unwritten: elements of 32 or 64 bits
    (bfloat16 too) that hold the poison byte in every byte. The first poison byte reads as a
    float of -2.9e-16, so an output the answer never wrote where the reference is zero (ReLU's
    negatives) passed the tolerance under `--fast`, which has no second byte to compare with.
    "" when none is."""
    for k, out in enumerate(outputs):
        if not isinstance(out, torch.Tensor) or out.numel() == 0 or out.is_complex():
            continue
        width = out.element_size()
        if width not in _FILL_WIDTHS and out.dtype != torch.bfloat16:
            continue
        raw = out.detach().contiguous().reshape(-1).view(torch.uint8).reshape(-1, width)
        hit = (raw == poison).all(dim=1)
        count = int(hit.sum())
        if count == out.numel() or (count and not whole):
            first = int(hit.nonzero()[0, 0])
            return (f"output out{k}: {count} of {out.numel()} elements were never written (they "
                    f"hold the fill of fresh memory, 0x{poison:02x} in every byte; first at index "
                    f"{first})")
    return ""


def _judge_call(call: object, ref: object, count_launches: bool, atol: float | None,
                rtol: float | None) -> tuple[Status, str, str, list[OutputCheck]]:
    from .answer import Call
    from .reference import RefCase

    assert isinstance(call, Call) and isinstance(ref, RefCase)
    if call.error:
        return Status.RUNTIME_ERROR, "", f"forward raised {call.error}", []
    broken = call_rule(call, ref, count_launches=count_launches)
    if broken:
        return Status.REJECTED, broken[0], broken[1], []
    checks = [compare_tensor(f"out{k}", o, r, tolerance_for(r.dtype, atol, rtol))
              for k, (o, r) in enumerate(zip(call.outputs or [], ref.outputs, strict=True))]
    bad = [c for c in checks if not c.ok]
    if bad:
        return Status.FAILED, "", bad[0].reason, checks
    return Status.PASSED, "", "", checks


def _first_difference(a: AnswerRun, b: AnswerRun, groups: list[RefGroup], atol: float | None,
                      rtol: float | None) -> str:
    """Where two runs' outputs differ beyond the tolerance (floats that round differently with
    the order of threads are no difference, as for programs); "" when they agree."""
    refs = {c.name: c for g in groups for c in g.cases}
    theirs = {c.name: c for c in b.calls}
    for mine in a.calls:
        other, ref = theirs.get(mine.name), refs.get(mine.name)
        if other is None or ref is None or mine.outputs is None or other.outputs is None:
            continue
        for k, (x, y, r) in enumerate(zip(mine.outputs, other.outputs, ref.outputs, strict=False)):
            if same_tensor(x, y) or (x.shape == y.shape and x.dtype == y.dtype and compare_tensor(
                    f"out{k}", x, y, tolerance_for(r.dtype, atol, rtol)).ok):
                continue
            if x.shape != y.shape or x.dtype != y.dtype:
                return f"case {mine.name}: out{k} is {x.dtype} {list(x.shape)} in one run, " \
                       f"{y.dtype} {list(y.shape)} in the other"
            xf, yf = x.reshape(-1), y.reshape(-1)
            same = (xf == yf) | (xf.isnan() & yf.isnan()) if xf.is_floating_point() else xf == yf
            i = int((~same).nonzero()[0, 0]) if not bool(same.all()) else 0
            return f"case {mine.name}: out{k} differs at index {i} ({xf[i].item()!r} vs {yf[i].item()!r})"
    return ""


def _uninitialised_reads(answer_source: str, groups: list[RefGroup], runs: list[AnswerRun],
                         atol: float | None, rtol: float | None, *, gpu: bool = False
                         ) -> tuple[Status, str, str] | None:
    """Two runs of one schedule whose memory started with different bytes and whose outputs
    differ read memory nobody wrote: the reason programs get (validators/engine.py), naming the
    runtime's buffer when starting it alone with the other byte changes the outputs."""
    for a in runs:
        for b in runs:
            if not (a.schedule == b.schedule and a.poison is not None and b.poison is not None
                    and a.poison < b.poison and a.status == b.status == "ok"):
                continue
            diff = _first_difference(a, b, groups, atol, rtol)
            if not diff:
                continue
            # Probed on the plain build where the pair has one (the cheaper run).
            base, alt = (a, b) if a.variant == "plain" else (b, a)
            named = ""
            for k, desc in sorted(base.poison_log.items())[:MAX_POISON_PROBES]:
                try:
                    probe = run_answer(answer_source, groups, variant=base.variant,
                                       schedule=base.schedule, poison=base.poison,
                                       poison_only=k, poison_alt=alt.poison, follow=base.follow)
                except (HarnessError, SandboxError):
                    break  # our machinery: the buffer stays unnamed, the finding stands
                if probe.status == "ok" and _first_difference(base, probe, groups, atol, rtol):
                    named = desc
                    break
            what = named or "memory no thread or copy wrote"
            # On a GPU only torch's allocations are poisoned: shared memory is the hardware's.
            poisoned = "new allocations start" if gpu else "device and shared memory start"
            return (Status.FAILED, "", f"reads uninitialised memory: {what} (outputs change when "
                    f"{poisoned} as 0x{a.poison:02x} instead of "
                    f"0x{b.poison:02x}: {diff})")
    return None


def _schedule_dependent(runs: list[AnswerRun], groups: list[RefGroup], atol: float | None,
                        rtol: float | None) -> tuple[Status, str, str] | None:
    """Outputs that change with the thread schedule or build: a race the lost-update detector
    does not see (a read racing a write, a missing barrier), worded as for programs."""
    done = [r for r in runs if r.status == "ok"]
    for other in done[1:]:
        diff = _first_difference(done[0], other, groups, atol, rtol)
        if diff:
            return (Status.FAILED, "", f"schedule-dependent: {diff} between {done[0].variant}/"
                    f"{done[0].schedule} and {other.variant}/{other.schedule} (a race or a "
                    "missing barrier?)")
    return None


def _kernel_dependence(answer_source: str, groups: list[RefGroup], runs: list[AnswerRun],
                       result: ValidationResult, atol: float | None, rtol: float | None, *,
                       allow_torch_only: bool = False) -> tuple[Status, str, str] | None:
    """Run once more with every kernel launch a no-op: outputs that still all match were not
    computed by the kernels."""
    launched = sum(c.launches or 0 for r in runs for c in r.calls)
    if not launched:
        result.kernel_check = "not checked: no kernel was launched" + (
            " (--allow-torch-only)" if allow_torch_only else "")
        return None
    try:
        run = run_answer(answer_source, groups, variant="plain", schedule="forward",
                         poison=POISON_BYTES[0], no_launch=True, emulate=True,
                         follow=runs[0].follow)
    except (HarnessError, SandboxError) as exc:
        result.notes.append(f"the no-launch run could not start: {exc}")
        result.kernel_check = "not checked: the no-launch run could not start"
        return None
    by_name = {c.name: c for g in groups for c in g.cases}
    for call in run.calls:
        ref = by_name.get(call.name)
        if ref is None:
            continue
        status, *_ = _judge_call(call, ref, False, atol, rtol)
        if status != Status.PASSED:
            result.kernel_check = f"depends on the kernels (case {call.name})"
            return None
        # An output that is fresh memory's fill throughout is what the kernels were to write: a
        # kernel whose correct result is zero (a reference that is zero for every input) is no
        # less the answer's work for matching the fill, which reads as zero. (Whole outputs only:
        # one element a kernel writes into torch's result is no kernel's work.)
        if unwritten_elements(call.outputs or [], run.poison, whole=True):
            result.kernel_check = (f"depends on the kernels (case {call.name}): without them an "
                                   "output is memory nothing wrote")
            return None
    if run.status != "ok" or len(run.calls) < len(by_name):
        result.kernel_check = "depends on the kernels (the no-launch run did not finish)"
        return None
    result.kernel_check = "outputs do not depend on the kernels"
    return (Status.REJECTED, "kernels_not_used",
            "with every kernel launch a no-op, every output still matched the reference")


def _record_builds(result: ValidationResult, runs: list[AnswerRun]) -> None:
    builds = [b for r in runs for b in r.builds]
    if not builds:
        return
    result.compile = CompileInfo(
        compiler="g++ (cpu shim, torch extension)", ok=all(b.ok for b in builds),
        seconds=sum(b.seconds for b in builds), cached=all(b.cached for b in builds),
        diagnostics="\n".join(b.diagnostics for b in builds if b.diagnostics)[-4000:])


