"""The backend interface: how a program is built and how its executable is launched.

Backends differ only here. Everything else (materialising cases, the sandbox, comparison,
anti-cheat checks) is shared, so what is tested on the CPU backend is what runs on a GPU.

A backend builds a `Program` with per-case compile-time definitions into an `Executable`
and says which command runs it under a given thread schedule. The engine runs that command
inside the sandbox (`validators.sandbox`) in the case's work directory and hands the raw
outcome back to `classify`, where the backend recognises its own failure signatures
(e.g. `cudaErrorInsufficientDriver` on a GPU-less machine, a deadlock report from the CPU
runtime, an AddressSanitizer report).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from schemas import CompileInfo, Program, Status


class BackendUnavailable(RuntimeError):
    """The backend cannot work on this machine (no compiler, no GPU); the message says why."""


@dataclass(frozen=True)
class Executable:
    """A built program. `path` is inside the build cache and must not be modified."""

    path: Path | None
    """None when the build failed (see `compile.ok` and `compile.diagnostics`)."""
    compile: CompileInfo
    backend: str
    variant: str = "plain"
    """Build flavour, e.g. `plain` or `asan` for the CPU backend."""
    needs_gpu: str | None = None
    """Set when the build showed the program needs a GPU feature; names the feature."""
    run_env: dict[str, str] = field(default_factory=dict)
    """What every run of this build needs in its environment (the cpu backend's run-time
    sizes: one binary serves the cases of a task, each run told its own)."""


@dataclass
class RunOutcome:
    """What the sandbox observed when running an executable once."""

    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    timed_out: bool = False
    limit_hit: str | None = None
    """Which sandbox limit stopped the run: `cpu`, `memory`, `file_size`, `output`, `processes`."""
    signal: int | None = None
    schedule: str = "default"
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    """A backend's reading of a run outcome, before outputs are compared."""

    status: Status | None
    """None when the run looks clean and outputs should be compared."""
    reason: str = ""


