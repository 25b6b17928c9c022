"""Run an answer's `ModelNew` in its own sandboxed process, on inputs the reference drew.

On the cpu backend, `torch.utils.cpp_extension.load_inline`/`load` are served by the project
(`validators.cpu.torch_cuda`, `validators.cpu.extension`) in passes: a pass that reaches a build
the cache does not hold records the request and ends; the verifier builds it in the build
sandbox (the answer's sandbox never compiles) and runs the next pass. A pass that ended that
way is void, never a verdict.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load as load_tensors

import schemas
import validators
from validators.compare import read_no_follow
from validators.engine import POISON_LOG, SHIM_LOG_WIDTH, _read_poison_log
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

from .gpu import POISON_SMALL_BLOCKS, gpu_profile, poison_large_bytes
from .harness import ANSWER_HARNESS
from .reference import RefGroup

ANSWER_LIMITS = Limits(cpu_seconds=900, wall_seconds=900, memory_bytes=16 * GIB,
                       file_size_bytes=1 * GIB, max_processes=128, output_bytes=1 << 20,
                       disk_bytes=4 * GIB)
"""Emulated kernels are slow: ten forward calls of a matmul take minutes on two cores."""

MAX_PASSES = 5
KNOWN_ANSWERS = 256
"""Answers whose extension requests this process remembers (`_known_requests`)."""
_KNOWN: collections.OrderedDict[str, list] = collections.OrderedDict()


def _answer_digest(answer_source: str) -> str:
    return hashlib.sha256(answer_source.encode("utf-8", "surrogatepass")).hexdigest()


def _known_requests(answer_source: str, variant: str) -> list:
    """The extension requests an earlier run of the same answer made (in this process), for
    `variant`: built and placed before the first pass, that pass runs the answer instead of
    only discovering what to build (one Python-and-torch start less per run; a check makes
    several runs). An answer that asks for something else this time is built as before."""
    reqs = _KNOWN.get(_answer_digest(answer_source), [])
    return [dataclasses.replace(r, variant=variant) for r in reqs]


def _remember_requests(answer_source: str, reqs: list) -> None:
    digest = _answer_digest(answer_source)
    known = _KNOWN.pop(digest, [])
    for r in reqs:
        r = dataclasses.replace(r, variant="plain")
        if r not in known:
            known.append(r)
    _KNOWN[digest] = known
    while len(_KNOWN) > KNOWN_ANSWERS:
        _KNOWN.popitem(last=False)
"""Each pass can discover one more extension to build (answers usually build one or two)."""


@dataclass
class BuildInfo:
    name: str
    ok: bool
    seconds: float = 0.0
    cached: bool = False
    diagnostics: str = ""
    needs_gpu: str = ""


@dataclass
class Call:
    name: str
    launches: int | None
    error: str
    form: list[str]
    seconds: float
    outputs: list[torch.Tensor] | None = None
    inputs_after: dict[str, torch.Tensor] | None = None


@dataclass
class AnswerRun:
    """One process of the answer under one build variant, schedule and poison byte."""

    variant: str
    schedule: str
    poison: int | None
    no_launch: bool
    status: str = ""
    """`ok`, `load_error`, `init_error`, `build_error`, `pending` (ran out of passes),
    `no_gpu` (cuda backend: CUDA did not start in the process; no verdict),
    `crashed` (the process died: `reason` says how), `harness_error`."""
    reason: str = ""
    diagnostics: str = ""
    needs_gpu: str = ""
    inherits: str = ""
    calls: list[Call] = field(default_factory=list)
    builds: list[BuildInfo] = field(default_factory=list)
    passes: int = 0
    seconds: float = 0.0
    build_seconds: float = 0.0
    stderr_tail: str = ""
    traceback: str = ""
    runtime_verdict: tuple[str, str] | None = None
    """(status, reason) from the emulator's report when it stopped the process."""
    poison_effective: bool | None = None
    """On a GPU: whether new allocations did start as the poison byte (None: not poisoned)."""
    poison_log: dict[int, str] = field(default_factory=dict)
    """The runtime's poisoned buffers (shared memory, cudaMalloc) by number, as for programs:
    `run_answer(poison_only=k, poison_alt=B)` starts buffer k with B instead."""


def emulation_available() -> bool:
    """Whether the project serves CUDA extensions on the CPU (validators.cpu.torch_cuda)."""
    try:
        from validators.cpu import extension, torch_cuda  # noqa: F401
    except ImportError:
        return False
    return True


