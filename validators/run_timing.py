"""Where a run's time went: start-up, host code, kernels, copies (`validators run --json`).

The runtime a program links (the cpu backend's `cudashim`) or is preloaded with (the cuda
backend's interposer) writes, when `CUDASHIM_RUN_TIMING=<file>` is set, at exit:

    start <CLOCK_MONOTONIC seconds when the runtime started, before the program's own code>
    end <CLOCK_MONOTONIC seconds at exit>
    kernels <wall seconds inside kernel launches> <launches>
    copies <wall seconds inside copies and fills> <count>

CLOCK_MONOTONIC is one clock for every process of the machine (the sandbox makes no time
namespace), and Python's `time.monotonic` reads it, so the validator sets `start` against the
moment it started the sandbox: that difference is the start-up (sandbox set-up, exec, dynamic
loading). The rest of the run's wall time after `end` is the exit (teardown of the sandbox and
the process tree).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

RUN_TIMING_FILE = ".ckd-run-timing"
MAX_BYTES = 4096


@dataclass(frozen=True)
class RunReport:
    """What the runtime wrote: its clock at start and at exit, and its sums."""

    start: float
    end: float
    kernels_s: float
    launches: int
    copies_s: float
    copies: int


@dataclass(frozen=True)
class RunSplit:
    """A run's wall time, split; the five parts add up to `total_s`."""

    startup_s: float
    """From starting the sandbox to the runtime's start (before the program's constructors)."""
    host_s: float
    """The program's own code: from the runtime's start to exit, less kernels and copies."""
    kernels_s: float
    copies_s: float
    exit_s: float
    """From the program's exit to the sandbox reporting the run over."""
    total_s: float
    launches: int
    copy_calls: int

    def as_dict(self) -> dict[str, float | int]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def parse(text: str) -> RunReport | None:
    """The runtime's report, or None when it is missing or malformed (a run killed before it
    exited writes none; the program may also have overwritten the file)."""
    fields: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, *values = line.split()
        fields[key] = values
    try:
        report = RunReport(float(fields["start"][0]), float(fields["end"][0]),
                           float(fields["kernels"][0]), int(fields["kernels"][1]),
                           float(fields["copies"][0]), int(fields["copies"][1]))
    except (KeyError, IndexError, ValueError):
        return None
    if not (report.start <= report.end and report.kernels_s >= 0 and report.copies_s >= 0):
        return None
    return report


def split(report: RunReport, spawned: float, returned: float) -> RunSplit | None:
    """The split of a run the validator started at `spawned` and saw end at `returned`
    (`time.monotonic`), or None when the report does not fit inside that interval (not this
    run's, or another clock's)."""
    if not (spawned <= report.start <= report.end <= returned):
        return None
    main = report.end - report.start
    # Launches from several host threads at once overlap: their sum can exceed the main span.
    host = max(0.0, main - report.kernels_s - report.copies_s)
    busy = host + report.kernels_s + report.copies_s
    return RunSplit(startup_s=report.start - spawned, host_s=host, kernels_s=report.kernels_s,
                    copies_s=report.copies_s, exit_s=max(0.0, returned - report.start - busy),
                    total_s=returned - spawned, launches=report.launches,
                    copy_calls=report.copies)


def read_split(work: Path, spawned: float, returned: float) -> RunSplit | None:
    """Read (and remove) the runtime's report in the run folder `work`; None without one."""
    from .safe_fs import read_regular

    try:
        text = read_regular(work, RUN_TIMING_FILE, MAX_BYTES).decode("ascii", "replace")
    except OSError:
        return None
    finally:
        try:  # not among the outputs `--keep-outputs` copies back
            (work / RUN_TIMING_FILE).unlink(missing_ok=True)
        except OSError:
            pass  # the program made it a folder: it stays the program's
    report = parse(text)
    return split(report, spawned, returned) if report else None
