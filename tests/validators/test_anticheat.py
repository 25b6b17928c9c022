"""anticheat.py units: static checks, access-log reading, degenerate outputs, input hashes."""

from __future__ import annotations

import numpy as np

from schemas import InputCase, Reference, Task, TensorSpec
from validators import anticheat as ac

TASK = Task(
    name="t", description="d",
    inputs=[TensorSpec(name="a", dtype="float32", shape=[4]),
            TensorSpec(name="w", dtype="float32", shape=[4], read_only=False)],
    outputs=[TensorSpec(name="c", dtype="float32", shape=[4])],
    cases=[InputCase(name="c0", seed=0)],
    reference=Reference(code="def reference(i, s):\n    return {}\n"),
)


def test_no_kernel_launch():
    assert "no kernel launch" in ac.no_kernel_launch("int main(){}", 0, [])
    assert ac.no_kernel_launch("int main(){}", 1, []) == ""
    assert ac.no_kernel_launch("cudaLaunchKernel((void*)k, g, b, args, 0, 0);", 0, []) == ""
    assert ac.no_kernel_launch("cublasSgemm(...)", 0, ["cublas"]) == ""
    # Launches the parser cannot read as one still count (the text decides); one in a
    # comment or a string does not.
    assert ac.no_kernel_launch("k<<<1, 4\n#ifdef X\n, 64\n#endif\n>>>(d);", 0, []) == ""
    assert ac.no_kernel_launch("CUERR\n  k <<< 1, 4 >>>\n    (d);", 0, []) == ""
    assert "no kernel launch" in ac.no_kernel_launch("// k<<<1, 1>>>(d);\nint main(){}", 0, [])
    assert "no kernel launch" in ac.no_kernel_launch('puts("k<<<1,1>>>(d)");', 0, [])


def test_hardcoded_table_threshold():
    big = "float t[] = {" + ", ".join(f"{i}.0f" for i in range(300)) + "};"
    assert "300 float literals at line 1" in ac.hardcoded_table(big)
    small = "const float g[9] = {0.1f, 0.2f, .1, 1e-3, 2.5e+2f, 1.f, 3., 4.0, 5.5};"
    assert ac.hardcoded_table(small) == ""
    ints = "int sbox[] = {" + ", ".join(str(i) for i in range(512)) + "};"
    assert ac.hardcoded_table(ints) == ""  # integer tables (S-boxes, CRC) are real code


def test_literal_file_paths():
    allowed = ac.allowed_files(TASK)
    ok = 'fopen("data/a.bin", "rb"); std::ofstream o("data/c.bin"); fopen("./data/w.bin", "r");'
    assert ac.literal_file_paths(ok, allowed) == ""
    assert "'/etc/passwd' (line 2)" in ac.literal_file_paths('\nfopen("/etc/passwd", "r");', allowed)
    assert "'data/expected.bin'" in ac.literal_file_paths('std::ifstream f("data/expected.bin");', allowed)
    assert ac.literal_file_paths('sprintf(p, "data/%s.bin", n); fopen(p, "rb");', allowed) == ""
    # The head of a path built at run time is no path: the access log judges what it opens.
    built = 'std::ifstream in("./data/" + name + ".bin", std::ios::binary);'
    assert ac.literal_file_paths(built, allowed) == ""


def test_access_log(tmp_path):
    (tmp_path / ac.ACCESS_LOG).write_text(
        "r\tdata/a.bin\nr\t/usr/lib/x86_64-linux-gnu/libm.so.6\nw\tdata/c.bin\nr\t/proc/self/maps\n"
        f"r\t{tmp_path}/data/w.bin\nd\tdata/c.bin\ngarbage line\n")
    entries = ac.read_access_log(tmp_path)
    assert len(entries) == 6
    assert ac.access_reasons(entries, tmp_path, TASK) == []


