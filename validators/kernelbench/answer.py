"""Run an answer's `ModelNew` in its own sandboxed process, on inputs the reference drew.

On the cpu backend, `torch.utils.cpp_extension.load_inline`/`load` are served by the project
(`validators.cpu.torch_cuda`, `validators.cpu.extension`) in passes: a pass that reaches a build
the cache does not hold records the request and ends; the verifier builds it in the build
sandbox (the answer's sandbox never compiles) and runs the next pass. A pass that ended that
way is void, never a verdict.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import errno
import hashlib
import hmac
import json
import shutil
import threading
from collections.abc import Iterator
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
    HarnessError,
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
from .reference import RefCase, RefGroup

ANSWER_LIMITS = Limits(cpu_seconds=900, wall_seconds=900, memory_bytes=16 * GIB,
                       file_size_bytes=1 * GIB, max_processes=128, output_bytes=1 << 20,
                       disk_bytes=4 * GIB)
"""Emulated kernels are slow: ten forward calls of a matmul take minutes on two cores."""

MAX_PASSES = 5
LIBRARIES = ("thrust", "cub", "cublas", "cusparse", "curand", "cufft", "other")
"""The libraries whose computing calls the emulator's runtime counts (`cudashim_library_calls`)."""
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
    torch_results: dict[int, tuple[torch.Tensor, str]] | None = None
    """Per output, the nearest result PyTorch computed in the call from data no kernel wrote,
    with its op (`provenance.py`); None where the run did not follow the data."""
    library: dict[str, int] = dataclasses.field(default_factory=dict)
    """Computing library calls the call made, per library (cuBLAS, cuSPARSE, CUB, Thrust,
    cuRAND: work that no kernel of the answer's did; counted by the emulator's runtime)."""
    torch_lost: bool = False
    """The answer moved the dispatch mode that follows the data during this call, or changed
    what the harness runs (`lost_why` says which)."""
    lost_why: str = ""


@dataclass
class AnswerRun:
    """One process of the answer under one build variant, schedule and poison byte."""

    variant: str
    schedule: str
    poison: int | None
    no_launch: bool
    follow: bool = False
    """Whether the process followed what PyTorch computed by itself (`provenance.py`)."""
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
    native_launches: int | None = None
    """Emulated runs that ended ok: the kernel launches the emulator's runtime counted in the
    whole process (its report at exit), against which the harness's per-call counts are held."""
    poison_effective: bool | None = None
    """On a GPU: whether new allocations did start as the poison byte (None: not poisoned)."""
    tampered: list[str] = field(default_factory=list)
    read_early: bool = False
    """The process asked the verifier for more cases' inputs than the harness's calls did:
    the answer read inputs before their call (`inputs_read_early`)."""
    """What the answer changed of what the harness runs (module and class attributes, the
    harness's globals, signal handlers, ATen kernels), each put back by the harness: e.g.
    `harness.launch_count`."""
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


_BUDGET = threading.local()


@contextlib.contextmanager
def program_budget(seconds: float | None) -> Iterator[None]:
    """The wall seconds every answer process run on this thread within the block may take,
    all together (None: the per-process limits only): a process gets at most what the others
    left, and one stopped by it ran out of time (`timeout`, a verdict on the answer), so a
    caller with a deadline (the service) gets a verdict before it, not after."""
    _BUDGET.left, _BUDGET.total = seconds, seconds
    try:
        yield
    finally:
        _BUDGET.left = _BUDGET.total = None