def _package_dirs() -> list[Path]:
    # Only the packages the harness imports, never the repository: a problem file may live in
    # it, and the answer must not find one.
    return [Path(validators.__file__).resolve().parent, Path(schemas.__file__).resolve().parent]


def _build_failed(run: AnswerRun, started: float) -> bool:
    """Ends `run` as a build error when one of its extensions did not build (no pass runs
    the answer after that); False when every build succeeded."""
    import time

    failed = [b for b in run.builds if not b.ok]
    if not failed:
        return False
    run.status = "build_error"
    run.reason = f"extension {failed[0].name!r} did not build"
    run.diagnostics = failed[0].diagnostics
    run.needs_gpu = failed[0].needs_gpu
    run.seconds = time.perf_counter() - started
    return True


def run_answer(answer_source: str, groups: list[RefGroup], *, variant: str = "plain",
               schedule: str = "forward", poison: int | None = None, no_launch: bool = False,
               emulate: bool = True, limits: Limits | None = None,
               max_bytes: int = 1 << 30, poison_only: int | None = None,
               poison_alt: int | None = None, gpu: bool = False) -> AnswerRun:
    """Run every case of `groups` through ModelNew in one process (so a result cached across
    calls shows). Raises HarnessError when our harness could not reach the answer's code.

    `gpu`: the cuda backend (see `gpu.py`): the real torch on a real GPU, extensions built by
    torch's own builder inside the answer's sandbox, `poison` filled into the caching
    allocator's free memory before each construction and call; `emulate` must be False."""
    import time

    if gpu and emulate:
        raise ValueError("a run is either emulated (cpu backend) or on a GPU (cuda), not both")

    run = AnswerRun(variant=variant, schedule=schedule, poison=poison, no_launch=no_launch)
    limits = limits or ANSWER_LIMITS
    started = time.perf_counter()
    with workspace(limits, prefix="ckd-kb-answer-") as d:
        work = Path(d) / "work"
        (work / "inputs").mkdir(parents=True)
        build_root = work / "build"
        build_root.mkdir()
        (work / "answer.py").write_text(answer_source)
        protect = ["answer.py", "spec.json"]
        for g in groups:
            for c in g.cases:
                (work / "inputs" / f"{c.name}.safetensors").write_bytes(c.input_bytes)
                protect.append(f"inputs/{c.name}.safetensors")
        pkgs = _package_dirs()
        expose = [*python_prefixes(), *pkgs]
        env = dict(TORCH_ENV)
        profile = gpu_profile(work, limits) if gpu else None
        if profile is not None:
            limits = profile.limits
            env |= profile.env
            expose += profile.expose
        prefixes = [str(p) for p in expose]
        largest = max((t.numel() * t.element_size() for g in groups for c in g.cases
                       for t in [*c.inputs.values(), *c.outputs]), default=0)
        (work / "spec.json").write_text(json.dumps({
            "package_root": str(pkgs[0].parent), "cuda": emulate or gpu, "gpu": gpu,
            "build_root": str(build_root), "poison": poison, "variant": variant,
            "prefixes": prefixes, "poison_large": poison_large_bytes(largest),
            "poison_small": POISON_SMALL_BLOCKS,
            "groups": [{"seed": g.seed, "init": g.init,
                        "cases": [{"name": c.name, "args": c.args} for c in g.cases]}
                       for g in groups]}))
        if emulate:
            env["CUDASHIM_SCHEDULE"] = schedule
            if no_launch:
                env["CUDASHIM_NO_LAUNCH"] = "1"
            # The runtime names the memory it poisons, as for programs (the engine's log file,
            # padded alike in every run); install() takes the settings out of the answer's sight.
            env["CUDASHIM_POISON_LOG"] = str(work / POISON_LOG).ljust(SHIM_LOG_WIDTH)
            if poison_only is not None and poison_alt is not None:
                env |= {"CUDASHIM_POISON_ONLY": str(poison_only),
                        "CUDASHIM_POISON_ALT": f"0x{poison_alt:02x}"}
        extension = None
        if emulate:
            from validators.cpu import extension
        found: dict[str, Any] | None = None
        out = None
        if extension is not None:
            known = _known_requests(answer_source, variant)
            if known:
                from validators.build_cache import BuildCache

                extension.prepare_runtime(build_root, variant)
                t0 = time.perf_counter()
                for req in known:
                    o = extension.build_one(req, build_root, cache=BuildCache(), sandboxed=True)
                    run.builds.append(BuildInfo(name=o.name, ok=o.ok, seconds=o.seconds, cached=o.cached,
                                                diagnostics=o.diagnostics or "",
                                                needs_gpu=o.needs_gpu or ""))
                run.build_seconds += time.perf_counter() - t0
                if _build_failed(run, started):  # as when a first pass asked for it
                    return run
        for _ in range(MAX_PASSES):
            run.passes += 1
            if extension is not None:
                extension.prepare_runtime(build_root, variant)
            shutil.rmtree(work / "out", ignore_errors=True)
            (work / POISON_LOG).unlink(missing_ok=True)  # numbered afresh by each process
            built = [str(p.relative_to(work)) for sub in ("ext", "lib")
                     for p in sorted((build_root / sub).rglob("*")) if p.is_file()]
            out = run_sandboxed([python_executable(), "-I", "-c", ANSWER_HARNESS], work,
                                limits=limits, env=env, expose=expose,
                                protect=protect + built, preimport=TORCH_PREIMPORT)
            try:
                found = json.loads(read_no_follow(work / "out" / "answer.json", root=work,
                                                  max_bytes=64 << 20))
            except (OSError, ValueError):
                found = None
            pending = extension.pending_requests(build_root) if extension else []
            if not pending:
                break
            _remember_requests(answer_source, pending)
            t0 = time.perf_counter()
            outcomes = extension.build_pending(build_root, variant=variant, sandboxed=True)
            run.build_seconds += time.perf_counter() - t0
            run.builds += [BuildInfo(name=o.name, ok=o.ok, seconds=o.seconds, cached=o.cached,
                                     diagnostics=o.diagnostics or "",
                                     needs_gpu=o.needs_gpu or "") for o in outcomes]
            if _build_failed(run, started):
                return run
        assert out is not None
        run.stderr_tail = out.stderr[-2000:]
        if not isinstance(found, dict):
            if not harness_reached(out.stderr):
                raise harness_failure("KernelBench answer", out.stderr, out.exit_code)
            found = {"status": "running"}
        run.status = str(found.get("status", ""))
        run.reason = str(found.get("reason", ""))[:2000]
        run.traceback = str(found.get("traceback", ""))[:2000]
        run.diagnostics = str(found.get("diagnostics", ""))
        run.needs_gpu = str(found.get("needs_gpu", ""))
        run.inherits = str(found.get("inherits", ""))
        if gpu:
            # Torch's builder ran inside the import: its time is the build's.
            run.build_seconds = float(found.get("import_seconds") or 0.0)
            run.poison_effective = found.get("poison_effective")
        if run.status == "running":  # the process died in the middle of a call
            run.status = "crashed"
            run.reason = _death(out)
        if run.status == "crashed" and emulate:
            from validators.cpu.diagnostics import runtime_verdict

            # The emulator's own report (a race in the race build, a deadlock, a GPU-only
            # library call) names what stopped the process.
            run.runtime_verdict = runtime_verdict(out.stdout, out.stderr, out.exit_code)
        if emulate:
            run.poison_log = _read_poison_log(work)
        for c in found.get("calls", []):
            run.calls.append(_read_call(work, c, max_bytes))
    run.seconds = time.perf_counter() - started
    return run


