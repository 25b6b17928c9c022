"""Run every HeCBench program of ../shared/data/hecbench on the CPU backend and print a table.

    python benchmarks/hecbench_cpu.py [--only NAME ...] [--schedules forward,reverse]

Each program is built by the `cpu` backend (g++ + cudashim, in the sandbox, cached) and run once
per schedule through `validators.engine.run_program`, with the arguments of its Makefile `run:`
target scaled down for a CPU (table `CPU_ARGS`, with the reason for each change). The program's
own check is the oracle: PASS means it printed PASS (or, for programs that print no verdict, ran
to completion with exit 0 and no error report); programs that need GPU-only features are
`needs_gpu` with the feature named. Local `#include "x.h"` files of a program are inlined.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from schemas import Program, Status
from validators.analysis import analyze
from validators.backends.cpu import CpuBackend
from validators.engine import run_program
from validators.sandbox import Limits

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "hecbench"

# Makefile arguments -> CPU arguments. Sizes are cut so one run takes seconds on 2 cores;
# repeat counts (timing loops) are cut to 1-2 because they only repeat the same work.
CPU_ARGS: dict[str, list[str]] = {
    "atomicCost-cuda": ["1", "2"],
    "blas-dot-cuda": ["65536", "2"],
    "ccl-cuda": ["2"],
    "concurrentKernels-cuda": ["4"],
    "conversion-cuda": ["65536", "1"],
    "f16atomic-cuda": ["4096", "2"],
    "fhd-cuda": ["1000", "4096", "1"],
    "filter-cuda": ["100000", "256", "2"],
    "heat2d-cuda": ["128", "128", "20"],
    "intrinsics-cast-cuda": ["10000", "2"],
    "kernelLaunch-cuda": ["1000"],
    "langevin-cuda": ["100000", "2"],
    "mallocFree-cuda": ["16777216"],
    "matrix-rotate-cuda": ["300", "2"],
    "memcpy-cuda": ["2"],
    "michalewicz-cuda": ["20000", "2"],
    "norm2-cuda": ["2"],
    "nosync-cuda": ["65536", "2"],
    "permute-cuda": ["8", "2"],
    "prefetch-cuda": ["2"],
    "reverse-cuda": ["2"],
    "rfs-cuda": ["10", "20000"],
    "rodrigues-cuda": ["100000", "2"],
    "scan3-cuda": ["2", "65536"],
    "segment-reduce-cuda": ["1024", "2"],
    "softmax-cuda": ["1000", "784", "0", "2"],
    "spnnz-cuda": ["2000", "2000", "15000", "2"],
    "threadfence-cuda": ["2", "100000"],
}
# Programs whose problem size is a constant in the source (not an argument) get a recorded
# textual edit of that constant: (old, new, why).
SOURCE_SCALING: dict[str, list[tuple[str, str, str]]] = {
    "atomicCost-cuda": [
        (
            "const int length = 922521600;",
            "const int length = 9225216;",
            "922M elements (7.4 GB) / 100",
        ),
    ],
    "prefetch-cuda": [
        (
            "const int numElements = 64 * 1024 * 1024;",
            "const int numElements = 1024 * 1024;",
            "64M / 64",
        ),
    ],
}


def inline_local_includes(folder: Path, text: str, depth: int = 0) -> str:
    def repl(m: re.Match[str]) -> str:
        f = folder / m.group(1)
        if f.is_file() and depth < 8:
            return inline_local_includes(folder, f.read_text(errors="replace"), depth + 1)
        return m.group(0)

    return re.sub(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', repl, text, flags=re.M)


def makefile_args(folder: Path) -> str:
    mk = (folder / "Makefile").read_text(errors="replace")
    m = re.search(r"^run:.*\n((?:\t.*\n?)+)", mk, re.M)
    if not m:
        return ""
    first = m.group(1).splitlines()[0]
    return first.split("$(program)", 1)[-1].strip()


# Programs whose self-check is not the word PASS: (regex that must match, regex that must not).
SELF_CHECKS: dict[str, tuple[str, str]] = {
    "assert-cuda": (r"returned OK", r"returned ERROR"),
    "fhd-cuda": (r"RMSE = 0\.0000", r"$^"),
    "segment-reduce-cuda": (r"Throughput", r"does not agree|expected"),
}


def judge(name: str, status: Status, reason: str, stdout: str, stderr: str) -> tuple[str, str]:
    """PASS (the program's own check passed) / ran (exit 0, the program checks nothing) /
    FAIL / needs_gpu / compile_error / runtime_error / timeout, with the reason."""
    if status == Status.NEEDS_GPU:
        return "needs_gpu", reason
    if status != Status.PASSED:
        return status.value, reason
    text = stdout + "\n" + stderr
    if name in SELF_CHECKS:
        ok, bad = SELF_CHECKS[name]
        if re.search(ok, text) and not re.search(bad, text):
            return "PASS", f"self-check /{ok}/ passed"
        return "FAIL", f"self-check /{ok}/ did not pass"
    if re.search(r"\bPASS(ED)?\b", text, re.I) and not re.search(r"\bFAIL(ED)?\b", text):
        return "PASS", "printed PASS"
    if re.search(r"\bFAIL(ED)?\b", text):
        line = next(ln for ln in text.splitlines() if "FAIL" in ln.upper())
        return "FAIL", "printed FAIL: " + line[:120]
    return "ran", "exit 0; the program prints no verdict of its own"


_TIMING = re.compile(r"time|throughput|latency|bandwidth|clock|\(ms\)|\(us\)|\(s\)|GB/s|G/s", re.I)


def _stable_lines(stdout: str) -> list[str]:
    """The program's output without the lines that report timings (they vary run to run)."""
    return [ln for ln in stdout.splitlines() if not _TIMING.search(ln)]


def run_one(backend: CpuBackend, folder: Path, schedules: list[str]) -> dict[str, str]:
    name = folder.name
    source = inline_local_includes(folder, (folder / "main.cu").read_text(errors="replace"))
    for old, new, _why in SOURCE_SCALING.get(name, []):
        if old not in source:
            raise SystemExit(f"{name}: scaling edit no longer applies: {old!r}")
        source = source.replace(old, new)
    program = Program(source=source, filename="main.cu")
    args = CPU_ARGS.get(name, makefile_args(folder).split())
    blocked = backend.unsupported_features(list(analyze(source).features))
    if blocked:  # what `check` does first: no build for a GPU-only program
        return {
            "program": name,
            "args": " ".join(args),
            "makefile": makefile_args(folder),
            "verdict": "needs_gpu",
            "reason": f"uses {', '.join(blocked)} (static analysis)",
            "build_s": "0.0",
            "run_s": "0.0",
        }
    limits = Limits(cpu_seconds=240, wall_seconds=180, memory_bytes=8 << 30)
    verdicts = []
    outputs = []
    build_s = run_s = 0.0
    for schedule in schedules:
        res = run_program(
            program,
            _ScheduledBackend(backend, schedule),
            args,
            limits=limits,
        )
        out = res.outcome
        outputs.append(_stable_lines(out.stdout if out else ""))
        verdicts.append(
            judge(
                name, res.status, res.reason, out.stdout if out else "", out.stderr if out else ""
            )
        )
        build_s += res.build_seconds
        run_s += res.run_seconds
    final = next((v for v in verdicts if v[0] not in ("PASS", "ran")), verdicts[0])
    if final[0] == "ran" and len(outputs) > 1:
        same = all(o == outputs[0] for o in outputs[1:])
        final = (
            "ran",
            final[1]
            + (
                "; output (timings aside) identical under "
                if same
                else "; output (timings aside) DIFFERS between "
            )
            + ", ".join(schedules),
        )
    return {
        "program": name,
        "args": " ".join(args),
        "makefile": makefile_args(folder),
        "verdict": final[0],
        "reason": final[1],
        "build_s": f"{build_s:.1f}",
        "run_s": f"{run_s:.1f}",
    }


class _ScheduledBackend(CpuBackend):
    """The backend with `command` pinned to one schedule (run_program uses the default)."""

    def __init__(self, inner: CpuBackend, schedule: str) -> None:
        super().__init__(cache=inner.cache, workers=inner.workers)
        self._schedule = schedule

    def command(self, exe, args, *, schedule="default"):  # type: ignore[no-untyped-def]
        return super().command(exe, args, schedule=self._schedule)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", default=None, help="program folder names")
    ap.add_argument("--schedules", default="forward", help="comma-separated, e.g. forward,reverse")
    opts = ap.parse_args(argv)
    if not DATA.is_dir():
        print(f"no HeCBench data at {DATA.resolve()}", file=sys.stderr)
        return 2
    backend = CpuBackend()
    folders = sorted(p for p in DATA.iterdir() if p.is_dir())
    if opts.only:
        folders = [f for f in folders if f.name in set(opts.only)]
    schedules = opts.schedules.split(",")
    rows = []
    started = time.monotonic()
    print(
        f"{'program':30s} {'verdict':13s} {'build s':>7s} {'run s':>6s}  args (Makefile) / reason"
    )
    for folder in folders:
        row = run_one(backend, folder, schedules)
        rows.append(row)
        print(
            f"{row['program']:30s} {row['verdict']:13s} {row['build_s']:>7s} {row['run_s']:>6s}  "
            f"{row['args'] or '-'} ({row['makefile'] or '-'}) / {row['reason'][:160]}",
            flush=True,
        )
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    print(f"\n{len(rows)} programs in {time.monotonic() - started:.0f}s: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
