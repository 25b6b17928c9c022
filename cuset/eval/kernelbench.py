"""KernelBench as an evaluation benchmark (`--benchmark kernelbench:DIR`).

DIR is a KernelBench checkout (its `level1`..`level3` folders, directly under DIR or under
DIR/KernelBench as the repository holds them) or any folder of problem files. In a checkout a
task's id is `level<N>/<file stem>` and `--levels` picks the levels; in a plain folder it is the
file stem. Problems are read without running them (`validators.kernelbench.files.read_problem`);
a file that is not a problem stops the load with its name and the reason, as every other
benchmark does, since a benchmark with a broken problem would give figures over other tasks.

The prompt is `kernelbench_prompt.md` (see the notes at its top); the answer is the completion's
Python block (`validators.extract.extract_python`), judged by `validators.kernelbench.verify`.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from .benchmarks import EvalTask, KernelBenchProblem
from .errors import EvalError

PREFIX = "kernelbench:"
PROMPT_FILE = Path(__file__).with_name("kernelbench_prompt.md")
LEVELS = (1, 2, 3)
SPEED_P = ("0", "1", "1.5", "2")
"""KernelBench's fast_p thresholds: the share of tasks whose answer is correct and more than p
times as fast as the reference (fast_0 is the share correct)."""
_LEVEL_DIR = re.compile(r"^level(\d+)$")


@cache
def prompt_template() -> tuple[str, str, str]:
    """(version, system turn, user turn template) from `kernelbench_prompt.md`."""
    text = PROMPT_FILE.read_text(encoding="utf-8")
    head, sep, rest = text.partition("\n=== system ===\n")
    system, sep2, user = rest.partition("\n=== user ===\n")
    version = next((ln.split(":", 1)[1].strip() for ln in head.splitlines()
                    if ln.startswith("version:")), "")
    if not (sep and sep2 and version and "{problem}" in user):
        # Our own file: a broken one is a bug here, not a user's bad input.
        raise RuntimeError(f"{PROMPT_FILE}: needs a version: line, === system ===, "
                           "=== user === and {problem}")
    return version, system.strip(), user.strip() + "\n"


def prompt_version() -> str:
    return prompt_template()[0]


def user_prompt(problem_source: str) -> str:
    # str.replace, not format: problem sources hold braces of their own.
    return prompt_template()[2].replace("{problem}", problem_source.rstrip("\n"))


def parse_levels(text: str | None) -> tuple[int, ...] | None:
    """`--levels 1,2` as a sorted tuple; None when not given (every level present)."""
    if text is None:
        return None
    try:
        levels = tuple(sorted({int(x) for x in text.split(",") if x.strip()}))
    except ValueError:
        raise EvalError(f"--levels {text}: not a comma-separated list of integers") from None
    if not levels or any(lv < 1 for lv in levels):
        raise EvalError(f"--levels {text}: give level numbers such as 1,2")
    return levels


def _order(file: Path) -> tuple[int, str]:
    """KernelBench's numbering first (`2_...` before `10_...`), then the name."""
    head = file.stem.split("_", 1)[0]
    return (int(head) if head.isdigit() else 1 << 30, file.name)


def _level_dirs(root: Path) -> dict[int, Path]:
    for base in (root, root / "KernelBench"):
        if not base.is_dir():
            continue
        found = {int(m.group(1)): p for p in base.iterdir()
                 if p.is_dir() and (m := _LEVEL_DIR.match(p.name))}
        if found:
            return found
    return {}


def load_kernelbench(spec: str, levels: tuple[int, ...] | None = None) -> list[EvalTask]:
    """The tasks of `kernelbench:DIR`; raises EvalError naming DIR (or the file) and why."""
    raw = spec[len(PREFIX):] if spec.startswith(PREFIX) else spec
    if not raw:
        raise EvalError(f"benchmark {spec}: give the folder, as kernelbench:DIR")
    root = Path(raw)
    if not root.is_dir():
        raise EvalError(f"benchmark {spec}: {root} is not a folder")
    by_level = _level_dirs(root)
    if by_level:
        wanted = levels or tuple(sorted(by_level))
        absent = [lv for lv in wanted if lv not in by_level]
        if absent:
            raise EvalError(f"benchmark {spec}: no level{absent[0]} folder (found "
                            f"{', '.join(f'level{lv}' for lv in sorted(by_level))})")
        sets = [(f"level{lv}/", by_level[lv]) for lv in wanted]
    else:
        if levels is not None:
            raise EvalError(f"benchmark {spec}: --levels needs a KernelBench checkout "
                            f"(level1..level3 folders); {root} is a folder of problem files")
        sets = [("", root)]
    tasks: list[EvalTask] = []
    for prefix, folder in sets:
        tasks += [_task(prefix, f) for f in sorted(folder.glob("*.py"), key=_order)]
    return tasks


def _task(prefix: str, file: Path) -> EvalTask:
    from validators.kernelbench.files import KernelBenchInputError, read_problem

    try:
        source = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise EvalError(f"benchmark {file}: cannot read: {why}") from None
    try:
        read_problem(source, origin=str(file))
    except (KernelBenchInputError, SyntaxError) as exc:
        raise EvalError(f"benchmark {exc}" if isinstance(exc, KernelBenchInputError)
                        else f"benchmark {file}: not valid Python: {exc.msg} (line {exc.lineno})"
                        ) from None
    _, system, _ = prompt_template()
    return EvalTask(id=prefix + file.stem, prompt=user_prompt(source), kind="kernelbench",
                    kernelbench=KernelBenchProblem(source=source, path=str(file)),
                    system=system, language="python")
