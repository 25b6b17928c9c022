"""Side-by-side runs of real programs with the warp-lockstep copies on and off.

For every `.cu` file under the given paths that has a kernel the rewrite copies
(validators/cpu/lockstep.py), build it once (plain) and run it under the forward and reverse
schedules with `CUDASHIM_LOCKSTEP=1` and `=0`. The outputs must be the same text once numbers
that look like timings are masked; the table shows both times and their ratio.

    python benchmarks/lockstep_diff.py DIR_OR_FILE... [--timeout S] [--args "..."]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from validators.cpu.rewrite import rewrite  # noqa: E402
from validators.cpu.toolchain import compile_program  # noqa: E402

_TIMING = re.compile(
    r"(?i)(time|ms|sec|elapsed|gb/s|gflops|bandwidth|throughput|latency|us\b|speed|tflops|cycles|clock)"
)
_NUMBER = re.compile(r"[-+]?\d+\.?\d*(?:[eE][-+]?\d+)?")


def masked(text: str) -> str:
    """The output with numbers on timing-looking lines replaced by `#`."""
    return "\n".join(_NUMBER.sub("#", ln) if _TIMING.search(ln) else ln for ln in text.splitlines())


def run(exe: Path, args: list[str], schedule: str, lockstep: bool, timeout: float):
    env = {**os.environ, "CUDASHIM_SCHEDULE": schedule, "CUDASHIM_LOCKSTEP": "1" if lockstep else "0"}
    started = time.perf_counter()
    try:
        p = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=timeout, env=env,
                           cwd=exe.parent, errors="replace")
    except subprocess.TimeoutExpired:
        return None, "timeout", time.perf_counter() - started
    return p.returncode, p.stdout + p.stderr, time.perf_counter() - started


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--args", default="", help="arguments for every program")
    ap.add_argument("--schedules", default="forward,reverse")
    opts = ap.parse_args()
    files = [f for p in opts.paths for f in (sorted(p.rglob("*.cu")) if p.is_dir() else [p])]
    rows, differ = [], 0
    for f in files:
        source = f.read_text(errors="replace")
        copied = rewrite(source).lockstep
        if not copied:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            made = compile_program(source, Path(tmp), extra_flags=[f"-I{f.parent}", f"-I{f.parent.parent}"])
            if not made.ok:
                rows.append((f, copied, "build failed: " + made.diagnostics.strip().splitlines()[-1][:60], 0, 0))
                continue
            used = made.rewrite.lockstep if made.rewrite else []
            for schedule in opts.schedules.split(","):
                on = run(made.exe, opts.args.split(), schedule, True, opts.timeout)
                off = run(made.exe, opts.args.split(), schedule, False, opts.timeout)
                same = on[0] == off[0] and masked(on[1]) == masked(off[1])
                differ += not same
                verdict = "same" if same else f"DIFFER (exit {on[0]} vs {off[0]})"
                if not used:
                    verdict += " [copies left out of the build]"
                rows.append((f, used, f"{schedule}: {verdict}", on[2], off[2]))
                if not same:
                    print(f"--- {f} {schedule}: with copies\n{on[1][-1500:]}\n--- without\n{off[1][-1500:]}",
                          file=sys.stderr)
    print(f"{'program':60} {'copied kernels':45} {'outputs':30} {'on s':>7} {'off s':>7} {'off/on':>6}")
    for f, copied, verdict, t_on, t_off in rows:
        name = str(f)[-60:]
        ratio = f"{t_off / t_on:6.2f}" if t_on else ""
        print(f"{name:60} {', '.join(copied)[:45]:45} {verdict:30} {t_on:7.2f} {t_off:7.2f} {ratio}")
    print(f"\n{len(rows)} runs, {differ} with different outputs")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