def run_answer(answer_source: str, groups: list[RefGroup], *, variant: str = "plain",
               schedule: str = "forward", poison: int | None = None, no_launch: bool = False,
               emulate: bool = True, limits: Limits | None = None,
               max_bytes: int = 1 << 30, poison_only: int | None = None,
               poison_alt: int | None = None, gpu: bool = False, follow: bool = False
               ) -> AnswerRun:
    """Run every case of `groups` through ModelNew in one process (so a result cached across
    calls shows). Raises HarnessError when our harness could not reach the answer's code.

    Every pass gets a workspace of its own: nothing an earlier pass (or run) wrote is there, so
    the answer cannot tell which pass or which run (the no-launch run included) it is in from
    files; the extensions built so far are kept outside, in a folder only the verifier writes,
    and copied in.

    `gpu`: the cuda backend (see `gpu.py`): the real torch on a real GPU, extensions built by
    torch's own builder inside the answer's sandbox, `poison` filled into the caching
    allocator's free memory before each construction and call; `emulate` must be False.

    `follow`: record what PyTorch computes by itself in each call (the `torch_result` rule)."""
    import tempfile
    import time

    if gpu and emulate:
        raise ValueError("a run is either emulated (cpu backend) or on a GPU (cuda), not both")

    run = AnswerRun(variant=variant, schedule=schedule, poison=poison, no_launch=no_launch,
                    follow=follow)
    limits = limits or ANSWER_LIMITS
    started = time.perf_counter()
    extension = None
    if emulate:
        from validators.cpu import extension
    # The answer's process is told it runs the plain build whatever the run's build is (nothing
    # in it may name the build): its requests carry the plain build's key, under which the
    # run's own builds are placed for it.
    aliases: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="ckd-kb-builds-") as kept:
        builds = Path(kept)
        if extension is not None:
            known = _known_requests(answer_source, variant)
            if known:
                from validators.build_cache import BuildCache

                extension.prepare_runtime(builds, variant)
                t0 = time.perf_counter()
                for req in known:
                    aliases[req.key()] = dataclasses.replace(req, variant="plain").key()
                    o = extension.build_one(req, builds, cache=BuildCache(), sandboxed=True)
                    run.builds.append(BuildInfo(name=o.name, ok=o.ok, seconds=o.seconds, cached=o.cached,
                                                diagnostics=o.diagnostics or "",
                                                needs_gpu=o.needs_gpu or ""))
                run.build_seconds += time.perf_counter() - t0
                if _build_failed(run, started):  # as when a first pass asked for it
                    return run
        for _ in range(MAX_PASSES):
            run.passes += 1
            requested = _one_pass(run, answer_source, groups, builds, limits=limits,
                                  emulate=emulate, gpu=gpu, max_bytes=max_bytes,
                                  poison_only=poison_only, poison_alt=poison_alt, follow=follow,
                                  aliases=aliases)
            if extension is None or not requested:
                break
            pending = extension.pending_requests(builds)
            if pending:
                _remember_requests(answer_source, pending)
            t0 = time.perf_counter()
            outcomes = extension.build_pending(builds, variant=variant, sandboxed=True)
            run.build_seconds += time.perf_counter() - t0
            run.builds += [BuildInfo(name=o.name, ok=o.ok, seconds=o.seconds, cached=o.cached,
                                     diagnostics=o.diagnostics or "",
                                     needs_gpu=o.needs_gpu or "") for o in outcomes]
            if _build_failed(run, started):
                return run
            if not outcomes:
                break  # every request it made is built: it asks again for nothing new
    run.seconds = time.perf_counter() - started
    return run


MAX_REQUEST_BYTES = 16 << 20


