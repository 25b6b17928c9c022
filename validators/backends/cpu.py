"""The `cpu` backend: unmodified CUDA programs built with g++ against the cudashim headers.

Every CUDA thread is a fiber, blocks run on worker threads (see `validators/cpu/`). Two checks a
GPU run does not give are on by default (`thorough=True`):

- schedules: each case runs with the threads of every block resumed `forward` and `reverse`
  (`CUDASHIM_SCHEDULE`); the engine fails a case whose outputs differ (a race);
- variants: a second build with AddressSanitizer (`asan`) where `cudaMalloc` returns exactly
  the requested bytes, so an out-of-bounds access is reported with its source line; and a
  third (`race`) that reports lost updates, two threads writing one location with no barrier,
  warp synchronisation, atomic or fence between them (`runtime/race_detector.h`). It runs the
  last schedule in the plain build's stead, so the check costs a build, not a run.

What the shim cannot run is `needs_gpu`: from the static-analysis flags before building, and
from compile errors that name a CUDA construct the shim lacks (`tex2DLayered`, `__hadd2`, a missing
`cublas_v2.h`), never `failed`.
"""

from __future__ import annotations

import dataclasses
import math
import os
import platform
import posixpath
import re
import shutil
import time
from pathlib import Path

from schemas import CompileInfo, Program, Status

from ..build_cache import BuildCache, TransientBuildError
from ..cpu import diagnostics, execution_spaces, toolchain
from .base import Backend, Executable, RunOutcome, Verdict

SCHEDULES_THOROUGH = ["forward", "reverse"]
SUPPORTED_FEATURES: frozenset[str] = frozenset(
    {
        "half",
        "bfloat16",
        "fp8",
        "cublas",
        "cusparse",
        "curand",
        "curand_device",
        "cufft",
        "cub",
        "texture",
        "surface",
        "wmma",
        "grid_sync",
        "cp_async",
    }
)
"""Static-analysis flags the shim runs anyway: `include/cuda_fp16.h`, `cuda_bf16.h`,
`cuda_fp8.h`, and host subsets of cuBLAS, cuSPARSE and CUB (`cublas_v2.h`, `cusparse.h`,
`cub/`), and cuRAND's device and host APIs for XORWOW, Philox4_32_10 and MRG32k3a
(`curand_kernel.h`, `curand.h`), cuFFT's single-GPU API (`cufft.h`, `cufftXt.h`), and
cuBLASLt's matmul (`cublasLt.h`, under the `cublas` flag). A library
function outside a subset fails to compile and is reported `needs_gpu`.
`texture`/`surface`: texture and surface objects (`include/texture_indirect_functions.h`,
`surface_indirect_functions.h`); the legacy references the flags also cover do not compile and
are reported `needs_gpu` (diagnostics.py).
`wmma`: the WMMA API (`include/mma.h`); sub-byte fragments (s4/u4/b1) and shapes or types
outside CUDA's list fail a static_assert and are reported `needs_gpu`.
`grid_sync`: cooperative launches and `this_grid().sync()` (runtime: all blocks co-resident,
one running at a time; see validators/cpu/README.md).
`cp_async`: the C++ asynchronous copies (`include/cuda_pipeline_primitives.h`,
`cooperative_groups/memcpy_async.h`); PTX `cp.async` also raises `inline_ptx`, which stays
unsupported; libcu++'s `cuda::pipeline` and `cuda::memcpy_async` with a `cuda::barrier` or a
pipeline are the shim's own (`include/cudashim/libcuxx_pipeline.h`, `libcuxx_sync.h`)."""

COMPILE_SECONDS = 300.0
MAX_WORKERS = 24
"""Block worker threads per run at most, whatever the core count (see OMP_THREAD_LIMIT)."""
OMP_THREAD_LIMIT = 32
"""OpenMP threads per run at most: with MAX_WORKERS, under the sandbox's 64 threads per run
(the runtime shrinks its pool rather than fail when a thread cannot be created)."""


