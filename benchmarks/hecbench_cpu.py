"""Run every HeCBench program of ../shared/data/hecbench on the CPU backend and print a table.

    python benchmarks/hecbench_cpu.py [--only NAME ...] [--schedules forward,reverse]

Each program is built by the `cpu` backend (g++ + cudashim, in the sandbox, cached) and run once
per schedule through `validators.engine.run_program`, with the arguments of its Makefile `run:`
target scaled down for a CPU (table `CPU_ARGS`, with the reason for each change). The program's
own check is the oracle: PASS means it printed PASS. For the three programs that print checkable
values but no verdict, `hecbench_oracles.py` recomputes the values with NumPy (verdict PASS, check
`oracle`). Programs that print only timings are `ran` (exit 0, no error report, the same
non-timing output under every schedule): nothing they print depends on a kernel's result.
Programs that need GPU-only features are `needs_gpu` with the feature named.

Local `#include "x.h"` files are inlined, from the program's folder, then from its Makefile's
`-I../sibling` folders; a sibling missing from the data is taken from `hecbench_support/` (our
stand-ins, see its README). Only files beneath those folders are read: an absolute path, a `..`
component or a symbolic link on the way makes the program `refused`, with the include named. `--variants plain,asan` also runs the AddressSanitizer build.
"""

from __future__ import annotations

import argparse
import re
import stat
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))

from hecbench_oracles import ORACLES  # noqa: E402

from schemas import Program, Status  # noqa: E402
from validators.analysis import analyze  # noqa: E402
from validators.backends.cpu import CpuBackend  # noqa: E402
from validators.engine import run_program  # noqa: E402
from validators.safe_fs import read_regular, stat_beneath  # noqa: E402
from validators.sandbox import Limits  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "hecbench"
SUPPORT = Path(__file__).resolve().parent / "hecbench_support"

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
    "langevin-cuda": ["102400", "2"],  # a multiple of 256: the program launches n/256 blocks
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
    "addBiasQKV-cuda": [
        ("int repeat = 1000;", "int repeat = 2;", "timing loop: 1000 launches -> 2"),
    ],
    "norm2-cuda": [
        (
            "n <= 1024*1024*512;",
            "n <= 1024*1024*2;",
            "sizes 2^19..2^29 (2 GB) -> 2^19..2^21",
        ),
    ],
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


def include_dirs(folder: Path) -> tuple[list[Path], list[str]]:
    """The program's folder, then its Makefile's `-I../sibling` folders; a sibling missing from
    the data is replaced by our stand-in in hecbench_support/ (named in the returned notes).
    A sibling is a plain folder beside the program's (never `..` itself, never a link)."""
    dirs, notes = [folder], []
    mk = folder / "Makefile"
    text = mk.read_text(errors="replace") if mk.is_file() else ""
    for name in re.findall(r"-I\.\./([\w.-]+)", text):
        if name in (".", ".."):
            notes.append(f"-I../{name} ignored: not a sibling folder")
            continue
        where = stat_beneath(folder.parent, name)
        if where is not None and stat.S_ISDIR(where.st_mode):
            dirs.append(folder.parent / name)
        elif where is not None:
            notes.append(f"-I../{name} ignored: not a folder (a symbolic link?)")
        elif (SUPPORT / name).is_dir():
            dirs.append(SUPPORT / name)
            notes.append(f"{name} is not in the data: our stand-in header")
    return dirs, notes


class IncludeRefused(ValueError):
    """A quoted `#include` the harness will not inline: it names a file outside the include
    folders (an absolute path, a `..` component, a symbolic link on the way) or one that is no
    regular file of at most 4 MiB."""


def _include_problem(name: str) -> str:
    if Path(name).is_absolute():
        return "an absolute path"
    if ".." in Path(name).parts:
        return "a '..' component climbs out of the include folders"
    return ""


_PRAGMA_ONCE = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+once\b", re.M)


def inline_local_includes(folder: Path | list[Path], text: str, depth: int = 0,
                          once: set[tuple[int, str]] | None = None) -> str:
    """`text` with each quoted `#include` replaced by the header's text, looked up beneath the
    include folders only (each path component reached without following a link), recursively
    up to 8 levels. A `#pragma once` header is inlined the first time only (include guards
    work as they are). A header found in none of them stays an `#include` (the compiler
    reports it); one that would be read from outside them raises `IncludeRefused` naming it."""
    dirs = folder if isinstance(folder, list) else [folder]
    once = set() if once is None else once

    def repl(m: re.Match[str]) -> str:
        name = m.group(1)
        why = _include_problem(name)
        if why:
            raise IncludeRefused(f'#include "{name}" refused: {why}')
        for d in dirs:
            if depth >= 8:
                break
            try:  # the folder is third-party: no link anywhere on the path, a bounded read
                data = read_regular(d, name, 4 << 20)
            except FileNotFoundError:
                continue
            except OSError as exc:  # UnsafePath included: a link, a FIFO, a huge file
                raise IncludeRefused(f'#include "{name}" refused: {exc.strerror or exc}') from None
            header = data.decode(errors="replace")
            if _PRAGMA_ONCE.search(header):
                key = (dirs.index(d), name)
                if key in once:
                    return ""
                once.add(key)
            return inline_local_includes(dirs, header, depth + 1, once)
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