def _one_pass(run: AnswerRun, answer_source: str, groups: list[RefGroup], builds: Path, *,
              limits: Limits, emulate: bool, gpu: bool, max_bytes: int,
              poison_only: int | None, poison_alt: int | None, follow: bool = False,
              aliases: dict[str, str] | None = None) -> bool:
    """One process of the answer in a new workspace; fills `run` from it (what an earlier,
    void pass left there is replaced). True when it recorded extension requests, which are
    copied into `builds` (the verifier's folder) for `build_pending`, labelled with the run's
    build; `aliases` maps their keys to the plain build's, the keys the process asks for.

    What tells this run from the check's others (the build, the poison byte) never reaches
    the answer's sight: spec.json, the environment and the arguments are alike in every run,
    the poison byte comes through the harness's pipe with the completion token, and the
    runtime's marker of its build is removed from the work folder."""
    import secrets

    from validators.run_timing import RUN_TIMING_FILE
    from validators.run_timing import parse as parse_run_report

    aliases = {} if aliases is None else aliases

    run.calls, run.poison_log, run.native_launches, run.tampered = [], {}, None, []
    run.status = run.reason = run.traceback = run.diagnostics = run.needs_gpu = run.inherits = ""
    run.runtime_verdict = run.poison_effective = None
    with workspace(limits, prefix="ckd-kb-answer-") as d:
        work = Path(d) / "work"
        work.mkdir(parents=True)
        build_root = work / "build"
        build_root.mkdir()
        (work / "answer.py").write_text(answer_source)
        protect = ["answer.py", "spec.json"]
        expected = [c.name for g in groups for c in g.cases]
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
            "build_root": str(build_root), "prefixes": prefixes,
            "poison_large": poison_large_bytes(largest),
            "poison_small": POISON_SMALL_BLOCKS, "follow": follow,
            "groups": [{"seed": g.seed, "init": g.init,
                        "cases": [{"name": c.name, "args": c.args} for c in g.cases]}
                       for g in groups]}))
        if emulate:
            from validators.cpu import extension

            extension.prepare_runtime(build_root, run.variant)
            (build_root / extension.LIB / "variant").unlink(missing_ok=True)  # names the build
            if (builds / extension.EXT).is_dir():
                for built_ext in sorted((builds / extension.EXT).iterdir()):
                    shutil.copytree(built_ext, build_root / extension.EXT
                                    / aliases.get(built_ext.name, built_ext.name))
            env["CUDASHIM_SCHEDULE"] = run.schedule
            # Set in every run, "0" or "1": the runtime erases its settings from the process's
            # environment when it loads, but an extra variable would still show in its length.
            env["CUDASHIM_NO_LAUNCH"] = "1" if run.no_launch else "0"
            # The runtime names the memory it poisons, as for programs (the engine's log file,
            # padded alike in every run); install() takes the settings out of the answer's sight.
            env["CUDASHIM_POISON_LOG"] = str(work / POISON_LOG).ljust(SHIM_LOG_WIDTH)
            # The runtime's own count of launches, written at exit: the harness's per-call counts
            # are Python the answer can rewrite (`_launch_evidence`).
            env["CUDASHIM_RUN_TIMING"] = str(work / RUN_TIMING_FILE).ljust(SHIM_LOG_WIDTH)
            # The runtime's fatal lines carry it: "needs a GPU" printed by the answer is not the
            # runtime's (`diagnostics.runtime_verdict`).
            env["CUDASHIM_FATAL_TAG"] = fatal_tag = secrets.token_hex(16)
            if poison_only is not None and poison_alt is not None:
                env |= {"CUDASHIM_POISON_ONLY": str(poison_only),
                        "CUDASHIM_POISON_ALT": f"0x{poison_alt:02x}"}
        built = [str(p.relative_to(work)) for sub in ("ext", "lib")
                 for p in sorted((build_root / sub).rglob("*")) if p.is_file()]
        # The harness's completion token, which seals its final result, and the poison byte:
        # read from a pipe before the answer's code runs (see `ANSWER_HARNESS`).
        token = secrets.token_hex(16)
        server = _InputServer(token.encode() + b"\n" + json.dumps({"poison": run.poison}).encode(),
                              [_input_frame(c) for g in groups for c in g.cases])
        try:
            left = getattr(_BUDGET, "left", None)
            capped = left is not None and left < limits.wall_seconds
            if capped:
                left = max(left, 0.5)  # a process that cannot start in less
                limits = limits.with_overrides(
                    wall_seconds=left, cpu_seconds=min(limits.cpu_seconds or left, left))
            out = run_sandboxed([python_executable(), "-I", "-c", ANSWER_HARNESS], work,
                                limits=limits, env=env, expose=expose,
                                protect=protect + built, preimport=TORCH_PREIMPORT,
                                stdin=server.theirs.fileno())
            if left is not None:
                _BUDGET.left = left - out.seconds
        finally:
            server.close()
        if server.failed:
            raise HarnessError(f"serving the answer's inputs failed: {server.failed}")
        try:
            found: Any = json.loads(read_no_follow(work / "out" / "answer.json", root=work,
                                                   max_bytes=64 << 20))
        except (OSError, ValueError):
            found = None
        found, sealed = _unseal(found, token)
        requested = emulate and _copy_requests(build_root, builds, run.variant, aliases)
        run.stderr_tail = out.stderr[-2000:]
        if found is None:
            if not harness_reached(out.stderr):
                raise harness_failure("KernelBench answer", out.stderr, out.exit_code)
            found = {"status": "running", "calls": []}  # it died before its first result
        malformed = _malformed(found, expected, gpu=gpu)
        if malformed:
            # Only the answer's process writes this file: a malformed one is its doing.
            run.status = "crashed"
            run.reason = f"the answer's process left a malformed result file ({malformed})"
            return requested
        assert isinstance(found, dict)
        # The harness asks once per call it starts (a call it died in is not recorded): more
        # requests are the answer's own, reading inputs ahead of their calls.
        asked = len(found["calls"]) + (0 if found["status"] == "ok" else 1)
        run.read_early = server.requests > asked
        run.status = found["status"]
        if run.status != "running" and not sealed:
            run.status = "crashed"
            run.reason = (f"the answer's process reported {found['status']!r} in a result file "
                          "the harness did not complete (no completion token)")
            return requested
        run.reason = str(found.get("reason", ""))[:2000]
        run.traceback = str(found.get("traceback", ""))[:2000]
        run.diagnostics = str(found.get("diagnostics", ""))
        run.needs_gpu = str(found.get("needs_gpu", ""))
        run.inherits = str(found.get("inherits", ""))
        run.tampered = list(found.get("tampered", []))
        if gpu:
            # Torch's builder ran inside the import: its time is the build's.
            run.build_seconds = float(found.get("import_seconds") or 0.0)
            run.poison_effective = found.get("poison_effective")
        if run.status == "running":  # the process died in the middle of a call
            run.status = "crashed"
            run.reason = _death(out)
            if capped and (out.timed_out or out.limit_hit == "cpu"):
                run.reason = (f"ran out of time: the answer's processes took the check's "
                              f"{_BUDGET.total:g} s (its time limit for all of them together)")
        if run.status == "crashed" and emulate:
            from validators.cpu.diagnostics import runtime_verdict

            # The emulator's own report (a race in the race build, a deadlock, a GPU-only
            # library call) names what stopped the process.
            run.runtime_verdict = runtime_verdict(out.stdout, out.stderr, out.exit_code,
                                                  tag=fatal_tag)
        if emulate:
            run.poison_log = _read_poison_log(work)
        for c in found["calls"]:
            run.calls.append(_read_call(work, c, max_bytes, sealed=sealed))
        if emulate and run.status == "ok":
            try:
                report = parse_run_report(read_no_follow(
                    work / RUN_TIMING_FILE, root=work, max_bytes=4096).decode("ascii", "replace"))
            except OSError:
                report = None
            run.native_launches = report.launches if report is not None else None
            if report is None:
                run.status = "crashed"
                run.reason = ("the answer's process did not end normally after its last call "
                              "(the emulator's runtime wrote no report at exit)")
    return requested