def _read_call(work: Path, c: dict[str, Any], max_bytes: int) -> Call:
    call = Call(name=str(c.get("name")), launches=c.get("launches"), error=str(c.get("error", "")),
                form=[str(x) for x in c.get("form", [])], seconds=float(c.get("seconds", 0.0)))
    if call.error:
        return call
    # The files were written in the answer's process: a malformed one is the answer's doing.
    try:
        if not call.form:
            outs = load_tensors(read_no_follow(work / "out" / f"outputs-{call.name}.safetensors",
                                               root=work, max_bytes=max_bytes))
            call.outputs = [outs[f"out{k}"] for k in range(len(outs))]
        call.inputs_after = load_tensors(read_no_follow(
            work / "out" / f"after-{call.name}.safetensors", root=work, max_bytes=max_bytes))
    except Exception as exc:  # safetensors raises its own error type for a malformed file
        call.error = f"its results could not be read back ({type(exc).__name__}: {exc})"[:800]
        call.outputs = call.inputs_after = None
    return call


def _death(out: Any) -> str:
    if out.timed_out or out.limit_hit == "cpu":
        return f"ran out of time ({out.seconds:.0f}s, sandbox {out.limit_hit or 'wall'} limit)"
    if out.limit_hit:
        return f"hit the sandbox {out.limit_hit} limit"
    if out.signal:
        return f"the answer's process was killed by signal {out.signal}"
    tail = (out.stderr.strip().splitlines() or [f"exit code {out.exit_code}"])[-1]
    return f"the answer's process exited ({out.exit_code}): {tail[:300]}"
