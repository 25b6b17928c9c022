"""Run a benchmark's own Python (`gen.py`, `compare.py`) in the sandbox, and cache what
`gen.py` writes.

Both scripts are untrusted. They run like CUDABench runs them (as `__main__`, cwd = the work
directory, `data/` made beforehand), under `run_sandboxed` with the Python installation
exposed read-only (NumPy, torch on the CPU, SciPy and Pillow import), one thread each and
room for torch's address space. What contains them is the sandbox: no network, a read-only
root, `/tmp`, `/home`, `/root`, `$HOME` and the cache root covered, only the work directory
writable. Reading world-readable system files is not policed (Python itself reads assorted
files under `/etc`, which differ between hosts). The access-logging shim
(`validators.anticheat`) is preloaded so that a script that tries to open an internet socket
is refused as a harness error even when its run succeeded: it was trying to send something.

`gen.py`'s results are cached under `<cache root>/cudabench/` by (row id, sha256 of gen.py):
every regular file it wrote in its work directory except itself, dot-files and `__pycache__`.
A failure is not cached (it may be a timeout under load).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from ..anticheat import ACCESS_LOG, read_access_log, shim_library
from ..backends import RunOutcome
from ..build_cache import BuildCache, cache_root
from ..sandbox import (
    READY_LINE,
    Limits,
    harness_failure,
    harness_reached,
    python_executable,
    python_prefixes,
    run_sandboxed,
    workspace,
)
from ..torch_module import TORCH_ENV

GEN_VERSION = 1
SCRIPT_LIMITS = Limits(cpu_seconds=120, wall_seconds=180, memory_bytes=16 << 30,
                       file_size_bytes=2 << 30, max_processes=64, output_bytes=256 << 10,
                       disk_bytes=8 << 30)
# `python -I -c`: a script path would be made absolute; running by a relative name via runpy
# also sets `__name__ == "__main__"`, which CUDABench's scripts test.
RUNNER = ("import runpy, sys; sys.argv = [sys.argv[1]]; " + READY_LINE
          + "; runpy.run_path(sys.argv[0], run_name='__main__')")


class ScriptError(RuntimeError):
    """A benchmark script failed or misbehaved; the message (one line) says how."""


def _first_line(text: str, limit: int = 300) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:limit] if lines else ""


def _network_attempts(work: Path) -> list[str]:
    entries = read_access_log(work) or []
    return sorted({f"opened a network socket ({target})" for kind, target in entries
                   if kind == "net"})


def place_file(work: Path, rel: str, data: bytes) -> None:
    """Write `work/rel` without following anything a program planted there.

    A program ran in `work` before compare.py and the restored references are written: a
    symbolic link at the name, or at a folder on the way, would make this process (outside
    the sandbox) write wherever it points. Such entries are removed first.
    """
    current = work
    parts = Path(rel).parts
    for part in parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            current.unlink()
        current.mkdir(exist_ok=True)
    dest = current / parts[-1]
    if dest.is_symlink() or dest.is_file():
        dest.unlink()
    elif dest.exists():
        shutil.rmtree(dest)
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def run_script(name: str, code: str, work: Path, *, limits: Limits = SCRIPT_LIMITS) -> RunOutcome:
    """Run `code` as `work/<name>` in the sandbox; raises ScriptError when it fails, and
    HarnessError (the validator's failure) when the interpreter never reached the script."""
    place_file(work, name, code.encode("utf-8", "surrogatepass"))
    prefixes = python_prefixes()
    shim = shim_library(BuildCache())
    env = {**TORCH_ENV, "MPLBACKEND": "Agg"}
    if shim is not None:
        env["CKD_ACCESS_LOG"] = str(work / ACCESS_LOG)
    out = run_sandboxed([python_executable(), "-I", "-c", RUNNER, name], work, limits=limits, env=env,
                        expose=prefixes, preload=shim)
    failed = out.timed_out or out.limit_hit or out.exit_code != 0
    if failed and not harness_reached(out.stderr):
        raise harness_failure(name, out.stderr, out.exit_code)
    problems = _network_attempts(work)
    if problems:
        raise ScriptError(f"{name} refused: {'; '.join(problems)}")
    if out.timed_out:
        raise ScriptError(f"{name} timed out after {out.seconds:.0f}s")
    if out.limit_hit:
        raise ScriptError(f"{name} hit the sandbox {out.limit_hit} limit")
    if out.exit_code != 0:
        why = _first_line(out.stderr) or f"exit code {out.exit_code}"
        raise ScriptError(f"{name} failed: {why}")
    return out


def _wanted(rel: Path, script: str) -> bool:
    if rel.as_posix() == script:
        return False
    return not any(part.startswith(".") or part == "__pycache__" for part in rel.parts)


def produced_files(work: Path, script: str) -> dict[str, bytes]:
    """Regular files a script left in `work` (relative POSIX path -> bytes). Links, FIFOs and
    devices are skipped, no path component below `work` is followed, and the walk and the
    bytes read are bounded (`validators.caps.Caps.copy_files` / `copy_bytes`): the script is
    untrusted and shaped the folder."""
    import stat as stat_mod

    from ..caps import Caps
    from ..safe_fs import UnsafePath, read_regular, walk_entries

    caps = Caps.from_env()
    found: dict[str, bytes] = {}
    total = 0
    for seen, (path, st) in enumerate(walk_entries(work)):
        if seen >= caps.copy_files * 4 or len(found) >= caps.copy_files:
            break
        if not stat_mod.S_ISREG(st.st_mode):
            continue
        rel = Path(path).relative_to(work)
        if not _wanted(rel, script):
            continue
        try:
            data = read_regular(work, rel, caps.copy_bytes - total)
        except (UnsafePath, OSError):
            continue
        total += len(data)
        found[rel.as_posix()] = data
    return dict(sorted(found.items()))


def _gen_key(row_id: object, gen_py: str) -> str:
    gen_sha = hashlib.sha256(gen_py.encode("utf-8", "surrogatepass")).hexdigest()
    blob = json.dumps({"v": GEN_VERSION, "row": str(row_id), "gen": gen_sha}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def generated_data(row_id: object, gen_py: str, *, cache_dir: Path | None = None,
                   use_cache: bool = True) -> tuple[Path, bool]:
    """(a directory holding what gen.py wrote, whether it came from the cache).

    The directory is a cache entry: read it, never modify it.
    """
    root = Path(cache_dir) if cache_dir is not None else cache_root() / "cudabench"
    key = _gen_key(row_id, gen_py)
    entry = root / key[:2] / key
    if use_cache and (entry / "meta.json").is_file():
        return entry / "files", True
    with workspace(Limits(), prefix="ckd-cbgen-") as d:
        work = Path(d) / "gen"
        (work / "data").mkdir(parents=True)
        run_script("gen.py", gen_py, work)
        files = produced_files(work, "gen.py")
        if not files:
            raise ScriptError("gen.py wrote no files")
        entry.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(root, 0o700)  # the cache root is covered in the sandbox; keep others out too
        tmp = Path(tempfile.mkdtemp(prefix=".gen-", dir=entry.parent))
        try:
            for rel, data in files.items():
                dest = tmp / "files" / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)
            (tmp / "files").mkdir(exist_ok=True)
            (tmp / "meta.json").write_text(json.dumps({"row": str(row_id), "files": sorted(files)}))
            if entry.exists():
                shutil.rmtree(entry, ignore_errors=True)  # a stale entry (use_cache=False)
            try:
                os.rename(tmp, entry)
            except OSError:
                pass  # another writer published the same content first
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return entry / "files", False