class _InputServer:
    """The verifier's end of the answer process's descriptor 0, a socket: the harness's first
    frame (the completion token and the poison byte) at once, then the next case's inputs for
    each request byte, in the order the harness calls the cases. Frames are length-prefixed.
    Nothing is sent before it is asked for, so inputs never wait where the answer's import or
    an earlier call could read them; the answer can ask too, but every request is counted
    (`requests`), and a read on its own takes the inputs the harness's call needed."""

    def __init__(self, first: bytes, frames: list[bytes]) -> None:
        import socket

        self.ours, self.theirs = socket.socketpair()
        self.frames = frames
        self.requests = 0
        self.failed = ""
        self._thread = threading.Thread(target=self._serve, args=(first,), daemon=True,
                                        name="kernelbench-inputs")
        self._thread.start()

    def _serve(self, first: bytes) -> None:
        try:
            self.ours.sendall(len(first).to_bytes(8, "little") + first)
            while True:
                asked = self.ours.recv(4096)
                if not asked:
                    return
                for _ in range(len(asked)):
                    self.requests += 1
                    if self.requests <= len(self.frames):
                        frame = self.frames[self.requests - 1]
                        self.ours.sendall(len(frame).to_bytes(8, "little") + frame)
        except OSError as exc:
            # The process ended (or closed its end) while a frame was on its way: its doing.
            # Any other failure of the socket is ours, and no verdict (`run_answer`).
            if exc.errno not in (errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN, errno.EBADF):
                self.failed = f"{type(exc).__name__}: {exc}"
            return
        except Exception as exc:  # our own fault: the run is no verdict (`run_answer`)
            self.failed = f"{type(exc).__name__}: {exc}"
            with contextlib.suppress(OSError):
                self.ours.shutdown(2)  # the harness's read ends at once, not at its time limit

    def close(self) -> None:
        """After the process has ended: its end closes, and the serving thread with it."""
        import socket

        self.theirs.close()
        with contextlib.suppress(OSError):
            self.ours.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=10)
        self.ours.close()