def judge(
    name: str, args: list[str], status: Status, reason: str, stdout: str, stderr: str
) -> tuple[str, str, str]:
    """(verdict, check, reason): PASS with check `own` (the program's check passed) or `oracle`
    (hecbench_oracles.py agreed), `ran` (exit 0; the program checks nothing), FAIL, needs_gpu,
    compile_error, runtime_error, timeout, ..."""
    if status == Status.NEEDS_GPU:
        return "needs_gpu", "-", reason
    if status != Status.PASSED:
        return status.value, "-", reason
    text = stdout + "\n" + stderr
    if name in ORACLES:
        ok, why = ORACLES[name](args, stdout)
        return ("PASS" if ok else "FAIL"), "oracle", why
    if name in SELF_CHECKS:
        ok, bad = SELF_CHECKS[name]
        if re.search(ok, text) and not re.search(bad, text):
            return "PASS", "own", f"self-check /{ok}/ passed"
        return "FAIL", "own", f"self-check /{ok}/ did not pass"
    if re.search(r"\bPASS(ED)?\b", text, re.I) and not re.search(r"\bFAIL(ED)?\b", text):
        return "PASS", "own", "printed PASS"
    if re.search(r"\bFAIL(ED)?\b", text):
        line = next(ln for ln in text.splitlines() if "FAIL" in ln.upper())
        return "FAIL", "own", "printed FAIL: " + line[:120]
    if re.search(r"All results match", text):
        return "PASS", "own", "printed 'All results match'"
    why = NO_ORACLE.get(name, "prints nothing that depends on a kernel's result")
    return "ran", "none", f"exit 0; {why}"


# Why a program that runs to completion has nothing to check (read from each main.cu).
NO_ORACLE: dict[str, str] = {
    "addBiasQKV-cuda": "a timing loop; the output is never copied back",
    "clock-cuda": "copies back only clock() stamps; the reduction it times is never read",
    "conversion-cuda": "conversion bandwidth only; no output is copied back",
    "dispatch-cuda": "launch-latency statistics only",
    "intrinsics-cast-cuda": "prints XOR checksums that include input1[0], which it never initialises "
    "(its loop writes input1[1..n], one past the buffer: ASan reports it)",
    "kernelLaunch-cuda": "launch-latency timings of empty kernels only",
    "mallocFree-cuda": "allocation timings only",
    "memcpy-cuda": "copy timings only; the copies are never compared",
    "pointerchase-cuda": "pointer-chase latency only",
    "rodrigues-cuda": "kernel timings only; the rotated points are never copied back",
    "streamCreateCopyDestroy-cuda": "stream and copy timings only",
}


_TIMING = re.compile(
    r"time|timing|throughput|latency|bandwidth|clock|takes|efficiency|speedup|rate|stddev"
    r"|\(ms\)|\(us\)|\(s\)|GB/s|G/s",
    re.I,
)
# Lines whose value is undefined behaviour in the program itself, so they differ run to run.
UNDEFINED_LINES: dict[str, tuple[str, str]] = {
    "f16atomic-cuda": (
        r"in HEX",
        "passes __half/__nv_bfloat16 to printf's %04x (a class through varargs)",
    ),
}


def _stable_lines(name: str, stdout: str) -> list[str]:
    """The output without timing lines (they vary run to run) or lines the program leaves
    undefined."""
    undefined = UNDEFINED_LINES.get(name, ("$^", ""))[0]
    # argv[0] (printed by some programs) is the build's cache path, which differs per variant.
    stdout = re.sub(r"/\S*/builds/\S+/prog\b", "<program>", stdout)
    return [
        ln for ln in stdout.splitlines() if not _TIMING.search(ln) and not re.search(undefined, ln)
    ]