def _case_defines(program: Program, defines: dict[str, int],
                  defaults: dict[str, int]) -> dict[str, int]:
    """The defines `build_case` builds a case with (see there)."""
    if not defines and defaults:
        text = program.sources_text()
        # Whatever the cache holds: the record of a build must not depend on what ran before.
        if all(_written_as(text, k, v) for k, v in defaults.items()):
            return dict(defaults)
    return defines


class CpuBackend(Backend):
    """g++ + the cudashim runtime on the host."""

    name = "cpu"

    def __init__(
        self,
        *,
        cache: BuildCache | None = None,
        workers: int | None = None,
        schedules: list[str] | None = None,
        sandboxed_build: bool = True,
        race: bool = True,
        lockstep: bool = True,
    ) -> None:
        self.cache = cache or BuildCache()
        self.workers = workers
        """Worker threads per run (default: one per core the run may use)."""
        self._schedules = schedules
        self.sandboxed_build = sandboxed_build
        self.race = race
        """Thorough checks include the race-detecting build."""
        self.lockstep = lockstep
        """Kernels with a warp-lockstep copy (cpu/lockstep.py) run it; False: one thread at a time."""

    # --- availability --------------------------------------------------------------------
    def available(self) -> str | None:
        if platform.machine() not in ("x86_64", "AMD64"):
            return f"the fiber runtime supports x86-64 only (this machine is {platform.machine()})"
        try:
            version = toolchain.gxx_version()
        except toolchain.ToolchainError as exc:
            return str(exc)
        major = int(version.split(".")[0]) if version.split(".")[0].isdigit() else 0
        if major < 12:
            return f"g++ {version} is too old (the shim needs g++ 12 or newer)"
        return None

    def unsupported_features(self, features: list[str]) -> list[str]:
        supported = set(SUPPORTED_FEATURES)
        if toolchain.cccl_dir() is not None:
            supported.add("thrust")  # Thrust's CPP system, from the toolkit's CCCL headers
        return [f for f in features if f not in supported]

    # --- build ---------------------------------------------------------------------------
    def build_case(self, program: Program, defines: dict[str, int], defaults: dict[str, int], *,
                   variant: str = "plain") -> Executable:
        """The case that changes no size is built like the others, with the program's own
        values, when each is written as a plain integer literal (`#define N 1024`: a value read
        at run time then has the literal's type, and compiled in it is the same text): the
        run-time build the task's other cases share serves it too, instead of a build of its
        own per variant."""
        return self.build(program, _case_defines(program, defines, defaults), variant=variant)

    def shares_build(self, program: Program, defines: dict[str, int], other: dict[str, int],
                     defaults: dict[str, int], variant: str) -> bool:
        # Cases of different sizes share a run-time-size build; whether this one exists and
        # built is known once the first case of the check made it (the engine checks that
        # case first), so nothing is compiled to find out.
        keys = [self._planned_key(program, _case_defines(program, d, defaults), variant)
                for d in (defines, other)]
        if keys[0] is None or keys[0] != keys[1]:
            return False
        hit = self.cache.lookup(keys[0], artifact="prog")
        return hit is not None and hit[1].ok

    def _planned_key(self, program: Program, defines: dict[str, int], variant: str) -> str | None:
        """The cache key of the run-time-size build `build` would make, None when it would
        compile the values in."""
        text = program.sources_text()
        uses_thrust = "thrust" in _features(text) or bool(LIBCUXX_INCLUDE.search(text))
        runtime = (None if uses_thrust or _has_c_units(program)
                   else toolchain.runtime_sizes(defines, variant))
        if runtime is None or self._runtime_failed(program, defines, variant, uses_thrust):
            return None
        return self._key(program, defines, variant, uses_thrust, runtime)

    def build(
        self, program: Program, defines: dict[str, int], *, variant: str = "plain"
    ) -> Executable:
        toolchain.flags(variant)  # rejects unknown variants early
        # Thrust and libcu++ build in library mode against the toolkit's CCCL headers.
        uses_thrust = ("thrust" in _features(program.sources_text())
                       or bool(LIBCUXX_INCLUDE.search(program.sources_text())))
        runtime = (None if uses_thrust or _has_c_units(program)
                   else toolchain.runtime_sizes(defines, variant))
        if runtime is not None and not self._runtime_failed(program, defines, variant, uses_thrust):
            # One build for every case of the task whose sizes fit the same types; a program
            # that needs a size as a constant is built with the values (its failed attempt is
            # cached, so the task's other cases go straight there).
            exe = self._build(program, defines, variant, uses_thrust, runtime)
            if exe.path is not None:
                return dataclasses.replace(
                    exe, run_env={"CUDASHIM_SIZES": toolchain.runtime_sizes_env(defines)})
        return self._build(program, defines, variant, uses_thrust, None)

    def _key(self, program: Program, defines: dict[str, int], variant: str, uses_thrust: bool,
             runtime: dict[str, str] | None) -> str:
        return BuildCache.key(
            kind="cpu-shim",
            source=program.source,
            filename=program.filename,
            flags=program.extra_flags,
            **({"runtime_sizes": runtime} if runtime is not None else
               {"defines": {k: str(v) for k, v in defines.items()}}),
            variant=variant,
            include_dirs=[str(d) for d in self.include_dirs],
            headers=_headers_digest(self.include_dirs),
            shim=toolchain.shim_version(),
            compiler=toolchain.gxx_version(),
            # The plain build of a one-file program is also nvcc's front end's to refuse.
            **({"nvcc_check": execution_spaces.version()} if variant == "plain" else {}),
            # Only programs of several files name these: one-file builds keep their keys.
            **({"files": program.files, "units": program.units, "layout": PROJECT_DIR}
               if program.units else {}),
            **({"library": True} if uses_thrust else {}),
        )

    def _runtime_failed(self, program: Program, defines: dict[str, int], variant: str,
                        uses_thrust: bool) -> bool:
        """The run-time-size build of `program` with these sizes' types already failed (cached)
        for a variant a check builds before `variant` (`asan`, `plain`): the program needs its
        sizes as constants, and another attempt (the race build, which only the default case
        makes) would only fail again. Either way the result is the build with the values."""
        if variant in ("asan", "plain"):
            return False
        for first in ("asan", "plain"):
            runtime = toolchain.runtime_sizes(defines, first)
            if runtime is None:
                continue
            hit = self.cache.lookup(self._key(program, defines, first, uses_thrust, runtime))
            if hit is not None and not hit[1].ok:
                return True
        return False

    def _build(self, program: Program, defines: dict[str, int], variant: str, uses_thrust: bool,
               runtime: dict[str, str] | None) -> Executable:
        key = self._key(program, defines, variant, uses_thrust, runtime)
        # The shared pieces are built outside the sandbox: they are ours, not the program's.
        toolchain.runtime_object(variant)
        toolchain.pch_header(variant)

        host_flags, flag_notes = _host_flags(program.extra_flags)
        if variant != "plain" and any(f.startswith("-O") for f in host_flags):
            # A checking build's optimisation level is its own: -O1 keeps ASan's reports
            # readable and GCC 12's instrumented builds clear of its IPA crashes at -O3.
            levels = " ".join(f for f in host_flags if f.startswith("-O"))
            host_flags = [f for f in host_flags if not f.startswith("-O")]
            flag_notes.append(f"cudashim: {levels} applies to the plain build; the {variant} "
                              "build keeps its own optimisation level")

        files, units, build_flags = _laid_out(program, host_flags)

        def build(work: Path) -> CompileInfo:
            started = time.monotonic()
            out = toolchain.compile_program(
                program.source,
                work,
                defines=dict(defines),
                variant=variant,
                filename=_cxx_name(program.filename),
                extra_flags=build_flags,
                thrust=uses_thrust,
                runner=self._runner(),
                files=files,
                units=units,
                runtime=runtime,
            )
            if (out.ok and variant == "plain" and not units and not uses_thrust
                    and execution_spaces.enabled()):
                # nvcc's front end refuses calls across execution spaces, which g++ builds.
                refused = execution_spaces.check(
                    program.source, program.filename, work, defines=dict(defines),
                    flags=build_flags, runner=self._runner())
                if refused:
                    out.ok = False
                    out.diagnostics = (f"{refused} (nvcc's front end, `nvcc -cuda`: the program "
                                       "does not compile for a GPU)\n" + out.diagnostics)
                    (work / "prog").unlink(missing_ok=True)
            said = out.diagnostics.replace(PROJECT_DIR + "/", "") if units else out.diagnostics
            said = diagnostics.program_quotes(
                said, program.files if units else {_cxx_name(program.filename): program.source})
            info = CompileInfo(
                compiler=f"g++ {toolchain.gxx_version()} (cudashim {toolchain.shim_version()}, {variant})",
                command=out.command,
                ok=out.ok,
                seconds=time.monotonic() - started,
                diagnostics=diagnostics.truncate(
                    "".join(n + "\n" for n in flag_notes) + said
                ),
            )
            if out.timed_out:
                raise TransientBuildError(info)
            if out.compiler_crashed:
                from ..sandbox import CompilerCrash

                first = next((ln.strip() for ln in said.splitlines()
                              if "internal compiler error" in ln), "internal compiler error")
                raise CompilerCrash(f"g++ crashed building the program's {variant} build, "
                                    f"also at -O0: {first[:300]}")
            for p in work.iterdir():
                if p.name == "prog":
                    continue
                if p.is_dir() and not p.is_symlink():
                    shutil.rmtree(p)  # a program of several files: PROJECT_DIR
                else:
                    p.unlink()
            return info

        path, info = self.cache.get_or_build(key, build, artifact="prog")
        needs = None
        if not info.ok:
            needs = diagnostics.gpu_feature_from_errors(info.diagnostics)
            ptx = None if needs else diagnostics.ptx_in_source(program.sources_text())
            if ptx:
                needs = f"inline_ptx (PTX `{ptx}` in an asm statement is not x86 code)"
        return Executable(
            path=path, compile=info, backend=self.name, variant=variant, needs_gpu=needs
        )

    def _runner(self) -> toolchain.Runner:
        if not self.sandboxed_build:
            return toolchain.run_local
        from ..sandbox import BUILD_DEVICES, BUILD_MEMORY_BYTES, Limits, run_sandboxed

        limits = Limits(
            cpu_seconds=COMPILE_SECONDS,
            wall_seconds=COMPILE_SECONDS,
            memory_bytes=BUILD_MEMORY_BYTES,
            file_size_bytes=1 << 30,
            devices=BUILD_DEVICES,
        )

        def run(cmd: list[str], cwd: Path, expose: list[Path]) -> toolchain.CommandResult:
            bindir = os.path.dirname(cmd[0])
            out = run_sandboxed(
                cmd,
                cwd,
                limits=limits,
                expose=[*expose, *self.include_dirs],
                env={"PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin"},
            )
            text = out.stderr + ("\n" + out.stdout if out.stdout.strip() else "")
            if out.timed_out:
                text = f"g++ timed out after {out.seconds:.0f}s\n" + text
            return toolchain.CommandResult(out.exit_code, text, timed_out=out.timed_out)

        return run

    # --- run -----------------------------------------------------------------------------
    def command(
        self, exe: Executable, args: list[str], *, schedule: str = "default"
    ) -> tuple[list[str], dict[str, str]]:
        if exe.path is None:
            raise ValueError("cannot run a failed build")
        env = {
            "CUDASHIM_SCHEDULE": "forward" if schedule == "default" else schedule,
            # Leaks are not out-of-bounds accesses; symbolised reports give the source line.
            "ASAN_OPTIONS": "detect_leaks=0:allocator_may_return_null=1:symbolize=1:verify_asan_link_order=0",
            "CUDASHIM_NO_LAUNCH": "0",
            # Every run carries the same settings (empty = off), so their wiped bytes in
            # /proc/self/environ have the same shape whichever check a run belongs to.
            "CUDASHIM_POISON": "",
            "CUDASHIM_POISON_ONLY": "",
            "CUDASHIM_POISON_ALT": "",
            "CUDASHIM_LOG_UPLOADS": "0",
            "CUDASHIM_LOCKSTEP": "1" if self.lockstep else "0",
            "CUDASHIM_RUN_TIMING": "",
            "CUDASHIM_SIZES": "",
            # Read by the engine's access shim: device memory is closed to host code here, so
            # the program's mprotect (and its kin) are refused and logged (anticheat.py).
            "CKD_DEVICE_MEMORY_CLOSED": "1",
        }
        workers = self.workers or min(usable_cores(), MAX_WORKERS)
        env["CUDASHIM_WORKERS"] = str(workers)
        # The sandbox allows 64 threads per run: block workers and OpenMP's team share them.
        env["OMP_THREAD_LIMIT"] = str(OMP_THREAD_LIMIT)
        env.update(exe.run_env)
        return [str(exe.path), *args], _padded(env)

    def no_launch_env(self) -> dict[str, str] | None:
        return _padded({"CUDASHIM_NO_LAUNCH": "1"})

    def upload_log_env(self) -> dict[str, str] | None:
        return _padded({"CUDASHIM_LOG_UPLOADS": "1"})

    def run_timing_env(self, log_file: str) -> dict[str, str] | None:
        return _padded({"CUDASHIM_RUN_TIMING": log_file})

    def kernel_inputs_env(self, inputs_file: str, log_file: str) -> dict[str, str] | None:
        return _padded({"CUDASHIM_KERNEL_INPUTS": inputs_file,
                        "CUDASHIM_KERNEL_INPUTS_LOG": log_file})

    def poison_env(self, byte: int, *, only: int | None = None,
                   alt: int | None = None) -> dict[str, str] | None:
        env = {"CUDASHIM_POISON": f"0x{byte:02x}"}
        if only is not None and alt is not None:
            env |= {"CUDASHIM_POISON_ONLY": str(only), "CUDASHIM_POISON_ALT": f"0x{alt:02x}"}
        return _padded(env)

    def schedules(self, *, thorough: bool = True) -> list[str]:
        if self._schedules is not None:
            return list(self._schedules)
        return list(SCHEDULES_THOROUGH) if thorough else ["forward"]

    def variants(self, *, thorough: bool = True) -> list[str]:
        # ASan first: when both builds fail (an overflow that also corrupts the plain build's
        # heap), the engine reports the first of the worst runs, and ASan's names the line.
        if not thorough:
            return ["plain"]
        return ["asan", "plain", "race"] if self.race else ["asan", "plain"]

    def schedules_for(self, variant: str, variants: list[str], schedules: list[str]) -> list[str]:
        # The race build computes what the plain one does (the same flags, plus instrumentation
        # that only observes): its run of the last schedule stands in for the plain build's.
        if "race" in variants and "plain" in variants and len(schedules) > 1:
            if variant == "race":
                return list(schedules[-1:])
            if variant == "plain":
                return list(schedules[:-1])
        return list(schedules)

    def first_build_variants(self) -> frozenset[str]:
        # A race shows at any size with two threads per location; building the race variant
        # for every case's sizes would add a build per case to each check (1.5x its time). It
        # runs on the fresh case, drawn at random, and on every case sharing its build.
        return frozenset({"race"})

    def fallback_variant(self, variant: str) -> str | None:
        # The race detector records every write of every kernel thread (several times slower
        # than the plain build on write-heavy programs): when that alone runs out of time, the
        # plain build's run of the same schedule judges the case, and the result says so.
        return "plain" if variant in ("race", "asan") else None

    def sandbox_overrides(self, exe: Executable) -> dict[str, object]:
        # AddressSanitizer reserves terabytes of shadow address space.
        return {"memory_bytes": None} if exe.variant == "asan" else {}

    def run_notes(self, outcome: RunOutcome) -> list[str]:
        return diagnostics.portability_notes(outcome.stderr)

    def classify(self, exe: Executable, outcome: RunOutcome) -> Verdict:
        found = diagnostics.runtime_verdict(outcome.stdout, outcome.stderr, outcome.exit_code,
                                            tag=outcome.extra.get("fatal_tag", ""))
        if found is not None:
            status, reason = found
            return Verdict(Status(status), reason)
        if outcome.timed_out:
            return Verdict(Status.TIMEOUT, f"timed out after {outcome.seconds:.1f}s")
        verdict = super().classify(exe, outcome)
        cuda_error = diagnostics.cuda_error_line(outcome.stdout + "\n" + outcome.stderr)
        if verdict.status is not None and cuda_error:
            return Verdict(verdict.status, f"{verdict.reason}: {cuda_error}")
        return verdict