def _input_frame(case: RefCase) -> bytes:
    """A case's inputs as the harness reads them (`take_inputs`): its name, a line per tensor
    ("key dtype shape nbytes"), an empty line, then the tensors' bytes in that order."""
    lines, blobs = [case.name], []
    for key, t in case.inputs.items():
        t = t.detach().contiguous()
        raw = t.view(torch.uint8).numpy().tobytes() if t.numel() else b""
        dtype = str(t.dtype).removeprefix("torch.")
        lines.append(f"{key} {dtype} {','.join(str(n) for n in t.shape)} {len(raw)}")
        blobs.append(raw)
    return "\n".join(lines).encode("ascii") + b"\n\n" + b"".join(blobs)


def _unseal(found: Any, token: str) -> tuple[Any, bool]:
    """The result inside the harness's sealed file, and whether the seal (HMAC-SHA256 of the
    body under the completion token) holds; anything else as it is, unsealed (a partial result
    of a process that died, or a file of the answer's)."""
    if not (isinstance(found, dict) and set(found) == {"mac", "body"}
            and isinstance(found["mac"], str) and isinstance(found["body"], str)):
        return found, False
    body = found["body"].encode("utf-8", "surrogatepass")
    want = hmac.new(token.encode(), body, "sha256").hexdigest()
    try:
        inner = json.loads(body)
    except ValueError:
        return None, False
    return inner, hmac.compare_digest(found["mac"], want)


def _copy_requests(build_root: Path, builds: Path, variant: str = "plain",
                   aliases: dict[str, str] | None = None) -> bool:
    """Copy the extension requests the pass recorded into the verifier's `builds`, labelled
    with the run's build `variant` (the process labels them plain); `aliases` learns the
    run's key of each, mapped to the process's. A file that is no request is copied as bytes:
    `extension.build_pending` reports it."""
    from validators.cpu import extension

    folder = build_root / extension.REQUESTS
    if not folder.is_dir() or folder.is_symlink():
        return False
    found = False
    target = builds / extension.REQUESTS
    for p in sorted(folder.glob("*.json")):
        try:
            data = read_no_follow(p, root=build_root, max_bytes=MAX_REQUEST_BYTES)
        except OSError:
            data = b""  # a link or a huge file: reported as no request
        try:
            req = extension.BuildRequest.parse(data.decode("utf-8", "replace"), str(p))
        except extension.ExtensionError:
            req = None
        if req is not None:
            ours = dataclasses.replace(req, variant=variant)
            if aliases is not None:
                aliases[ours.key()] = dataclasses.replace(req, variant="plain").key()
            data = json.dumps(dataclasses.asdict(ours)).encode()
        target.mkdir(parents=True, exist_ok=True)
        (target / p.name).write_bytes(data)
        found = True
    return found


_STATUSES = ("running", "ok", "load_error", "init_error", "build_error", "pending", "needs_gpu",
             "no_gpu", "harness_error")


