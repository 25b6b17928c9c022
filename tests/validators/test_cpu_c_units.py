"""C units of a program of several files (`nvcc main.cu host.c`, as Rodinia's b+tree, backprop,
kmeans, lud and lavaMD build): nvcc hands a .c file to the host C compiler with CUDA's include
folder on its path and links libcudart, whose runtime API has C linkage; the checking builds
check C code as they check C++ host code. And the program's folder is on the quoted include
path only, as for nvcc: a header of its own named like a system header does not replace it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.validators.test_project_builds import REPO, needs_gxx, open_to_all, write
from validators.cpu import toolchain
from validators.project import load_project

# The kernel and a C-callable launcher; the host logic is C.
LAUNCHER = """__global__ void add_one(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1;
}
extern "C" void launch_add_one(int *d, int n) { add_one<<<(n + 127) / 128, 128>>>(d, n); }
"""


def report(tmp_path: Path, folder: Path, nvcc: str, *args: str) -> dict:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "CKD_CACHE_DIR": str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, "-m", "validators", "run", "--backend", "cpu", "--json",
                        "--dir", str(folder), "--nvcc", nvcc, *args], capture_output=True,
                       text=True, timeout=300, env=env)
    assert r.stdout.startswith("{"), r.stderr
    return json.loads(r.stdout)


@needs_gxx
def test_c_units_call_the_runtime_api_with_and_without_its_header(tmp_path):
    top = tmp_path / "app"
    write(top / "main.cu", LAUNCHER)
    # No header (b+tree's main.c leaves cudaSetDevice to C89's implicit declaration, an error
    # from GCC 14 on): the call is linked by its C name.
    write(top / "setup.c", "int cudaSetDevice(int);\n"
          "int pick_device(void) { return cudaSetDevice(0); }\n")
    write(top / "host.c", r"""#include <stdio.h>
#include <cuda_runtime.h>
void launch_add_one(int *d, int n);
int pick_device(void);
int main(void) {
  int h[256], i, bad = 0, count = 0;
  int *d = NULL;
  struct cudaDeviceProp prop;
  cudaEvent_t start, stop;
  float ms = -1;
  cudaStream_t s;
  for (i = 0; i < 256; i++) h[i] = i;
  if (pick_device() != cudaSuccess || cudaGetDeviceCount(&count) != cudaSuccess) return 2;
  cudaGetDeviceProperties(&prop, 0);
  cudaStreamCreate(&s);
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaMalloc((void **)&d, sizeof h);
  cudaEventRecord(start, s);
  cudaMemcpyAsync(d, h, sizeof h, cudaMemcpyHostToDevice, s);
  cudaStreamSynchronize(s);
  launch_add_one(d, 256);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  cudaEventRecord(stop, s);
  cudaEventSynchronize(stop);
  cudaEventElapsedTime(&ms, start, stop);
  cudaFree(d);
  for (i = 0; i < 256; i++) bad += h[i] != i + 1;
  printf("%d %d %d %d\n", count, prop.warpSize, prop.maxThreadsPerBlock, ms >= 0);
  printf("%s\n", cudaGetErrorString(cudaSetDevice(count)));
  printf("%s\n", bad ? "FAIL" : "PASS");
  return bad;
}
""")
    open_to_all(tmp_path)
    rep = report(tmp_path, top, "nvcc -o t main.cu host.c setup.c")
    assert rep["status"] == "passed", rep
    assert rep["stdout"].splitlines() == ["1 32 1024 1", "invalid device ordinal", "PASS"]


@needs_gxx
def test_a_heap_overflow_in_a_c_unit_is_caught_where_it_is(tmp_path):
    top = tmp_path / "app"
    write(top / "main.cu", "#include <cstdio>\nextern \"C\" int fill(int n);\n"
          "int main() { printf(\"%d\\n\", fill(8)); }\n")
    write(top / "util.c", "#include <stdlib.h>\nint fill(int n) {\n"
          "  int *t = malloc(n * sizeof(int)), i, s = 0;\n"
          "  for (i = 0; i <= n; i++) t[i] = i;  /* writes t[n] */\n"
          "  for (i = 0; i < n; i++) s += t[i];\n  free(t);\n  return s;\n}\n")
    open_to_all(tmp_path)
    rep = report(tmp_path, top, "nvcc -o t main.cu util.c", "--variant", "asan")
    assert rep["status"] == "runtime_error", rep
    assert "heap-buffer-overflow" in rep["reason"] and "at util.c:4 in fill" in rep["reason"], rep


def test_c_units_get_the_checking_flags_of_host_code():
    for variant in toolchain.VARIANTS:
        flags = toolchain.c_unit_flags(variant)
        host = toolchain.program_flags(variant)
        assert not any(f.startswith("-std=") for f in flags)
        assert [f for f in host if f.startswith(("-O", "-g", "-fsanitize", "-fno-omit"))] == \
               [f for f in flags if f.startswith(("-O", "-g", "-fsanitize", "-fno-omit"))]
    assert "-fsanitize=address" in toolchain.c_unit_flags("asan")
    assert "-fsanitize=thread" in toolchain.c_unit_flags("race")


@needs_gxx
def test_headers_of_the_program_named_like_system_ones_do_not_replace_them(tmp_path):
    # Rodinia kmeans ships a Windows stand-in unistd.h; libstdc++ and libc include <unistd.h>
    # and <time.h> from the shim's own headers, and the program includes them itself.
    top = tmp_path / "app"
    for name in ("unistd.h", "time.h"):
        write(top / name, f'#error "the program\'s {name} taken for the system\'s"\n')
    # A header in a subfolder names one at the top with a path from there: found, rewritten.
    write(top / "kernels.h", "__global__ void seven(int *x) { x[0] = 7; }\n"
          "inline void run_seven(int *d) { seven<<<1, 1>>>(d); }\n")
    write(top / "sub" / "all.h", '#include "kernels.h"\n')
    write(top / "main.cu", """#include <cstdio>