SHIM_VALUE_WIDTH = 48


def _padded(env: dict[str, str]) -> dict[str, str]:
    """CUDASHIM_* values padded to one width: the runtime reads and wipes them before main(),
    and equal widths leave the same wiped environment block in every run of a check (a
    schedule or the no-launch check is not readable from /proc/self/environ's shape)."""
    return {k: v.ljust(SHIM_VALUE_WIDTH) if k.startswith("CUDASHIM_") else v
            for k, v in env.items()}


def _headers_digest(dirs: tuple[Path, ...]) -> str:
    from ..nvcc import _headers_digest as digest

    return digest(dirs) if dirs else ""


def _written_as(text: str, macro: str, value: int) -> bool:
    """The program defines `macro` once, as the plain integer literal `value` (no suffix, no
    expression: a run-time value then has the type the literal has)."""
    found = re.findall(rf"^[ \t]*#[ \t]*define[ \t]+{re.escape(macro)}\b(.*)$", text, re.M)
    if len(found) != 1:
        return False
    body = re.sub(r"/\*.*?\*/|//.*", "", found[0]).strip()
    return bool(re.fullmatch(r"-?\d+", body)) and int(body) == value


LIBCUXX_INCLUDE = toolchain.LIBCUXX_INCLUDE
"""libcu++ headers that build as host code in the Thrust builds' library mode: `cuda/std/*`,
`cuda::atomic`/`atomic_ref` (real atomics, as the emulator's are) from the toolkit's CCCL, and
the synchronisation objects from the shim's own headers, which shadow CCCL's
(`include/cuda/barrier`, `latch`, `semaphore` and their `cuda/std/` forms; see
`include/cudashim/libcuxx_sync.h`): `cuda::barrier` (`init`, `arrive`/`wait`, `arrive_and_wait`,
`arrive_and_drop`, parity waits, `cuda::memcpy_async` with a barrier), `cuda::latch`,
`cuda::counting_semaphore`/`binary_semaphore` and the `cuda::std::` forms. Their waits hand
the turn to the block's other threads (fibers) and a wait nobody can end is a deadlock report.
Objects of device or system scope used by several blocks run in cooperative launches; in a
normal launch that is `needs_gpu` at run time (it needs co-resident blocks). `cuda/pipeline`
is the shim's too (`include/cudashim/libcuxx_pipeline.h`: stages over those barriers). Library mode brings
CCCL's `cuda::std` along, as NVIDIA's headers do (`cuda::std::move(token)`)."""


