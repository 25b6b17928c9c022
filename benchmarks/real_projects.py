"""Build and test CUDA projects of several files on the cpu backend, as their authors build and
test them, and print a table: pass / fail / compile_error / needs_gpu, with the cause of each.

    python benchmarks/real_projects.py DIR... [--timeout S] [--json OUT]

Each DIR is a project folder, or a folder of project folders (searched one level down). A project
folder holds its sources and headers and a `project.toml`:

    build = "nvcc -I include -O2 -o test.out solution.cu test/*.cu"   # how its author builds it
    test = "./test.out 4096"        # how its author tests it: the built program and its arguments
    expect_exit = 0                 # the exit status a correct run gives (default 0)
    expect_stdout = "PASS"          # text a correct run prints (optional)
    timeout = 120                   # wall seconds for the run (optional; default --timeout)

The build command is read by `validators run --nvcc` (sources, globs, -I/-D/-std kept, GPU
code-generation options dropped with a note); the first word of `test` names the program and is
not run itself, the rest are its arguments. A folder without `project.toml` that has a HeCBench
`Makefile` gets a generated manifest: the Makefile's `source` list and `-I`/`-D`/`-std` flags,
the arguments of `hecbench_cpu.CPU_ARGS` (scaled for a CPU) or else of its `run:` target, and
`expect_stdout = "PASS"` where the program prints PASS. Problem sizes fixed in a HeCBench source
are not scaled here (`hecbench_cpu.py` edits them): such a program may time out.

Every project runs through `python -m validators run --backend cpu --json` in a subprocess, as a
user runs it. A project whose manifest is unreadable is reported (`error`, naming the file and
the key) and the others still run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

MANIFEST = "project.toml"
_KEYS = {"build": str, "test": str, "expect_exit": int, "expect_stdout": str, "timeout": (int, float)}


class ManifestError(ValueError):
    """A project.toml that cannot be used: the message names the file and the key."""


@dataclass
class Manifest:
    build: str
    args: list[str]
    expect_exit: int = 0
    expect_stdout: str | None = None
    timeout: float | None = None
    generated: str = ""  # why and from what the manifest was generated, if it was


@dataclass
class Row:
    project: str
    result: str  # pass, fail, compile_error, needs_gpu, error
    cause: str
    seconds: float
    notes: list[str] = field(default_factory=list)


def read_manifest(path: Path) -> Manifest:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"{path}: cannot read it: {exc}") from None
    for key in ("build", "test"):
        if key not in data:
            raise ManifestError(f"{path}: '{key}' is missing")
    for key, value in data.items():
        want = _KEYS.get(key)
        if want is None:
            raise ManifestError(f"{path}: unknown key '{key}' (known: {', '.join(_KEYS)})")
        if not isinstance(value, want) or isinstance(value, bool):
            raise ManifestError(f"{path}: '{key}' must be {getattr(want, '__name__', 'a number')}, "
                                f"not {value!r}")
    try:
        test = shlex.split(data["test"])
    except ValueError as exc:
        raise ManifestError(f"{path}: 'test' is not a command: {exc}") from None
    if not test:
        raise ManifestError(f"{path}: 'test' names no program")
    return Manifest(build=data["build"], args=test[1:], expect_exit=data.get("expect_exit", 0),
                    expect_stdout=data.get("expect_stdout"), timeout=data.get("timeout"))


def hecbench_manifest(folder: Path) -> Manifest:
    """A manifest for a HeCBench folder: its Makefile's sources and flags, CPU-sized arguments."""
    from hecbench_cpu import CPU_ARGS, SUPPORT

    make = (folder / "Makefile").read_text(errors="replace")
    sources = re.search(r"^source\s*=\s*(.+)$", make, re.M)
    units = sources.group(1).split() if sources else ["main.cu"]
    flags = []
    for name in re.findall(r"-I\.\./([\w.-]+)", make):
        sibling = folder.parent / name
        where = sibling if sibling.is_dir() else SUPPORT / name
        if where.is_dir():  # absolute: the folder is outside the project's
            flags.append(f"-I{where.resolve()}")
    flags += re.findall(r"(?<!\S)(-std=[\w+]+|-D\w+(?:=\S+)?)", make.split("run:")[0])
    if folder.name in CPU_ARGS:
        args, why = CPU_ARGS[folder.name], "arguments scaled for a CPU (hecbench_cpu.CPU_ARGS)"
    else:
        run = re.search(r"^run:.*\n\t(.+)$", make, re.M)
        words = shlex.split(run.group(1)) if run else []
        args = [w for w in words[1:] if not w.startswith("$")]
        why = "arguments of the Makefile's run: target"
    said = any("PASS" in (folder / u).read_text(errors="replace") for u in units if (folder / u).is_file())
    return Manifest(build=" ".join(["nvcc", *flags, "-o", "main", *units]), args=list(args),
                    expect_stdout="PASS" if said else None,
                    generated=f"generated from the Makefile; {why}")


