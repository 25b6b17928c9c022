"""Turn a `--decontaminate PATH` into benchmark items, detecting the benchmark's format.

| format | what PATH is | code | prompts |
| --- | --- | --- | --- |
| `kernelbench` | a folder (nested `level1/`, `level2/`... allowed) of `*.py` tasks with `class Model` and `get_inputs` | the module source | none (its docstrings are in the code) |
| `cudabench` | JSONL, one row per task and input scale: `id`, `task_name`, `inputs`, `outputs`, `level1_prompt` (`level2_prompt`, `level3_prompt`), `bench.cu`, `gen.py`, `compare.py` | `bench.cu` | the level prompts |
| `computeeval` | NVIDIA ComputeEval problems, JSONL: `task_id`, `prompt`, and `declaration` (2025-1) or `context_files` / `baseline_solution` (later releases) | declaration, context files, solution files | `prompt` |
| `tritonbench` | TritonBench-G/T JSON (a list; `.jsonl` files of the T channel are a JSON list too), or their Alpaca-style variants | `output` (G) or `torch_code` (T) | `simp_instru`, `comp_instru`, `instruction`, `description`, `func_inputs` |

The rows of one CUDABench task (one per input scale) become one item. A malformed JSONL line or
a row of the detected format that lacks its fields is skipped and counted in the result's
`notes` (count and first line number); a path that yields no item at all is a `DecontamError`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .model import BenchmarkItem, DecontamError, LoadedBenchmark

_CE_SIGNS = ("declaration", "context_files", "test_files", "build_command", "baseline_solution",
             "canonical_solution", "solution")
_TB_PROMPTS = ("simp_instru", "comp_instru", "instruction", "description", "func_inputs")


def load_benchmark(path: str | Path) -> LoadedBenchmark:
    p = Path(path)
    if not p.exists():
        raise DecontamError(f"{p}: no such file or folder")
    if p.is_dir():
        return _kernelbench(p)
    rows, notes = _read_rows(p)
    fmt = _detect(p, rows)
    return {"cudabench": _cudabench, "computeeval": _computeeval,
            "tritonbench": _tritonbench}[fmt](p, rows, notes)


def load_benchmarks(paths: Iterable[str | Path]) -> list[LoadedBenchmark]:
    """Every path loaded, or the first `DecontamError` (call before the build starts)."""
    return [load_benchmark(p) for p in paths]


def _kernelbench(folder: Path) -> LoadedBenchmark:
    items, skipped = [], []
    for f in sorted(folder.rglob("*.py")):
        try:
            text = f.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            skipped.append(f"{f.name} ({type(e).__name__})")
            continue
        if "class Model" not in text or "def get_inputs" not in text:
            skipped.append(f.name)
            continue
        item_id = f.relative_to(folder).with_suffix("").as_posix()
        items.append(BenchmarkItem("kernelbench", item_id, code=[text], language="python"))
    if not items:
        raise DecontamError(
            f"{folder}: not a KernelBench folder (no *.py file with `class Model` and "
            f"`def get_inputs`)"
        )
    notes = [f"{len(skipped)} .py files are not KernelBench tasks, skipped (first: {skipped[0]})"] \
        if skipped else []
    return LoadedBenchmark(str(folder), "kernelbench", items, notes)


def _read_rows(p: Path) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise DecontamError(f"{p}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise DecontamError(f"{p}: cannot read ({e.strerror or e})") from None
    if not text.strip():
        raise DecontamError(f"{p}: empty file")
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if whole is not None:
        if isinstance(whole, dict):
            # one JSONL row alone, or a wrapper such as {"data": [...]}
            lists = [v for v in whole.values() if isinstance(v, list) and v
                     and all(isinstance(r, dict) for r in v)]
            whole = lists[0] if len(lists) == 1 and len(whole) == 1 else [whole]
        if not isinstance(whole, list):
            raise DecontamError(f"{p}: JSON {type(whole).__name__}, expected a list of objects")
        rows = [(i + 1, r) for i, r in enumerate(whole) if isinstance(r, dict)]
        bad = [i + 1 for i, r in enumerate(whole) if not isinstance(r, dict)]
        notes = [f"{len(bad)} list entries are not objects, skipped (first: entry {bad[0]})"] \
            if bad else []
        return rows, notes
    rows, bad = [], []
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            bad.append(no)
            continue
        if isinstance(row, dict):
            rows.append((no, row))
        else:
            bad.append(no)
    if not rows:
        raise DecontamError(f"{p}: neither JSON nor JSONL objects (line 1 does not parse)")
    notes = [f"{len(bad)} malformed JSONL lines skipped (first: line {bad[0]})"] if bad else []
    return rows, notes


def _detect(p: Path, rows: list[tuple[int, dict[str, Any]]]) -> str:
    votes: dict[str, int] = {}
    for _, r in rows[:50]:
        fmt = _row_format(r)
        if fmt:
            votes[fmt] = votes.get(fmt, 0) + 1
    if not votes:
        keys = sorted({k for _, r in rows[:5] for k in r})[:12]
        raise DecontamError(
            f"{p}: unknown benchmark format (fields {', '.join(keys) or 'none'}; expected "
            f"CUDABench, ComputeEval or TritonBench rows)"
        )
    return max(votes, key=lambda k: votes[k])


def _row_format(r: dict[str, Any]) -> str | None:
    if "bench.cu" in r:
        return "cudabench"
    if "task_id" in r and "prompt" in r and any(k in r for k in _CE_SIGNS):
        return "computeeval"
    if "output" in r and any(k in r for k in _TB_PROMPTS):
        return "tritonbench"
    if "func_inputs" in r or "torch_code" in r:
        return "tritonbench"
    return None


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _skipped_note(bad: list[int], what: str) -> list[str]:
    return [f"{len(bad)} rows without {what}, skipped (first: line {bad[0]})"] if bad else []


def _cudabench(p: Path, rows: list[tuple[int, dict[str, Any]]], notes: list[str]) -> LoadedBenchmark:
    tasks: dict[str, tuple[list[str], list[str]]] = {}
    bad = []
    for no, r in rows:
        name = _str(r.get("task_name")) or str(r.get("id") or "")
        code = _str(r.get("bench.cu"))
        prompts = [_str(r.get(f"level{k}_prompt")) for k in (1, 2, 3)]
        if not name or not (code or any(prompts)):
            bad.append(no)
            continue
        codes, ps = tasks.setdefault(name, ([], []))
        for text, into in [(code, codes), *((pr, ps) for pr in prompts)]:
            if text and text not in into:
                into.append(text)
    items = [BenchmarkItem("cudabench", name, code=c, prompts=pr) for name, (c, pr) in tasks.items()]
    return _result(p, "cudabench", items, notes + _skipped_note(bad, "task_name and bench.cu"))


def _files(v: Any) -> list[str]:
    """Contents of a ComputeEval file list (`[{path, content}]`), a solution object or a string."""
    if isinstance(v, str):
        return [v]
    if isinstance(v, dict):
        return _files(v.get("files")) + ([v["content"]] if isinstance(v.get("content"), str) else [])
    if isinstance(v, list):
        return [t for x in v for t in _files(x)]
    return []


def _computeeval(p: Path, rows: list[tuple[int, dict[str, Any]]], notes: list[str]) -> LoadedBenchmark:
    items, bad = [], []
    for no, r in rows:
        task_id, prompt = _str(r.get("task_id")), _str(r.get("prompt"))
        code = [t for k in ("declaration", "context_files", "baseline_solution",
                            "canonical_solution", "solution") for t in _files(r.get(k)) if t.strip()]
        if not task_id or not (prompt or code):
            bad.append(no)
            continue
        lang = "python" if r.get("type") == "cuda_python" else "cuda"
        items.append(BenchmarkItem("computeeval", task_id, code=code,
                                   prompts=[prompt] if prompt else [], language=lang))
    return _result(p, "computeeval", items, notes + _skipped_note(bad, "task_id and prompt"))


def _tritonbench(p: Path, rows: list[tuple[int, dict[str, Any]]], notes: list[str]) -> LoadedBenchmark:
    items, bad, ids = [], [], set()
    for no, r in rows:
        code = [t for t in (_str(r.get("output")), _str(r.get("torch_code"))) if t.strip()]
        prompts = [t for t in (_str(r.get(k)) for k in _TB_PROMPTS) if t.strip()]
        if not (code or prompts):
            bad.append(no)
            continue
        # the Alpaca-style files have no name; the G channel repeats some file names
        item_id = _str(r.get("file")) or _str(r.get("name")) or f"row{no}"
        if item_id in ids:
            item_id = f"{item_id}#{no}"
        ids.add(item_id)
        items.append(BenchmarkItem("tritonbench", item_id, code=code, prompts=prompts,
                                   language="python"))
    return _result(p, "tritonbench", items, notes + _skipped_note(bad, "code or instruction"))


def _result(p: Path, fmt: str, items: list[BenchmarkItem], notes: list[str]) -> LoadedBenchmark:
    if not items:
        raise DecontamError(f"{p}: {fmt} file with no usable row ({'; '.join(notes) or 'empty'})")
    return LoadedBenchmark(str(p), fmt, items, notes)
