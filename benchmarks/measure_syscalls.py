"""Which system calls do honest sandboxed runs make? Re-measures the seccomp allow-list.

    python benchmarks/measure_syscalls.py [--builtin N] [--hecbench N] [--pytest ARGS] [--out F]

Every `run_sandboxed` of this process (programs, their g++/nvcc builds, NumPy/torch references)
runs its C launcher under `strace -f`; the program's system calls are those made after the
launcher installed the filter (its `prctl(PR_SET_SECCOMP)`) and by every process forked after
that. Set-up processes (the launcher and the namespace's init: the ones whose `unshare` or
`mount` succeeded) are left out. The report lists each call with its count and the filter's
answer (`validators.sandbox_launcher.syscall_policy`), and flags the calls the filter refuses:
a refused call an honest run makes is either a fallback the program handles (clone3 -> clone)
or a call the allow-list must gain. Which runs: the built-in tasks' programs with their
references (`--builtin`, thorough checks on the cpu backend), HeCBench programs (`--hecbench`,
the data under ../shared/data), and any pytest selection (`--pytest`, in this process, e.g. the
acceptance table: `--pytest "tests/validators/test_cpu_corpus.py -m slow -k acceptance_table"`).

strace slows a run several times over; a check that times out under it is reported, not
hidden, and says nothing about the filter.
"""

from __future__ import annotations

import argparse
import collections
import re
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))

import validators.sandbox as sandbox  # noqa: E402
from validators.sandbox_launcher import syscall_policy  # noqa: E402

LINE = re.compile(r"^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()")
SETUP = re.compile(r"^\d+\s+(?:unshare|mount)\(.*\)\s+= 0$")
FILTER_ON = re.compile(r"^\d+\s+prctl\(PR_SET_SECCOMP")


def program_syscalls(log: Path) -> collections.Counter[str]:
    """Calls made by the sandboxed program in one `strace -f` log of the launcher."""
    lines = log.read_text(errors="replace").splitlines()
    setup = {ln.split()[0] for ln in lines if SETUP.match(ln)}
    # The launcher's child before its filter (setgroups, setresuid, ...) is set-up too: a pid
    # that installs the filter counts only from then on; pids forked later count throughout.
    installs = {ln.split()[0] for ln in lines if FILTER_ON.match(ln)}
    filtered: set[str] = set()
    seen: collections.Counter[str] = collections.Counter()
    for ln in lines:
        m = LINE.match(ln)
        if not m or m.group(1) in setup:
            continue
        pid = m.group(1)
        if FILTER_ON.match(ln):
            filtered.add(pid)
            continue
        if pid in installs and pid not in filtered:
            continue
        if m.group(2) is None:  # a resumed call was counted when it started
            seen[m.group(3)] += 1
    return seen


class Tracer:
    """Wraps the launcher of every sandboxed run in `strace -f` and sums what they call."""

    def __init__(self, folder: Path, enabled: bool = True) -> None:
        self.folder = folder
        self.runs = 0
        self.calls: collections.Counter[str] = collections.Counter()
        self.runs_calling: collections.Counter[str] = collections.Counter()
        self._pending: list[Path] = []
        if not enabled:
            return
        strace = shutil.which("strace")
        if strace is None:
            raise SystemExit("strace is not installed")
        # Named as the launcher: `run_sandboxed` tells the allow-list view by that name.
        (folder / "ckd-launch").symlink_to(strace)
        strace = str(folder / "ckd-launch")
        original = sandbox._launcher_cmd

        def traced(*args: object, **kw: object) -> list[str]:
            cmd = original(*args, **kw)
            self.runs += 1
            log = self.folder / f"run-{self.runs}.log"
            self._pending.append(log)
            return [strace, "-f", "-qq", "-e", "signal=none", "-s", "0", "-o", str(log), "--", *cmd]

        sandbox._launcher_cmd = traced  # type: ignore[assignment]

    def collect(self) -> None:
        for log in self._pending:
            if log.exists():
                got = program_syscalls(log)
                self.calls.update(got)
                self.runs_calling.update(got.keys())
                log.unlink()
        self._pending.clear()


def run_builtin(limit: int | None) -> list[str]:
    from sources.builtin import load_all
    from validators.backends.cpu import CpuBackend
    from validators.engine import Engine

    engine = Engine(CpuBackend())
    rows = []
    for task, prog in load_all().tasks[:limit]:
        res = engine.check(task, prog, thorough=True)
        rows.append(f"builtin {task.name}: {res.status.value} {res.reason[:100]}")
        print(rows[-1], flush=True)  # a long measurement cut short keeps what it found
    return rows


def run_hecbench(limit: int | None) -> list[str]:
    import hecbench_cpu

    from validators.backends.cpu import CpuBackend

    if not hecbench_cpu.DATA.is_dir():
        return [f"hecbench: no data at {hecbench_cpu.DATA.resolve()}"]
    backend = CpuBackend()
    rows = []
    for folder in sorted(p for p in hecbench_cpu.DATA.iterdir() if p.is_dir())[:limit]:
        row = hecbench_cpu.run_one(backend, folder, ["forward"], ["plain"])
        rows.append(f"hecbench {folder.name}: {row['verdict']} {row['reason'][:100]}")
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--builtin", type=int, nargs="?", const=0, help="the first N built-in tasks (all: 0)")
    ap.add_argument("--hecbench", type=int, nargs="?", const=0, help="the first N HeCBench programs (all: 0)")
    ap.add_argument("--pytest", default=None, help="pytest arguments, run in this process")
    ap.add_argument("--out", type=Path, default=None, help="also write the report here")
    ap.add_argument("--no-trace", action="store_true",
                    help="only the verdicts, under the filter but without strace (fast)")
    args = ap.parse_args()
    if sandbox.sandbox_mode() != "namespaces+uid" or sandbox._use_launcher() is None:
        raise SystemExit("needs the C launcher (root, gcc): the filter is the launcher's")
    started = time.monotonic()
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ckd-strace-") as d:
        tracer = Tracer(Path(d), enabled=not args.no_trace)
        if args.builtin is not None:
            rows += run_builtin(args.builtin or None)
            tracer.collect()
        if args.hecbench is not None:
            rows += run_hecbench(args.hecbench or None)
            tracer.collect()
        if args.pytest:
            import pytest

            code = pytest.main(["-q", "-p", "no:cacheprovider", *shlex.split(args.pytest)])
            rows.append(f"pytest {args.pytest}: exit {int(code)}")
            tracer.collect()
    report = [f"{tracer.runs} sandboxed runs traced in {time.monotonic() - started:.0f} s", *rows, ""]
    report.append(f"{'system call':24s} {'calls':>9s} {'runs':>6s}  filter")
    refused = []
    for name, n in sorted(tracer.calls.items(), key=lambda kv: (-tracer.runs_calling[kv[0]], kv[0])):
        answer = syscall_policy(name)
        if answer != "allow":
            refused.append(name)
        report.append(f"{name:24s} {n:9d} {tracer.runs_calling[name]:6d}  {answer}")
    report.append("")
    report.append("made by honest runs but not plainly allowed: " + (", ".join(refused) or "none"))
    text = "\n".join(report)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