def projects(paths: list[Path]) -> list[Path]:
    found = []
    for p in paths:
        if (p / MANIFEST).is_file() or (p / "Makefile").is_file():
            found.append(p)
        elif p.is_dir():
            found += sorted(c for c in p.iterdir() if c.is_dir() and (
                (c / MANIFEST).is_file() or (c / "Makefile").is_file()))
        else:
            print(f"{p}: not a folder", file=sys.stderr)
    return found


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


def judge(m: Manifest, rep: dict) -> tuple[str, str]:
    """(result, cause) of one run's `validators run --json` report against the manifest."""
    status, reason = rep["status"], rep.get("reason") or ""
    if status == "compile_error":
        return "compile_error", _first_line(reason) or _first_line(rep.get("stderr", ""))
    if status == "needs_gpu":
        return "needs_gpu", reason
    if rep.get("timed_out"):
        return "fail", f"timed out ({reason})" if reason else "timed out"
    if rep.get("signal"):
        return "fail", reason or f"killed by signal {rep['signal']}"
    code = rep.get("exit_code")
    if code != m.expect_exit:
        why = f"exit status {code}, expected {m.expect_exit}"
        if reason and not re.fullmatch(r"exit (code|status) -?\d+", reason):
            why += f": {reason}"  # a crash, a deadlock, a sanitizer report: the runtime's words
        last = rep.get("stdout", "").strip().splitlines()[-1:] or rep.get("stderr", "").strip().splitlines()[-1:]
        return "fail", f"{why}; last output {last[0][:100]!r}" if last else why
    if m.expect_stdout and m.expect_stdout not in rep.get("stdout", ""):
        return "fail", f"stdout does not contain {m.expect_stdout!r}: ends {rep.get('stdout', '')[-80:]!r}"
    return "pass", f"exit {code}" + (f", printed {m.expect_stdout!r}" if m.expect_stdout else "")


def run_project(folder: Path, timeout: float) -> Row:
    t0 = time.monotonic()
    try:
        m = read_manifest(folder / MANIFEST) if (folder / MANIFEST).is_file() else hecbench_manifest(folder)
    except (ManifestError, OSError) as exc:
        return Row(folder.name, "error", str(exc), 0.0)
    wall = m.timeout or timeout
    cmd = [sys.executable, "-m", "validators", "run", "--backend", "cpu", "--json",
           "--dir", str(folder), "--nvcc", m.build, "--timeout", str(wall), "--", *m.args]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=wall + 900)
    except subprocess.TimeoutExpired:
        return Row(folder.name, "error", "validators run did not finish", time.monotonic() - t0)
    seconds = time.monotonic() - t0
    if not r.stdout.startswith("{"):  # refused before any build: bad input, named on stderr
        return Row(folder.name, "error", _first_line(r.stderr[-2000:]) or f"exit {r.returncode}", seconds)
    rep = json.loads(r.stdout)
    result, cause = judge(m, rep)
    notes = [n for n in (m.generated, *rep.get("notes", [])) if n]
    return Row(folder.name, result, cause, seconds, notes)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+", type=Path, metavar="DIR")
    ap.add_argument("--timeout", type=float, default=60.0, help="wall seconds per run (default 60)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write the rows as JSON")
    args = ap.parse_args(argv)
    rows = []
    print("| project | result | cause | seconds |\n| --- | --- | --- | ---: |", flush=True)
    for folder in projects(args.dirs):
        row = run_project(folder, args.timeout)
        rows.append(row)
        cause = row.cause.replace("|", "\\|").replace("\n", " ")[:160]
        print(f"| {row.project} | {row.result} | {cause} | {row.seconds:.1f} |", flush=True)
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.result] = counts.get(row.result, 0) + 1
    print("\n" + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) + f" (of {len(rows)})")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