def _features(source: str) -> list[str]:
    from ..analysis import analyze

    try:
        return list(analyze(source).features)
    except Exception:  # analysis trouble must not stop a build
        return []


def usable_cores(cgroup_root: Path = Path("/sys/fs/cgroup"),
                 proc_cgroup: Path = Path("/proc/self/cgroup")) -> int:
    """Cores a run may use: the affinity mask, capped by the CPU quota of this process's
    cgroup or any of its ancestors (a container's `--cpus`, a Kubernetes CPU limit), which the
    mask does not show. Block workers beyond the quota only take turns at it: each throttled
    period stalls whichever blocks hold a worker, and the launch waits for its last block."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    quota = cgroup_cpu_quota(cgroup_root, proc_cgroup)
    if quota is not None:
        cores = min(cores, math.ceil(quota))
    return max(1, cores)


def cgroup_cpu_quota(cgroup_root: Path, proc_cgroup: Path) -> float | None:
    """The smallest CPU quota (in CPUs) on the way from this process's cgroup up to the root,
    cgroup v2 (`cpu.max`) or v1 (`cpu.cfs_quota_us` / `cpu.cfs_period_us`); None without one.
    Unreadable or malformed files count as no quota: this only sizes a thread pool."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return None
    quotas: list[float] = []
    for line in lines:
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        names = controllers.split(",")
        if controllers == "":
            base, files = cgroup_root, ("cpu.max",)
        elif "cpu" in names:
            base, files = cgroup_root / controllers, ("cpu.cfs_quota_us", "cpu.cfs_period_us")
            if not base.is_dir():
                base = cgroup_root / "cpu"
        else:
            continue
        node = Path(path.strip() or "/")
        for folder in [node, *node.parents]:
            quota = _quota_in(base / str(folder).lstrip("/"), files)
            if quota is not None:
                quotas.append(quota)
    return min(quotas) if quotas else None