def test_access_log_reasons(tmp_path):
    entries = [("r", "data/a.bin"), ("r", "/home/user/secret"), ("r", "linux-vdso.so.1"), ("r", "../other/data/a.bin"),
               ("net", "inet"), ("d", "/etc/important"), ("r", "/home/user/secret")]
    reasons = ac.access_reasons(entries, tmp_path, TASK)
    assert reasons == [
        "opened a file outside its work directory: /home/user/secret",
        "opened a file outside its work directory: ../other/data/a.bin",
        "opened a network socket (inet)",
        "removed or renamed a file outside its work directory: /etc/important",
        "never read input w (data/w.bin): outputs cannot depend on it",
    ]


def test_extra_allowed_prefixes(tmp_path):
    entries = [("r", "data/a.bin"), ("r", "data/w.bin"), ("r", "/cache/builds/ab/prog")]
    assert ac.access_reasons(entries, tmp_path, TASK, extra_allowed=("/cache/builds/ab/",)) == []
    assert ac.access_reasons(entries, tmp_path, TASK) == [
        "opened a file outside its work directory: /cache/builds/ab/prog"]


def test_missing_log_skips_dynamic_checks(tmp_path):
    assert ac.read_access_log(tmp_path) is None
    assert ac.access_reasons(None, tmp_path, TASK) == []


def test_degenerate_outputs():
    ref = np.arange(4, dtype=np.float32)
    assert "all zeros" in ac.degenerate_output("c", np.zeros(4, np.float32), ref)
    assert "constant (2.0)" in ac.degenerate_output("c", np.full(4, 2, np.float32), ref)
    assert ac.degenerate_output("c", ref + 1, ref) == ""
    assert ac.degenerate_output("c", np.zeros(4), np.zeros(4)) == ""  # the reference is zero too
    assert ac.degenerate_output("c", np.zeros(1), np.ones(1)) == ""  # a scalar output


def test_modified_inputs_respect_read_only(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.bin").write_bytes(b"1234")
    (tmp_path / "data" / "w.bin").write_bytes(b"5678")
    before = ac.input_digests(tmp_path, TASK)
    (tmp_path / "data" / "w.bin").write_bytes(b"0000")  # not read-only: allowed
    assert ac.modified_inputs(before, tmp_path, TASK) == []
    (tmp_path / "data" / "a.bin").unlink()
    assert ac.modified_inputs(before, tmp_path, TASK) == ["read-only input a was modified (data/a.bin)"]
    (tmp_path / "orig").write_bytes(b"1234")
    (tmp_path / "data" / "a.bin").symlink_to(tmp_path / "orig")  # same bytes, behind a link
    assert ac.modified_inputs(before, tmp_path, TASK) == ["read-only input a was modified (data/a.bin)"]


def test_shim_builds_and_is_cached(tmp_path):
    import shutil

    if shutil.which("gcc") is None:
        return
    from validators.build_cache import BuildCache

    cache = BuildCache(tmp_path)
    lib = ac.shim_library(cache)
    assert lib is not None and lib.is_file() and ac.shim_library(cache) == lib


def test_only_curands_host_api_counts_as_work_without_a_launch():
    """A kernel that draws with `curand_init`/`curand_uniform` is the program's own work: the
    kernel-dependence run must still happen. Only the host generators fill memory without one."""
    from validators.analysis import analyze

    device = analyze("#include <curand_kernel.h>\n__global__ void k(float* o) { curandState s;"
                     " curand_init(7, threadIdx.x, 0, &s); o[threadIdx.x] = curand_uniform(&s)"
                     " + (float)curand(&s); }\n").features
    host = analyze("#include <curand.h>\nvoid f(float* d) { curandGenerator_t g;"
                   " curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);"
                   " curandGenerateUniform(g, d, 8); }\n").features
    assert "curand" not in device and "curand_device" in device
    assert "curand" in host
    assert not ac.LIBRARY_FEATURES & set(device)
    assert "no kernel launch" in ac.no_kernel_launch("int main(){}", 0, device)
    assert ac.no_kernel_launch("int main(){}", 0, host) == ""