class Backend(ABC):
    """Build and launch programs. Subclasses: `cuda` (nvcc + GPU), `cpu` (shim + g++)."""

    name: str = "base"
    library_calls_are_host_code: bool = True
    """Whether a program's library calls (cuBLAS, Thrust, ... named in its text) may compute
    without a launch the no-launch run stops: true of the cpu shim, whose libraries are host
    code. The cuda backend reads which libraries launch unseen from the executable instead
    (`kernel_work_limits`)."""
    include_dirs: tuple[Path, ...] = ()
    """Folders the compiler may read beside the program: the operator's setting (e.g. the
    program's own folder for `validators run`), exposed read-only to the sandboxed build. An
    `-I` inside a program's flags never widens what the sandbox shows."""

    def with_include_dirs(self, dirs: list[Path]) -> Backend:
        self.include_dirs = tuple(Path(d).resolve() for d in dirs)
        return self

    @abstractmethod
    def available(self) -> str | None:
        """None when usable here, otherwise the reason it is not (e.g. 'no GPU answered')."""

    @abstractmethod
    def build(self, program: Program, defines: dict[str, int], *, variant: str = "plain") -> Executable:
        """Build (or fetch from the content-addressed cache) an executable."""

    def build_case(self, program: Program, defines: dict[str, int], defaults: dict[str, int], *,
                   variant: str = "plain") -> Executable:
        """`build` for one case of a task: `defines` are the sizes the case changes, `defaults`
        every size the program writes itself (by macro name). A backend that can serve a
        task's cases from one build may use the defaults; the others build `defines`."""
        return self.build(program, defines, variant=variant)

    @abstractmethod
    def command(self, exe: Executable, args: list[str], *, schedule: str = "default") -> tuple[list[str], dict[str, str]]:
        """argv and extra environment that run `exe` under `schedule` in the current dir."""

    def no_launch_env(self) -> dict[str, str] | None:
        """Environment that turns every kernel launch into a no-op for the differential check
        (outputs that still match the reference do not depend on the kernels), or None when
        this backend cannot (the check is then skipped and the result says so)."""
        return None

    def timing_env(self, log_file: str) -> dict[str, str] | None:
        """Settings under which the runtime times each kernel launch alone and writes
        "<seconds> <launches>" to `log_file` (the speed term), or None where it cannot."""
        return None

    def run_timing_env(self, log_file: str) -> dict[str, str] | None:
        """Settings under which the runtime writes the run's time split to `log_file` at exit
        (`validators.run_timing`: its start and end, kernel and copy seconds), or None where
        it cannot."""
        return None

    def runtime_paths(self) -> tuple[str, ...]:
        """Path prefixes outside the work folder that the backend's runtime or driver itself
        opens or connects to in every program (the access check allows them)."""
        return ()

    def run_notes(self, outcome: RunOutcome) -> list[str]:
        """What a run's runtime says about the program without failing it: behaviour CUDA leaves
        undefined where the backend did as GPUs do (cpu: `cudashim: portability:` lines)."""
        return []

    def kernel_work_variant(self, built: list[str]) -> str:
        """Of the builds a case ran (in order), the one whose runs the kernel-work and no-launch
        checks make: the last checking build, its memory poisoned as in its own runs."""
        return built[-1]

    def runtime_removes(self) -> tuple[str, ...]:
        """Path prefixes outside the work folder where the backend's runtime or driver itself
        removes or renames entries in every program (the access check allows it there)."""
        return ()

    def runtime_reads(self) -> tuple[str, ...]:
        """Files in the work folder (paths relative to it) that the backend's runtime or driver
        itself reads in every program, the work folder being `$HOME`: the access check allows
        reading them, and nothing else."""
        return ()

    def upload_log_env(self) -> dict[str, str] | None:
        """Settings that note every upload (and the memory kernels read in place at each
        launch) in the runtime's upload log, or None where the backend cannot."""
        return None

    def kernel_inputs_env(self, inputs_file: str, log_file: str) -> dict[str, str] | None:
        """Settings of the kernel-work run (`validators.kernel_work`): the device sees the
        inputs in `inputs_file` in place of the host's, and `log_file` says which bytes it saw.
        None where the backend cannot run it."""
        return None

    def preloads(self, exe: Executable) -> list[Path]:
        """LD_PRELOAD libraries every run of `exe` gets (an interposed runtime), beside the
        engine's access-log shim; loaded in every run so no run of a check looks different."""
        return []

    def kernel_work_unusable(self, exe: Executable) -> str:
        """Why the no-launch and kernel-work runs cannot be made on `exe` ('' when they can):
        the engine then says the check could not be carried out, never passes or rejects on it."""
        return ""

    def kernel_work_limits(self, exe: Executable) -> tuple[str, str]:
        """(why the device-input run cannot follow `exe`'s copies, why the no-launch run cannot
        stop its launches); '' where it can. The engine then leaves that run out and says why,
        rather than judge a program whose uploads were not replaced, or whose kernels still ran."""
        return "", ""

    def poison_env(self, byte: int, *, only: int | None = None,
                   alt: int | None = None) -> dict[str, str] | None:
        """Environment that starts device and shared memory filled with `byte` (with `only`,
        buffer number `only` gets `alt` instead), or None when this backend cannot."""
        return None

    def unsupported_features(self, features: list[str]) -> list[str]:
        """Static-analysis feature flags (see `validators.analysis`) this backend cannot run.

        The engine reports `needs_gpu` naming them, without building.
        """
        return []

    def sandbox_overrides(self, exe: Executable) -> dict[str, object]:
        """Sandbox limit overrides this executable needs (e.g. an ASan build reserves terabytes
        of address space, so an address-space limit cannot apply to it)."""
        return {}

    def time_scale(self, exe: Executable) -> float:
        """How much more CPU and wall time a run of this build may take than a plain one (a
        sanitizer's 10-100x): the limits still end a program that never ends."""
        return 1.0

    def expose(self, exe: Executable) -> list[Path]:
        """Folders a run of `exe` must see besides its argv[0]'s (a tool's target)."""
        return []

    def schedules(self, *, thorough: bool = True) -> list[str]:
        """Schedules every case runs under; results must agree across them."""
        return ["default"]

    def variants(self, *, thorough: bool = True) -> list[str]:
        """Build variants every case runs (e.g. an AddressSanitizer build)."""
        return ["plain"]

    def schedules_for(self, variant: str, variants: list[str], schedules: list[str]) -> list[str]:
        """The schedules `variant` runs when a case runs `variants` under `schedules`: every
        one, unless the backend shares them out among its builds."""
        return list(schedules)

    def first_build_variants(self) -> frozenset[str]:
        """Variants that run only on the cases built like the check's fresh case (they add a
        build per distinct set of defines, for a check that rarely depends on the sizes), and
        on the cases whose build of them is the same (`shares_build`)."""
        return frozenset()

    def shares_build(self, program: Program, defines: dict[str, int], other: dict[str, int],
                     defaults: dict[str, int], variant: str) -> bool:
        """Whether a case with defines `other` runs the very build of `variant` that a case
        with `defines` made (nothing compiled to tell): only the same defines, by default."""
        return defines == other

    def fallback_variant(self, variant: str) -> str | None:
        """The build whose runs stand in when `variant` alone does not build, or when a run of it
        hits a time or CPU/memory limit (a checking build that only observes, at a cost); None:
        the failure is the verdict."""
        return None

    def classify(self, exe: Executable, outcome: RunOutcome) -> Verdict:
        """Turn backend-specific failure signatures into a verdict; default: exit code only."""
        if outcome.timed_out:
            return Verdict(Status.TIMEOUT, f"timed out after {outcome.seconds:.1f}s")
        if outcome.limit_hit:
            return Verdict(Status.RUNTIME_ERROR, f"sandbox limit hit: {outcome.limit_hit}")
        if outcome.exit_code != 0:
            return Verdict(Status.RUNTIME_ERROR, f"exit code {outcome.exit_code}")
        return Verdict(None)
