"""`python -m validators check` and `run`, as a user runs them (subprocesses)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from engine_programs import KERNEL_VECADD, vecadd_task

from schemas import ValidationResult

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")


@pytest.fixture(scope="module")
def env() -> dict[str, str]:
    return dict(os.environ)  # the user's cache, as a user runs it (warm runtimes and probe)


@pytest.fixture
def files(tmp_path) -> tuple[Path, Path]:
    task = tmp_path / "task.json"
    task.write_text(vecadd_task().to_json(indent=2))
    prog = tmp_path / "vecadd.cu"
    prog.write_text(KERNEL_VECADD.source)
    return task, prog


def cli(env, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "validators", *args], capture_output=True,
                          text=True, env=env, timeout=300)


def _cpu_available() -> bool:
    try:
        from validators.backends import get_backend

        get_backend("cpu")
        return True
    except Exception:
        return False


def test_check_cuda_prints_table_and_writes_result(env, files, tmp_path):
    from validators.backends.cuda import probe_gpu

    task, prog = files
    out = tmp_path / "result.json"
    r = cli(env, "check", "--task", str(task), "--program", str(prog), "--backend", "cuda",
            "--out", str(out))
    result = ValidationResult.parse(out.read_text())
    assert result.backend == "cuda" and len(result.cases) == 2
    assert "case0" in r.stdout and "case1" in r.stdout
    if not probe_gpu().ok:
        assert r.returncode == 1 and result.status == "needs_gpu" and "needs_gpu" in r.stdout
        assert "Traceback" not in r.stderr


@pytest.mark.skipif(not _cpu_available(), reason="cpu backend not available")
def test_check_cpu_json_passes(env, files):
    task, prog = files
    r = cli(env, "check", "--task", str(task), "--program", str(prog), "--backend", "cpu",
            "--json", "--fast")
    assert r.returncode == 0, r.stderr + r.stdout
    result = ValidationResult.parse(r.stdout)
    assert result.status == "passed" and result.cases_passed == 2


def test_bad_task_json_is_one_line_error(env, files, tmp_path):
    _, prog = files
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "x", "description": "d"}))
    r = cli(env, "check", "--task", str(bad), "--program", str(prog))
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: invalid Task in {bad}")
    assert "inputs: Field required" in lines[0]
    bad.write_text("{not json")
    r = cli(env, "check", "--task", str(bad), "--program", str(prog))
    assert r.returncode == 2 and "error: invalid Task" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("which", ["task", "program"])
def test_missing_files(env, files, which):
    task, prog = files
    args = ["--task", "/nonexistent/t.json" if which == "task" else str(task),
            "--program", "/nonexistent/p.cu" if which == "program" else str(prog)]
    r = cli(env, "check", *args)
    assert r.returncode == 2 and r.stderr.startswith(f"error: {which} file not found")


def test_unavailable_backend_is_one_line_error(env, files):
    task, prog = files
    r = cli({**env, "CKD_NVCC": "/nonexistent/nvcc"}, "check", "--task", str(task),
            "--program", str(prog), "--backend", "cuda")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == ("error: backend 'cuda' is unavailable: "
                                "CKD_NVCC=/nonexistent/nvcc is not an executable file")


def test_unknown_backend(env, files):
    task, prog = files
    r = cli(env, "check", "--task", str(task), "--program", str(prog), "--backend", "tpu")
    assert r.returncode == 2 and "invalid choice: 'tpu'" in r.stderr


def test_run_standalone_program_with_folder_and_flags(env, tmp_path):
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "util.h").write_text("#define SCALE 3\n")
    (folder / "input.txt").write_text("14\n")
    (folder / "main.cu").write_text(
        '#include <cstdio>\n#include "util.h"\n'
        "int main(int argc, char** argv) { FILE* f = fopen(\"input.txt\", \"r\"); int v = 0;\n"
        "  if (!f || fscanf(f, \"%d\", &v) != 1) return 5;\n"
        "  printf(\"%s %d %d\\n\", argv[1], v * SCALE, EXTRA); return 0; }\n")
    backend = "cpu" if _cpu_available() else "cuda"
    r = cli(env, "run", str(folder / "main.cu"), "--backend", backend, "--with-dir",
            "--flag=-DEXTRA=9", "--timeout", "60", "--json", "--", "hello")
    report = json.loads(r.stdout)
    assert report["backend"] == backend and report["build_seconds"] > 0
    if backend == "cpu":
        assert r.returncode == 0 and report["status"] == "passed", report
        assert report["stdout"].strip() == "hello 42 9" and report["exit_code"] == 0
        r = cli(env, "run", str(folder / "main.cu"), "--backend", backend, "--with-dir",
                "--flag=-DEXTRA=9", "--expect", "PASS", "--", "hello")
        assert r.returncode == 1 and r.stdout.startswith("failed:") and "'PASS'" in r.stdout
        # Options before PROG: the program's arguments after `--` (even option-like ones) are
        # still the program's, not ours.
        r = cli(env, "run", "--backend", backend, "--with-dir", "--flag=-DEXTRA=9", "--json",
                str(folder / "main.cu"), "--", "--timeout")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["stdout"].strip() == "--timeout 42 9"
    else:
        assert report["status"] == "needs_gpu"


def test_run_errors(env, tmp_path):
    r = cli(env, "run", str(tmp_path / "missing.cu"))
    assert r.returncode == 2 and r.stderr.startswith("error: program file not found")
    folder = tmp_path / "prog"  # readable by the sandbox's unprivileged build user
    folder.mkdir(mode=0o755)
    prog = folder / "p.cu"
    prog.write_text("int main() { return x; }\n")
    r = cli(env, "run", str(prog), "--backend", "cuda")
    assert r.returncode == 1 and r.stdout.startswith("compile_error:")


HECBENCH = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "hecbench"


@pytest.mark.skipif(not (HECBENCH / "reverse-cuda" / "main.cu").is_file(),
                    reason="shared HeCBench data not present")
def test_run_hecbench_program_on_cuda_backend(env):
    from validators.backends.cuda import probe_gpu

    r = cli(env, "run", str(HECBENCH / "reverse-cuda" / "main.cu"), "--backend", "cuda",
            "--flag=-std=c++17", "--json", "--", "2")
    report = json.loads(r.stdout)
    assert report["build_seconds"] > 0 and report["status"] != "compile_error", report
    if not probe_gpu().ok:
        assert report["status"] == "needs_gpu" and r.returncode == 1