#include <unistd.h>
#include <time.h>
#include "sub/all.h"
extern "C" int c_side(void);
int main() {
  int *d, h = 0;
  cudaMalloc(&d, sizeof h);
  run_seven(d);
  cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%s\\n", h == 7 && getpid() > 0 && time(NULL) > 0 && c_side() ? "PASS" : "FAIL");
}
""")
    write(top / "side.c", "#include <time.h>\n#include <unistd.h>\n"
          "int c_side(void) { return getpid() > 0 && time(NULL) > 0; }\n")
    open_to_all(tmp_path)
    rep = report(tmp_path, top, "nvcc -o t main.cu side.c")
    assert rep["status"] == "passed", rep
    assert rep["stdout"].split() == ["PASS"]
    # What the program's files are: a quoted name is looked up beside its includer, then in the
    # folder; <...> only in the -I folders the command names.
    write(top / "local.h", "")
    write(top / "uses.cu", '#include <local.h>\n#include "sub/all.h"\n')
    folder = top.resolve()
    plain = load_project(folder, ["uses.cu"], ["-iquote.", f"-iquote{folder}"])
    assert sorted(plain.files) == ["kernels.h", "sub/all.h", "uses.cu"]
    given = load_project(folder, ["uses.cu"], ["-I.", "-iquote.", f"-iquote{folder}"])
    assert sorted(given.files) == ["kernels.h", "local.h", "sub/all.h", "uses.cu"]


@needs_gxx
def test_a_single_file_beside_a_header_named_like_a_system_one(tmp_path):
    # `validators run main.cu`: the file's folder is searched for "..." only, as nvcc does.
    top = tmp_path / "one"
    write(top / "unistd.h", '#error "the program\'s unistd.h taken for the system\'s"\n')
    write(top / "mine.h", "#define SEVEN 7\n")
    write(top / "main.cu", '#include <cstdio>\n#include <unistd.h>\n#include "mine.h"\n'
          'int main() { printf("%s\\n", getpid() > 0 && SEVEN == 7 ? "PASS" : "FAIL"); }\n')
    open_to_all(tmp_path)
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "CKD_CACHE_DIR": str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, "-m", "validators", "run", "--backend", "cpu", "--json",
                        str(top / "main.cu")], capture_output=True, text=True, timeout=300, env=env)
    rep = json.loads(r.stdout) if r.stdout.startswith("{") else {"stderr": r.stderr}
    assert rep.get("status") == "passed" and rep["stdout"].split() == ["PASS"], rep
