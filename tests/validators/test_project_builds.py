"""Multi-file builds that nvcc accepts and `validators run --dir/--nvcc` refused (HeCBench sweep
of multi-file programs): a relative `-I` or a translation unit outside `--dir`, an `-I` folder
that does not exist, nvcc options whose value is the next word (`--default-stream per-thread`),
and sources with a byte that is not UTF-8. Real builds on the cpu backend, in subprocesses, as
`test_cpu_projects.py` runs them; each program is written here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from validators.project import parse_nvcc_line

REPO = Path(__file__).resolve().parents[2]
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

MAIN = """#include <cstdio>
{includes}
__global__ void k(int *o) {{ o[0] = 3; }}
int main() {{
  int *d, h = 0;
  cudaMalloc(&d, sizeof h);
  k<<<1, 1>>>(d);
  cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%s\\n", (h == 3 && {check}) ? "PASS" : "FAIL");
  return 0;
}}
"""


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def open_to_all(top: Path) -> None:
    # The sandbox may build as another uid: the folders it reads must be open to others.
    for d in [top, *(p for p in top.rglob("*") if p.is_dir())]:
        d.chmod(0o755)


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-m", "validators", "run", "--backend", "cpu",
                           "--json", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": path}, cwd=cwd)


def report(*args: str, cwd: Path | None = None) -> dict:
    r = run(*args, cwd=cwd)
    assert r.stdout.startswith("{"), r.stderr
    return json.loads(r.stdout)


@needs_gxx
def test_relative_include_outside_the_folder_is_used_from_where_it_is(tmp_path):
    # HeCBench aes, bfs, sobel...: `cd aes-cuda && nvcc -I../include main.cu`.
    write(tmp_path / "include" / "util.h", "inline int helper() { return 1; }\n")
    write(tmp_path / "app" / "main.cu", MAIN.format(includes='#include "util.h"',
                                                    check="helper() == 1"))
    open_to_all(tmp_path)
    rep = report("--dir", str(tmp_path / "app"), "--nvcc", "nvcc -I../include main.cu")
    assert rep["status"] == "passed", rep
    assert rep["stdout"].split() == ["PASS"]
    # Resolved as an absolute -I is: the folder itself, not a path relative to the build.
    line = parse_nvcc_line("nvcc -I ../include main.cu", tmp_path / "app")
    assert line.flags == [f"-I{(tmp_path / 'include').resolve()}"]


@needs_gxx
def test_units_outside_the_folder_build_and_the_run_stays_in_it(tmp_path):
    # HeCBench medianfilter, sptrsv, wordcount: `nvcc main.cu ../x-sycl/src/helper.cpp`. The
    # sibling unit includes a header beside it; main.cu a header of its own -I folder; the
    # program reads a data file of --dir, so the run directory is still --dir's copy.
    write(tmp_path / "x-sycl" / "src" / "helper.h", "int helper();\n")
    write(tmp_path / "x-sycl" / "src" / "helper.cpp",
          '#include "helper.h"\nint helper() { return 1; }\n')
    write(tmp_path / "app" / "inc" / "decl.h", "int helper();\n")
    write(tmp_path / "app" / "data.txt", "7\n")
    write(tmp_path / "app" / "main.cu", MAIN.format(
        includes='#include "decl.h"\nstatic int data() { int v = 0; FILE *f = '
                 'fopen("data.txt", "r"); if (f) { fscanf(f, "%d", &v); fclose(f); } '
                 'return v; }',
        check="helper() == 1 && data() == 7"))
    open_to_all(tmp_path)
    rep = report("--dir", str(tmp_path / "app"), "--nvcc",
                 "nvcc -Iinc main.cu ../x-sycl/src/helper.cpp", "--with-dir")
    assert rep["status"] == "passed", rep
    assert rep["stdout"].split() == ["PASS"]
    assert rep["sources"] == ["app/main.cu", "x-sycl/src/helper.cpp"]


def test_a_source_outside_the_folder_given_with_source_names_the_fix(tmp_path):
    write(tmp_path / "shared" / "helper.cpp", "int helper() { return 1; }\n")
    write(tmp_path / "app" / "main.cu", MAIN.format(includes="", check="1"))
    r = run("--dir", str(tmp_path / "app"), "--source", "main.cu",
            "--source", "../shared/helper.cpp")
    assert r.returncode == 2
    assert "common parent" in r.stderr and "Traceback" not in r.stderr, r.stderr


@needs_gxx
def test_an_include_folder_that_does_not_exist_is_dropped_with_a_note(tmp_path):
    # Makefiles name /opt/nvidia/hpc_sdk/..., /path/to/GSL/include: nvcc and g++ skip them.
    write(tmp_path / "app" / "util.h", "inline int helper() { return 1; }\n")
    write(tmp_path / "app" / "main.cu", MAIN.format(includes='#include "util.h"',
                                                    check="helper() == 1"))
    open_to_all(tmp_path)
    rep = report("--dir", str(tmp_path / "app"), "--nvcc",
                 "nvcc -I/opt/does/not/exist/include -I ../nowhere -Inot_here main.cu",
                 "-X=-I/also/not/there")
    assert rep["status"] == "passed", rep
    notes = "\n".join(rep["build_notes"])
    for gone in ("/opt/does/not/exist/include", "../nowhere", "not_here", "/also/not/there"):
        assert f"-I {gone} dropped: no such folder" in notes, notes


def test_nvcc_options_that_take_a_separate_value_consume_it(tmp_path):
    write(tmp_path / "main.cu", MAIN.format(includes="", check="1"))
    line = parse_nvcc_line(
        "nvcc --default-stream per-thread -default-stream legacy -ccbin g++ "
        "--compiler-bindir /usr/bin -Xptxas -v -Xlinker -rpath -maxrregcount 32 "
        "--maxrregcount=32 -rdc true -rdc=true --threads 4 -t 2 -gencode arch=compute_80,code=sm_80 "
        "--generate-code arch=compute_90,code=sm_90 -arch sm_90 -code sm_90 --std c++17 -x cu "
        "-o prog -odir obj -diag-suppress 177 -cudart static -G -lineinfo --resource-usage "
        "-res-usage -Wno-deprecated-gpu-targets -expt-relaxed-constexpr -extended-lambda "
        "--optimize 3 -use_fast_math main.cu", tmp_path)
    assert line.sources == ["main.cu"]
    assert line.flags == ["-std=c++17", "-O3"]
    dropped = {n.split()[3] for n in line.notes}
    assert {"--default-stream", "-default-stream", "-ccbin", "-odir", "-diag-suppress",
            "-cudart", "-res-usage", "-Wno-deprecated-gpu-targets"} <= dropped


@needs_gxx
def test_default_stream_per_thread_builds(tmp_path):
    # HeCBench bmf, minimap2, qem.
    write(tmp_path / "main.cu", MAIN.format(includes="", check="1"))
    open_to_all(tmp_path)
    rep = report("--dir", str(tmp_path), "--nvcc",
                 "nvcc --default-stream per-thread -odir obj main.cu")
    assert rep["status"] == "passed", rep
    assert any("--default-stream dropped" in n for n in rep["build_notes"])


LATIN1 = b"/* Copyright \xa92013 Advanced Micro Devices \xe2\x80\x94 UTF-8 too */\n"


@needs_gxx
def test_a_latin1_byte_in_a_source_or_header_builds(tmp_path):
    # HeCBench eigenvalue, myocyte, SDKBitMap.h: a Latin-1 (c) in a comment.
    write(tmp_path / "util.h", LATIN1 + b"inline int helper() { return 1; }\n")
    write(tmp_path / "other.cu", LATIN1 + b"int other() { return 2; }\n")
    write(tmp_path / "main.cu", LATIN1 + MAIN.format(
        includes='#include "util.h"\nint other();',
        check="helper() == 1 && other() == 2").encode())
    open_to_all(tmp_path)
    rep = report("--dir", str(tmp_path), "--nvcc", "nvcc main.cu other.cu")
    assert rep["status"] == "passed", rep
    assert rep["stdout"].split() == ["PASS"]
    # A program of one file too.
    single = write(tmp_path / "single" / "main.cu", LATIN1 + MAIN.format(
        includes="", check="1").encode())
    open_to_all(tmp_path)
    rep = report(str(single))
    assert rep["status"] == "passed", rep


@needs_gxx
def test_c_units_are_built_as_c_and_linked(tmp_path):
    # HeCBench's b+tree, heartwall, leukocyte, ...: `nvcc main.cu timer.c`, where nvcc hands the
    # .c unit to the host C compiler. Implicit void* conversion is C, not C++.
    top = tmp_path / "app"
    write(top / "counter.h", '#ifdef __cplusplus\nextern "C" {\n#endif\n'
          "long long *make_counter(long long start);\n"
          "#ifdef __cplusplus\n}\n#endif\n")
    write(top / "counter.c", '#include <stdlib.h>\n#include <string.h>\n#include "counter.h"\n'
          "long long *make_counter(long long start) {\n"
          "  long long *p = malloc(sizeof *p);  /* no cast: C */\n"
          "  /* __FILE__ as nvcc run in the folder names it */\n"
          '  *p = start + BONUS + 100 * (strcmp(__FILE__, "counter.c") != 0);\n'
          "  return p;\n}\n")
    write(top / "main.cu", MAIN.format(includes='#include "counter.h"',
                                       check="*make_counter(40) == 42"))
    open_to_all(tmp_path)
    for variant in ("plain", "asan"):
        out = report("--dir", str(top), "--nvcc", "nvcc -DBONUS=2 main.cu counter.c",
                     "--variant", variant)
        assert out["status"] == "passed", out
        assert out["stdout"].strip() == "PASS"


def refused(capsys, *args: str) -> str:
    """The one-line error `validators run` refuses `args` with (before any build; in this
    process, as a run that is refused builds nothing)."""
    from validators.cli import main

    assert main(["run", "--backend", "cpu", "--json", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err, err
    return err


READS_INPUT = MAIN.format(
    includes='static int input(const char *path) { int v = 0; FILE *f = fopen(path, "r"); '
             'if (!f) { printf("cannot open %s\\n", path); return -1; } fscanf(f, "%d", &v); '
             'fclose(f); return v; }',
    check="input(INPUT) == WANT")


@needs_gxx
def test_cwd_starts_the_program_in_a_folder_of_the_run_directory(tmp_path, capsys):
    # HeCBench srad, lr, snicit: `cd srad-cuda && ./main`, which opens ../data/srad/image.pgm.
    write(tmp_path / "data" / "input.txt", "42\n")
    write(tmp_path / "app" / "main.cu", READS_INPUT)
    open_to_all(tmp_path)
    build = ("--dir", str(tmp_path), "--nvcc",
             'nvcc -DINPUT=\\"../data/input.txt\\" -DWANT=42 app/main.cu', "--with-dir")
    rep = report(*build, "--cwd", "app")
    assert rep["status"] == "passed", rep
    assert rep["stdout"].split() == ["PASS"] and rep["cwd"] == "app"
    # From the top of the run directory, as without --cwd, ../data is not there.
    assert report(*build)["stdout"].split()[0] == "cannot"
    # Only a folder of the copy: not out of it, not absolute, not one that is not there.
    for bad, said in (("../data", "bad --cwd '../data'"), ("app/../..", "bad --cwd 'app/../..'"),
                      ("/tmp", "bad --cwd '/tmp'"), ("nowhere", "no folder nowhere")):
        assert said in refused(capsys, *build, "--cwd", bad)
    assert "needs --with-dir" in refused(capsys, *build[:-1], "--cwd", "app")


@needs_gxx
def test_a_file_named_as_one_of_the_folder_copy_replaces_it_with_a_note(tmp_path, capsys):
    # --file is the one file asked for, --with-dir the folder wholesale: the named file wins.
    write(tmp_path / "input.txt", "1\n")
    write(tmp_path / "sub" / "input.txt", "2\n")
    write(tmp_path / "other" / "input.txt", "3\n")
    write(tmp_path / "main.cu", READS_INPUT)
    open_to_all(tmp_path)
    build = ("--dir", str(tmp_path), "--nvcc",
             'nvcc -DINPUT=\\"input.txt\\" -DWANT=2 main.cu', "--with-dir")
    rep = report(*build, "--file", str(tmp_path / "sub" / "input.txt"))
    assert rep["status"] == "passed", rep
    assert rep["stdout"].split() == ["PASS"]
    assert any("sub/input.txt replaces 'input.txt'" in n for n in rep["notes"]), rep["notes"]
    # The folder's own file named again is copied once, without a note.
    rep = report(*build[:-2], 'nvcc -DINPUT=\\"input.txt\\" -DWANT=1 main.cu', "--with-dir",
                 "--file", str(tmp_path / "input.txt"))
    assert rep["status"] == "passed" and rep["notes"] == [], rep
    # Two --file of one name, or a file in place of a folder of the copy: refused, both named.
    one, two = tmp_path / "sub" / "input.txt", tmp_path / "other" / "input.txt"
    said = refused(capsys, *build, "--file", str(one), "--file", str(two))
    assert "would both be copied" in said and str(one) in said and str(two) in said
    write(tmp_path / "elsewhere" / "sub", "not a folder\n")
    said = refused(capsys, *build, "--file", str(tmp_path / "elsewhere" / "sub"))
    assert "take the place of the folder" in said and str(tmp_path / "sub") in said


@needs_gxx
def test_project_paths_do_not_collide_with_the_builds_own_files(tmp_path):
    # Sources in a folder `prog/` (the executable's name in the build folder) and a header
    # `cudashim_defines.h` (the file the build writes a case's sizes to) build; `__FILE__` and
    # g++'s messages name the program's own paths.
    write(tmp_path / "cudashim_defines.h", "inline int own() { return 5; }\n")
    write(tmp_path / "prog" / "inc" / "where.h", "inline const char *where() { return __FILE__; }\n")
    write(tmp_path / "prog" / "main.cu", MAIN.format(
        includes='#include <cstring>\n#include "../cudashim_defines.h"\n#include "where.h"',
        check='own() == 5 && N == 3 && !strcmp(where(), "prog/inc/where.h") '
              '&& !strcmp(__FILE__, "prog/main.cu")'))
    open_to_all(tmp_path)
    rep = report("--dir", str(tmp_path), "--nvcc", "nvcc -Iprog/inc prog/main.cu", "-D", "N=3")
    assert rep["status"] == "passed", rep
    assert rep["stdout"].split() == ["PASS"]
    write(tmp_path / "prog" / "main.cu", "int main() { return undeclared(); }\n")
    rep = report("--dir", str(tmp_path), "--nvcc", "nvcc prog/main.cu")
    assert rep["status"] == "compile_error", rep
    assert "prog/main.cu:1:" in rep["stderr"] and "cudashim_project" not in rep["stderr"], rep


HOST_UNIT = """// No CUDA header: nvcc hands this unit to the host compiler as it is (cuda-samples'
// mergeSort_host.cpp defines its own umin; cudaGraphsPerfScaling its own __globaltimer).
static unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
static unsigned long long __globaltimer() { return 7; }
int host_min(unsigned a, unsigned b) { return (int)umin(a, b) + (int)__globaltimer() - 7 + N - N; }
"""
API_UNIT = """#include <cuda_runtime.h>
#include "helper.h"
int device_sum(int n) {  // a .cpp unit that calls the runtime API builds as before
  int *d, h = 0;
  cudaMalloc(&d, sizeof h);
  cudaMemset(d, 0, sizeof h);
  cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  cudaFree(d);
  return h + n + helper(0);
}
"""
HOST_MAIN = """#include <cstdio>
int host_min(unsigned, unsigned);
int device_sum(int);
__global__ void k(int *o) { o[0] = umin(3u, 5u); }
int main() {
  int *d, h = 0;
  cudaMalloc(&d, sizeof h);
  k<<<1, 1>>>(d);
  cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%s\\n", h == 3 && host_min(4, 2) == 2 && device_sum(N) == N ? "PASS" : "FAIL");
  return 0;
}
"""


@needs_gxx
@pytest.mark.parametrize("sizes", ["compiled", "run-time"])
def test_plain_cpp_units_do_not_see_the_shims_cuda_declarations(tmp_path, sizes):
    """A `.cpp` unit that includes no CUDA header may define names the shim's cuda_runtime.h
    defines (`umin`): nvcc compiles it as plain C++. Built with the forced CUDA include it was a
    redefinition (compile_error); a unit that includes a CUDA header still gets the API, and
    both see the task's sizes, compiled in or read at run time."""
    from validators.cpu.toolchain import compile_program, runtime_sizes

    files = {"src/kernel.cu": HOST_MAIN, "src/host.cpp": HOST_UNIT, "src/api.cpp": API_UNIT,
             "inc/helper.h": "static int helper(int x) { return x; }\n"}
    units = ["src/kernel.cu", "src/host.cpp", "src/api.cpp"]
    runtime = runtime_sizes({"N": 5}, "plain") if sizes == "run-time" else None
    made = compile_program("", tmp_path / "b", files=files, units=units, defines={"N": 5},
                           runtime=runtime, extra_flags=["-Iinc"])
    assert made.ok, made.diagnostics
    env = {**os.environ, **({"CUDASHIM_SIZES": "5"} if runtime else {})}
    proc = subprocess.run([str(made.exe)], capture_output=True, text=True, timeout=60, env=env)
    assert proc.stdout.strip() == "PASS", (proc.stdout, proc.stderr)


def test_which_cpp_units_see_cuda():
    """A unit sees CUDA through a CUDA header, a program header that includes one (to any depth,
    quoted or found by `-I`), or CUDA syntax; a C header the shim wraps (<math.h>) is no CUDA."""
    from validators.cpu.toolchain import host_only_units

    files = {
        "a.cpp": '#include <math.h>\n#include <assert.h>\n#include "util.h"\nint a;\n',
        "util.h": "#include <vector>\n",
        "b.cpp": '#include "common/wrap.h"\n',
        "common/wrap.h": "#include <helper_cuda.h>\n",
        "helpers/helper_cuda.h": "#include <cuda_runtime.h>\n",
        "c.cpp": "#include <thrust/sort.h>\n",
        "d.cpp": "__device__ int f() { return 1; }\n",
        "e.cc": '#include "missing_cuda_helpers.h"\n',
        "f.cxx": '#include "cycle.h"\n',
        "cycle.h": '#include "cycle.h"\n#include <cstdio>\n',
        "g.cu": "int g;\n",
    }
    units = ["a.cpp", "b.cpp", "c.cpp", "d.cpp", "e.cc", "f.cxx", "g.cu"]
    assert host_only_units(files, units) == ["a.cpp", "f.cxx"]