def _malformed(found: object, expected: list[str], *, gpu: bool) -> str:
    """What is wrong with the answer process's result file (`out/answer.json`), or "" when
    every field the verifier reads has its type, each call names an expected case once."""
    if not isinstance(found, dict):
        return f"a {type(found).__name__}, not an object"
    if found.get("status") not in _STATUSES:
        return f"status {str(found.get('status'))[:40]!r}"
    for key in ("reason", "traceback", "diagnostics", "needs_gpu", "inherits", "token"):
        if key in found and not isinstance(found[key], str):
            return f"{key} is not a string"
    tampered = found.get("tampered", [])
    if not (isinstance(tampered, list) and all(isinstance(x, str) for x in tampered)):
        return "tampered is not a list of strings"
    if gpu:
        if not _number(found.get("import_seconds", 0.0)):
            return "import_seconds is not a number"
        if found.get("poison_effective") not in (None, True, False):
            return "poison_effective is not a boolean"
    calls = found.get("calls")
    if not isinstance(calls, list):
        return "calls is not a list"
    seen: set[str] = set()
    for k, c in enumerate(calls):
        if not isinstance(c, dict):
            return f"call {k} is not an object"
        name = c.get("name")
        if name not in expected or name in seen:
            return f"call {k} names {str(name)[:80]!r}, " + (
                "twice" if name in seen else "which is no case of this check")
        seen.add(name)
        launches = c.get("launches")
        if launches is not None and (type(launches) is not int or launches < 0):
            return f"call {name}: launches is not a count"
        if not isinstance(c.get("error", ""), str):
            return f"call {name}: error is not a string"
        form = c.get("form", [])
        if not (isinstance(form, list) and all(isinstance(x, str) for x in form)):
            return f"call {name}: form is not a list of strings"
        if not _number(c.get("seconds", 0.0)):
            return f"call {name}: seconds is not a number"
        ops = c.get("torch_ops", {})
        if not (isinstance(ops, dict) and all(isinstance(k, str) and k.isdigit()
                                              and isinstance(v, str) for k, v in ops.items())):
            return f"call {name}: torch_ops is not a map of output numbers to op names"
        library = c.get("library", {})
        if not (isinstance(library, dict) and all(
                k in LIBRARIES and type(v) is int and v > 0 for k, v in library.items())):
            return f"call {name}: library is not a map of library names to call counts"
        if c.get("torch_lost", False) not in (True, False):
            return f"call {name}: torch_lost is not a boolean"
        if not isinstance(c.get("lost_why", ""), str):
            return f"call {name}: lost_why is not a string"
        digests = c.get("digests", {})
        if not (isinstance(digests, dict) and all(
                k in ("outputs", "torch", "after") and isinstance(v, str)
                for k, v in digests.items())):
            return f"call {name}: digests is not a map of file kinds to digests"
    return ""


def _number(v: object) -> bool:
    import math

    return type(v) in (int, float) and math.isfinite(v) and v >= 0


class _Changed(Exception):
    """A result file whose bytes are not those the harness recorded."""


def _read_call(work: Path, c: dict[str, Any], max_bytes: int, *, sealed: bool = False) -> Call:
    """One call of a result file `_malformed` accepted. Of a sealed result, every file read
    must have the digest the harness recorded when it wrote it: the answer's code runs after
    the harness's (a later call, an exit handler) and can rewrite them."""
    call = Call(name=c["name"], launches=c.get("launches"), error=c.get("error", ""),
                form=list(c.get("form", [])), seconds=float(c.get("seconds", 0.0)),
                torch_lost=bool(c.get("torch_lost", False)), lost_why=c.get("lost_why", ""),
                library=dict(c.get("library", {})))
    if call.error:
        return call
    digests = c.get("digests", {})

    def read(kind: str) -> bytes:
        data = read_no_follow(work / "out" / f"{kind}-{call.name}.safetensors", root=work,
                              max_bytes=max_bytes)
        if (sealed or kind in digests) and hashlib.sha256(data).hexdigest() != digests.get(kind):
            raise _Changed(f"out/{kind}-{call.name}.safetensors changed after the harness "
                           "wrote it")
        return data

    # The files were written in the answer's process: a malformed one is the answer's doing.
    try:
        if not call.form:
            outs = load_tensors(read("outputs"))
            call.outputs = [outs[f"out{k}"] for k in range(len(outs))]
        call.inputs_after = load_tensors(read("after"))
        ops = c.get("torch_ops")
        if ops and call.outputs is not None:
            found = load_tensors(read("torch"))
            call.torch_results = {int(k): (found[f"out{k}"], op) for k, op in ops.items()
                                  if f"out{k}" in found}
        elif "torch_ops" in c:
            call.torch_results = {}
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