def _quota_in(folder: Path, files: tuple[str, ...]) -> float | None:
    try:
        texts = [(folder / f).read_text().split() for f in files]
        if len(files) == 1:  # v2: "<quota|max> <period>"
            quota, period = texts[0][0], texts[0][1]
        else:  # v1: quota (-1 = none), period
            quota, period = texts[0][0], texts[1][0]
        if quota in ("max", "-1"):
            return None
        value = int(quota) / int(period)
    except (OSError, IndexError, ValueError, ZeroDivisionError):
        return None
    return value if value > 0 else None


PROJECT_DIR = "cudashim_project"
"""The folder of the build directory a program of several files is laid out in. The toolchain
writes its own files at the top of the build directory (the executable `prog`, objects such as
`cudashim_tu0.o`, `cudashim_defines.h`): a project path of one of those names (sources in a
folder `prog/`, as in `nvcc prog/main.cu`) would take the place of the toolchain's file (`ld:
prog: Is a directory`). Below this folder every name is the program's own."""


def _laid_out(program: Program, host_flags: list[str]) -> tuple[dict[str, str], list[str],
                                                                 list[str]]:
    """The files, units and host flags `compile_program` builds a program of several files
    with: every path under PROJECT_DIR, a relative `-I` (from the program's folder) too, and
    the prefix mapped away from `__FILE__` and debug information, so the program sees the
    paths it has in its folder (`prog/main.cu`, as nvcc run there names it); g++'s messages
    name it too, and `build` takes it out of them. One-file programs are built as they are."""
    if not program.units:
        return program.files, program.units, host_flags
    files = {f"{PROJECT_DIR}/{path}": text for path, text in program.files.items()}
    units = [f"{PROJECT_DIR}/{u}" for u in program.units]
    flags = [f"{opt}{posixpath.normpath(f'{PROJECT_DIR}/{f[len(opt):]}')}"
             if (opt := _include_option(f)) and not f[len(opt):].startswith("/") else f
             for f in host_flags]
    return files, units, [*flags, f"-ffile-prefix-map={PROJECT_DIR}/="]


