"""Programs of several files on the cpu backend (issue 26, item 1), as a user runs them:
`python -m validators run --dir DIR --nvcc "nvcc ..."` or `--source` repeated, in subprocesses.

`cpu_projects/three_files` has a header with a kernel template whose launch helper uses `<<<>>>`
and dynamic shared memory, and a launch by pointer of a kernel it only declares; `solution.cu`
defines that kernel (launched with `<<<>>>` from `test/main.cu`, another translation unit) and
one with a file-scope `extern __shared__`, and a `__device__` function waiting at a barrier that
a kernel of `test/check.cu` calls; `test/check.cu` instantiates the template for another type
and checks every result on the host."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from validators.engine import _analyze
from validators.project import ProjectError, load_project, parse_nvcc_line, source_paths

PROJECT = Path(__file__).parent / "cpu_projects" / "three_files"
NVCC = "nvcc -I include -O2 -arch=sm_80 -rdc=true -o test.out solution.cu test/*.cu"

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


REPO = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    # Run from another folder, the package is found from the repository.
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-m", "validators", "run", "--backend", "cpu", *args],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path},
                          timeout=300, cwd=cwd)


def report(*args: str, cwd: Path | None = None) -> dict:
    r = cli("--json", *args, cwd=cwd)
    assert r.stdout.startswith("{"), r.stderr
    return json.loads(r.stdout)


@needs_gxx
def test_three_files_pass_from_an_nvcc_line():
    rep = report("--dir", str(PROJECT), "--nvcc", NVCC, "--", "777")
    assert rep["status"] == "passed", rep["stderr"]
    assert rep["stdout"].split() == ["n=777", "PASS"]
    assert rep["sources"] == ["solution.cu", "test/check.cu", "test/main.cu"]
    notes = "\n".join(rep["build_notes"])
    assert "-arch=sm_80 dropped" in notes and "-rdc=true dropped" in notes


@needs_gxx
def test_sources_given_one_by_one_under_the_race_build(tmp_path):
    # Paths from the working directory, no --dir: the first source's folder is the program's.
    # The race build compiles each translation unit apart and links them after.
    rep = report("--source", "three_files/solution.cu", "--source", "three_files/test/main.cu",
                 "--source", "three_files/test/check.cu", "-X=-Ithree_files/include",
                 "--variant", "race", "--schedule", "reverse", cwd=PROJECT.parent)
    assert rep["status"] == "passed", rep["stderr"]
    assert rep["sources"] == ["solution.cu", "test/main.cu", "test/check.cu"]


@needs_gxx
def test_a_header_change_rebuilds(tmp_path):
    folder = tmp_path / "proj"
    shutil.copytree(PROJECT, folder)
    args = ("--dir", str(folder), "--nvcc", NVCC)
    assert report(*args)["status"] == "passed"
    assert report(*args)["build_cached"] is True
    header = folder / "include" / "scale.cuh"
    header.write_text(header.read_text().replace("x[i] * factor", "x[i] * factor * 2"))
    rep = report(*args)
    assert rep["build_cached"] is False
    assert rep["status"] == "runtime_error" and "mismatch" in rep["stdout"]


@pytest.mark.parametrize("line, said", [
    ("nvcc -o test.out", "names no source file"),
    ("nvcc -I include solution.cu test/missing.cu", "'test/missing.cu' in --nvcc"),
    ("nvcc solution.cu include/scale.cuh", "'include/scale.cuh' in --nvcc"),
    ("nvcc solution.cu && ./a.out", "'&&' joins several commands"),
    ("nvcc ../outside.cu", "not found"),
    ("nvcc -I", "-I needs a value"),
])
def test_a_bad_nvcc_line_is_named(line, said):
    r = cli("--dir", str(PROJECT), "--nvcc", line)
    assert r.returncode == 2
    assert said in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_dir_without_sources_and_both_forms_are_refused():
    r = cli("--dir", str(PROJECT))
    assert r.returncode == 2 and "--dir needs --nvcc" in r.stderr
    r = cli("--dir", str(PROJECT), "--nvcc", NVCC, "--source", "solution.cu")
    assert r.returncode == 2 and "not both" in r.stderr
    r = cli("solution.cu", "--dir", str(PROJECT), "--nvcc", NVCC)
    assert r.returncode == 2 and "arguments go after --" in r.stderr


def test_nvcc_line_flags():
    line = parse_nvcc_line("nvcc -I include -Iinclude -DN=4 -D M=2 -std=c++17 -lm -O3 "
                           "-Xcompiler -fopenmp -gencode arch=compute_80,code=sm_80 "
                           "--extended-lambda -lineinfo test/m*.cu solution.cu", PROJECT)
    assert line.sources == ["test/main.cu", "solution.cu"]
    assert line.flags == ["-Iinclude", "-Iinclude", "-DN=4", "-DM=2", "-std=c++17", "-lm",
                          "-O3", "--compiler-options=-fopenmp"]
    assert [n.split()[3] for n in line.notes] == ["-gencode", "--extended-lambda", "-lineinfo"]


def test_every_file_is_analysed():
    line = parse_nvcc_line(NVCC, PROJECT)
    program = load_project(PROJECT, line.sources, line.flags)
    assert set(program.files) == {"solution.cu", "test/main.cu", "test/check.cu",
                                  "test/check.h", "include/scale.cuh"}
    launches, _, _ = _analyze(program.sources_text())
    # <<<>>> in the header, solution.cu, main.cu and check.cu; cudaLaunchKernel in the header.
    assert launches == 5
    with pytest.raises(ProjectError, match="outside the program's folder"):
        source_paths(PROJECT, [str(PROJECT.parents[1] / "cpu_programs" / "idioms.cu")])


TWO_FILES = Path(__file__).parent / "cpu_projects" / "two_files"


def axpb_task(b: float) -> str:
    from schemas import InputCase, Reference, Task, TensorSpec

    return Task(
        name="axpb", description="y = 2 x + b",
        inputs=[TensorSpec(name="x", dtype="float32", shape=["N"])],
        outputs=[TensorSpec(name="y", dtype="float32", shape=["N"])],
        sizes={"N": 1000}, cases=[InputCase(name="default", seed=1),
                                  InputCase(name="odd", seed=2, sizes={"N": 333})],
        reference=Reference(code=f"def reference(inputs, sizes):\n"
                                 f"    return {{'y': 2 * inputs['x'] + {b!r}}}\n"),
    ).to_json()


def check_cli(*args: str) -> subprocess.CompletedProcess:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-m", "validators", "check", "--backend", "cpu", *args],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path},
                          timeout=300)


@needs_gxx
def test_check_takes_a_program_of_several_files(tmp_path):
    """`validators check` judged one file: the kernel of `kernels.cu`, which `main.cu` calls
    through a header of `include/`, is now part of the checked program."""
    nvcc = "nvcc -I include -O2 -arch=sm_80 -o axpb main.cu kernels.cu"
    verdicts = {}
    for b in (1.0, 2.0):  # the program computes 2 x + 1
        task = tmp_path / f"task{b}.json"
        task.write_text(axpb_task(b))
        r = check_cli("--task", str(task), "--dir", str(TWO_FILES), "--nvcc", nvcc, "--json", "--fast")
        assert r.stdout.startswith("{"), r.stderr
        verdicts[b] = (r.returncode, json.loads(r.stdout))
    code, result = verdicts[1.0]
    assert code == 0 and result["status"] == "passed", result["reason"]
    assert [c["status"] for c in result["cases"]] == ["passed", "passed"]
    code, result = verdicts[2.0]
    assert code == 1 and result["status"] == "failed", result["reason"]


def test_check_refuses_a_program_given_twice(tmp_path):
    task = tmp_path / "task.json"
    task.write_text(axpb_task(1.0))
    r = check_cli("--task", str(task), "--program", str(TWO_FILES / "main.cu"),
                  "--dir", str(TWO_FILES), "--source", "main.cu")
    assert r.returncode == 2 and "give --program or --nvcc/--source, not both" in r.stderr, r.stderr
    r = check_cli("--task", str(task), "--dir", str(TWO_FILES))
    assert r.returncode == 2 and "--dir needs --nvcc COMMAND or --source PATH" in r.stderr, r.stderr