def run_one(
    backend: CpuBackend, folder: Path, schedules: list[str], variants: list[str]
) -> dict[str, str]:
    name = folder.name
    dirs, notes = include_dirs(folder)
    try:
        source = inline_local_includes(dirs, (folder / "main.cu").read_text(errors="replace"))
    except IncludeRefused as exc:
        return {"program": name, "args": "", "makefile": "", "check": "-", "build_s": "0.0",
                "run_s": "0.0", "notes": "; ".join(notes), "verdict": "refused",
                "reason": str(exc)}
    for old, new, _why in SOURCE_SCALING.get(name, []):
        if old not in source:
            raise SystemExit(f"{name}: scaling edit no longer applies: {old!r}")
        source = source.replace(old, new)
    program = Program(source=source, filename="main.cu")
    args = CPU_ARGS.get(name, makefile_args(folder).split())
    row = {
        "program": name,
        "args": " ".join(args),
        "makefile": makefile_args(folder),
        "check": "-",
        "build_s": "0.0",
        "run_s": "0.0",
        "notes": "; ".join(notes),
    }
    blocked = backend.unsupported_features(list(analyze(source).features))
    if blocked:  # what `check` does first: no build for a GPU-only program
        return row | {
            "verdict": "needs_gpu",
            "reason": f"uses {', '.join(blocked)} (static analysis)",
        }
    limits = Limits(cpu_seconds=240, wall_seconds=180, memory_bytes=8 << 30)
    verdicts = []
    outputs = []
    build_s = run_s = 0.0
    for variant in variants:
        for schedule in schedules:
            res = run_program(
                program, backend, args, limits=limits, variant=variant, schedule=schedule
            )
            out = res.outcome
            stdout = out.stdout if out else ""
            outputs.append(_stable_lines(name, stdout))
            v = judge(name, args, res.status, res.reason, stdout, out.stderr if out else "")
            verdicts.append(
                (
                    v[0],
                    v[1],
                    f"{variant}/{schedule}: {v[2]}" if v[0] not in ("PASS", "ran") else v[2],
                )
            )
            build_s += res.build_seconds
            run_s += res.run_seconds
    final = next((v for v in verdicts if v[0] not in ("PASS", "ran")), verdicts[0])
    runs = [f"{v}/{s}" for v in variants for s in schedules]
    if final[0] in ("PASS", "ran") and len(outputs) > 1:
        same = all(o == outputs[0] for o in outputs[1:])
        if not same:
            final = ("FAIL", final[1], "output (timings aside) DIFFERS between " + ", ".join(runs))
        elif final[0] == "ran":
            final = (
                "ran",
                final[1],
                final[2] + "; output (timings aside) identical under " + ", ".join(runs),
            )
    if name in UNDEFINED_LINES:
        row["notes"] = "; ".join(
            filter(None, [row["notes"], "ignored: " + UNDEFINED_LINES[name][1]])
        )
    return row | {
        "verdict": final[0],
        "check": final[1],
        "reason": final[2],
        "build_s": f"{build_s:.1f}",
        "run_s": f"{run_s:.1f}",
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", default=None, help="program folder names")
    ap.add_argument("--schedules", default="forward", help="comma-separated, e.g. forward,reverse")
    ap.add_argument(
        "--variants", default="plain", help="comma-separated build variants: plain,asan"
    )
    opts = ap.parse_args(argv)
    if not DATA.is_dir():
        print(f"no HeCBench data at {DATA.resolve()}", file=sys.stderr)
        return 2
    backend = CpuBackend()
    folders = sorted(p for p in DATA.iterdir() if p.is_dir())
    if opts.only:
        unknown = set(opts.only) - {f.name for f in folders}
        if unknown:
            print(f"unknown program(s): {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        folders = [f for f in folders if f.name in set(opts.only)]
    schedules = opts.schedules.split(",")
    variants = opts.variants.split(",")
    rows = []
    started = time.monotonic()
    print(
        f"{'program':30s} {'verdict':13s} {'check':6s} {'build s':>7s} {'run s':>6s}  "
        "args (Makefile) / reason"
    )
    for folder in folders:
        row = run_one(backend, folder, schedules, variants)
        rows.append(row)
        notes = f" [{row['notes']}]" if row["notes"] else ""
        print(
            f"{row['program']:30s} {row['verdict']:13s} {row['check']:6s} {row['build_s']:>7s} "
            f"{row['run_s']:>6s}  {row['args'] or '-'} ({row['makefile'] or '-'}) / "
            f"{row['reason'][:200]}{notes}",
            flush=True,
        )
    counts: dict[str, int] = {}
    for r in rows:
        key = f"{r['verdict']} ({r['check']})" if r["verdict"] == "PASS" else r["verdict"]
        counts[key] = counts.get(key, 0) + 1
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    passed = sum(r["verdict"] == "PASS" for r in rows)
    print(
        f"\n{len(rows)} programs in {time.monotonic() - started:.0f}s "
        f"(schedules {', '.join(schedules)}; variants {', '.join(variants)}): {summary}; "
        f"PASS in all: {passed}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