def _include_option(flag: str) -> str:
    """`-I` or `-iquote` when `flag` names an include folder with it (glued), else ''."""
    return next((o for o in ("-iquote", "-I") if flag.startswith(o) and len(flag) > len(o)), "")


def _has_c_units(program: Program) -> bool:
    """C units take sizes as values: the run-time sizes' reads are a C++ force-include."""
    return any(u.endswith(".c") for u in program.units)


def _cxx_name(filename: str) -> str:
    return filename if re.search(r"\.(cu|cpp|cc)$", filename) else "main.cu"


_STD_FLAG = re.compile(r"^-std=(?:c|gnu)\+\+(\w+)$")
# The shim is C++20 (std::source_location, concepts in its headers): later standards are fine.
_STD_AT_LEAST_20 = {"20", "2a", "23", "2b", "26", "2c"}
# Host flags g++ reads as nvcc passes them to the host compiler: macros, include dirs, -O
# levels, OpenMP and threads (compile and link: the same g++ command links), libraries.
_KEPT_FLAG = re.compile(
    r"^-(D\w|U\w|I|iquote.|O[0-3s]?$|fopenmp(-simd)?$|pthread$|l(m|gomp|pthread|rt|dl)$)"
)
# CUDA libraries the shim carries in its headers (the runtime, cuBLAS, cuSPARSE, cuRAND, cuFFT,
# NVTX): linking them needs nothing, so their -l is dropped with a note that says so.
_SHIM_LIBRARY = re.compile(
    r"^-l(cudart(_static)?|cuda|cublas(Lt)?|cusparse|curand|cufft(_static)?|nvToolsExt)$")
# The toolkit's other libraries: a program that uses one fails at its header (needs_gpu); a
# Makefile that links one it never calls (`-lcusolver` out of habit) must still build.
_TOOLKIT_LIBRARY = re.compile(
    r"^-l(cufft\w*|cudnn\w*|cusolver\w*|nccl\w*|nvrtc\w*|nvjpeg\w*|npp\w*|cupti\w*|"
    r"nvidia-ml|nvml|cutensor\w*|cufile\w*|cudadevrt|culibos|nvJitLink\w*|nvptxcompiler\w*)$")
# Any other library is the host's (-lz, -lgsl): kept, as nvcc hands it to the host linker.
_HOST_LIBRARY = re.compile(r"^-l[\w.+-]+$")
_HOST_COMPILER_OPTION = re.compile(r"^(?:-Xcompiler|--compiler-options)(?:=(.*))?$")


def _host_flags(flags: list[str]) -> tuple[list[str], list[str]]:
    """Keep the flags g++ understands the same way (defines, include dirs, -O levels, OpenMP,
    a C++20 or later standard, those nvcc hands to the host compiler with `-Xcompiler`); also
    returns a note for each flag replaced or dropped."""
    kept: list[str] = []
    notes: list[str] = []
    i = 0
    while i < len(flags):
        f = flags[i]
        host = _HOST_COMPILER_OPTION.match(f)
        if host is not None:
            value = host.group(1)
            if value is None and i + 1 < len(flags):
                i += 1
                value = flags[i]
            sub_kept, sub_notes = _host_flags([v for v in (value or "").split(",") if v])
            kept += sub_kept
            notes += sub_notes
            i += 1
            continue
        std = _STD_FLAG.match(f)
        if std is not None and std.group(1) not in _STD_AT_LEAST_20:
            # A Makefile's -std=c++17 is what nvcc was given; the shim itself needs C++20.
            notes.append(f"cudashim: {f} replaced by -std=c++20 (the shim's headers need C++20)")
        elif _SHIM_LIBRARY.match(f):
            notes.append(f"cudashim: {f} not needed (the CPU shim provides that library in its headers)")
        elif _TOOLKIT_LIBRARY.match(f):
            notes.append(f"cudashim: {f} not linked (a CUDA toolkit library the CPU shim does not "
                         "provide; a program that calls it needs a GPU)")
        elif std is not None or _KEPT_FLAG.match(f) or _HOST_LIBRARY.match(f):
            kept.append(f)
        else:
            notes.append(
                f"cudashim: flag {f} not passed to g++ (kept: -D, -U, -I, -O, -std, OpenMP,"
                " -pthread, -l)"
            )
        i += 1
    return kept, notes
