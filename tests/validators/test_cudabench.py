"""The CUDABench-format harness on tasks of our own (tests/validators/cudabench_tasks.py):
real gen.py / compare.py in the real sandbox, real programs built and run on the cpu backend."""

from __future__ import annotations

import dataclasses
import json
import socket
import threading

import pytest
from cudabench_tasks import rows, vecadd_cu, vecadd_peek_cu, write_jsonl

from schemas import Status
from validators.cudabench import (
    CudaBenchError,
    CudaBenchScale,
    check,
    generated_data,
    load_jsonl,
    load_report,
    split_generated,
)
from validators.sandbox import Limits


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return load_jsonl(write_jsonl(tmp_path_factory.mktemp("cb") / "bench.jsonl"))


@pytest.fixture(scope="module")
def gen_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cbgen")


def _task(bench, name: str):
    return next(t for t in bench if t.task_name == name)


def _vecadd(bench) -> CudaBenchScale:
    return _task(bench, "Vector_Add").scales[0]


def _with(scale: CudaBenchScale, **changes: object) -> CudaBenchScale:
    """The same row with other scripts, under a fresh id so the gen cache keys differ."""
    return dataclasses.replace(scale, row_id=f"{scale.row_id}-{len(str(changes))}-"
                               f"{abs(hash(str(changes)))}", **changes)


# --- loading ------------------------------------------------------------------------------------

def test_rows_grouped_by_task_and_ordered_by_id(tmp_path):
    items = rows()
    path = write_jsonl(tmp_path / "b.jsonl", list(reversed(items)))
    tasks = load_jsonl(path)
    assert [t.task_name for t in tasks] == ["Row_Sum", "ReLU", "Vector_Add"]
    add = tasks[2]
    assert [s.row_id for s in add.scales] == [0, 1, 2, 3, 4]
    assert add.prompt == "Add two float32 vectors a and b of length 64 into c."
    assert add.scales[4].prompt(1).endswith("length 1024 into c.")
    assert add.scales[0].inputs == ["a", "b"] and add.scales[0].outputs == ["c"]
    assert "__global__" in add.scales[0].bench_cu and add.scales[0].raw["gpu"] == "unknown"


@pytest.mark.parametrize("line,why", [
    ("{not json", "line 3: Expecting property name"),
    (json.dumps({"id": 99, "task_name": "x"}), "line 3: missing field(s) gen.py, compare.py, outputs"),
    (json.dumps([1, 2]), "line 3: a row must be a JSON object"),
    (json.dumps({**rows()[0], "id": 1}), "line 3: duplicate id 1"),
    (json.dumps({**rows()[0], "id": 50, "outputs": [{"name": "../c"}]}), "line 3: 'outputs' holds"),
])
def test_malformed_line_is_a_one_line_error_naming_it(tmp_path, line, why):
    good = [json.dumps(r) for r in rows()[:2]]
    path = tmp_path / "b.jsonl"
    path.write_text("\n".join([*good, line]) + "\n")
    with pytest.raises(CudaBenchError) as err:
        load_jsonl(path)
    msg = str(err.value)
    assert why in msg and str(path) in msg and "\n" not in msg
    report = load_report(path, skip_malformed=True)
    assert report.skipped == 1 and report.rows == 2 and why in report.first_error


def test_unreadable_or_empty_file_is_a_one_line_error(tmp_path):
    with pytest.raises(CudaBenchError, match="cannot read the benchmark file"):
        load_jsonl(tmp_path / "missing.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(CudaBenchError, match="holds no tasks"):
        load_jsonl(tmp_path / "empty.jsonl")


def test_hidden_reference_rule_splits_what_gen_wrote(bench):
    scale = _vecadd(bench)
    given, hidden = split_generated(["data/a.bin", "data/b.bin", "data/ref_c.bin", "ref/x"], scale)
    assert given == ["data/a.bin", "data/b.bin"] and hidden == ["data/ref_c.bin", "ref/x"]


# --- the reference programs ---------------------------------------------------------------------

@pytest.mark.parametrize("name", ["Vector_Add", "ReLU", "Row_Sum"])
def test_reference_program_passes_at_the_smallest_scale(bench, gen_cache, name):
    scale = _task(bench, name).scales[0]
    result = check(scale, scale.bench_cu, "cpu", gen_cache_dir=gen_cache)
    assert result.status == Status.PASSED, result.reason
    assert result.backend == "cpu" and result.task == name and result.compile.ok
    assert [c.case for c in result.cases] == [str(scale.row_id)]


def test_reference_program_passes_at_every_scale(bench, gen_cache):
    for scale in _task(bench, "Row_Sum").scales:
        result = check(scale, scale.bench_cu, "cpu", gen_cache_dir=gen_cache)
        assert result.status == Status.PASSED, (scale.row_id, result.reason)


def test_reference_program_at_a_larger_scale_fails_a_smaller_one(bench, gen_cache):
    add = _task(bench, "Vector_Add")
    result = check(add.scales[0], add.scales[4].bench_cu, "cpu", gen_cache_dir=gen_cache)
    assert result.status in (Status.FAILED, Status.RUNTIME_ERROR), result.reason
    assert result.status != Status.PASSED


def test_gen_outputs_are_cached_per_row_and_script(bench, tmp_path):
    scale = _vecadd(bench)
    first, cached = generated_data(scale.row_id, scale.gen_py, cache_dir=tmp_path)
    assert not cached
    assert sorted(p.name for p in first.rglob("*.bin")) == ["a.bin", "b.bin", "ref_c.bin"]
    again, cached = generated_data(scale.row_id, scale.gen_py, cache_dir=tmp_path)
    assert cached and again == first
    _, cached = generated_data(scale.row_id, scale.gen_py + "\n# changed\n", cache_dir=tmp_path)
    assert not cached


# --- wrong and cheating programs ----------------------------------------------------------------

def test_off_by_one_program_fails(bench, gen_cache):
    result = check(_vecadd(bench), vecadd_cu(64, wrong=True), "cpu", gen_cache_dir=gen_cache)
    assert result.status == Status.FAILED
    assert result.reason == "compare.py printed F: the outputs differ from the reference"


def test_program_reading_the_reference_is_rejected(bench, gen_cache):
    result = check(_vecadd(bench), vecadd_peek_cu(64), "cpu", gen_cache_dir=gen_cache)
    assert result.status == Status.REJECTED
    assert result.reason == "tried to read the hidden reference file data/ref_c.bin"


FORGER = vecadd_cu(64).replace(
    'save("data/c.bin", c, sizeof c);',
    'for (int i = 0; i < N; ++i) c[i] = 7.0f;\n    save("data/c.bin", c, sizeof c);\n'
    '    save("data/ref_c.bin", c, sizeof c);')


# The same forgery through a raw system call, which the access log cannot see.
RAW_FORGER = "#include <fcntl.h>\n#include <unistd.h>\n#include <sys/syscall.h>\n" + FORGER.replace(
    '    save("data/ref_c.bin", c, sizeof c);',
    '    int fd = (int)syscall(SYS_openat, AT_FDCWD, "data/ref_c.bin", O_WRONLY | O_CREAT, 0644);\n'
    '    if (fd < 0 || write(fd, c, sizeof c) != (ssize_t)sizeof c) return 4;\n    close(fd);')


def test_program_forging_the_reference_is_rejected_or_fails(bench, gen_cache):
    result = check(_vecadd(bench), FORGER, "cpu", gen_cache_dir=gen_cache)
    assert result.status == Status.REJECTED
    assert result.reason == "tried to write or remove the hidden reference file data/ref_c.bin"
    # Unseen, the forged file is still replaced by the real reference before compare.py runs.
    result = check(_vecadd(bench), RAW_FORGER, "cpu", gen_cache_dir=gen_cache)
    assert result.status == Status.FAILED, result.reason
    assert "printed F" in result.reason


def test_build_failure_crash_and_missing_output(bench, gen_cache):
    scale = _vecadd(bench)
    broken = check(scale, vecadd_cu(64).replace("int main() {", "int main() { undeclared();"),
                   "cpu", gen_cache_dir=gen_cache)
    assert broken.status == Status.COMPILE_ERROR and "does not compile" in broken.reason
    assert check(scale, "", "cpu", gen_cache_dir=gen_cache).status == Status.COMPILE_ERROR
    crash = check(scale, vecadd_cu(64).replace("return 0;\n}", "return 3;\n}"), "cpu",
                  gen_cache_dir=gen_cache)
    assert crash.status == Status.RUNTIME_ERROR and "exit code 3" in crash.reason
    silent = check(scale, vecadd_cu(64).replace('save("data/c.bin", c, sizeof c);', ""), "cpu",
                   gen_cache_dir=gen_cache)
    assert silent.status == Status.FAILED
    assert "compare.py" in silent.reason and "the program wrote no data/c.bin" in silent.reason


def test_gpu_only_feature_is_needs_gpu(bench, gen_cache):
    ptx = vecadd_cu(64).replace("int i = blockIdx.x", 'asm volatile("membar.gl;");\n    int i = '
                                "blockIdx.x")
    result = check(_vecadd(bench), ptx, "cpu", gen_cache_dir=gen_cache)
    assert result.status == Status.NEEDS_GPU, result.reason


def test_hanging_program_times_out(bench, gen_cache):
    spin = vecadd_cu(64).replace("if (i < n) c[i]", "volatile int spin = 1;\n"
                                "    while (spin) { }\n    if (i < n) c[i]")
    result = check(_vecadd(bench), spin, "cpu", gen_cache_dir=gen_cache,
                   limits=Limits(cpu_seconds=2, wall_seconds=4))
    assert result.status in (Status.TIMEOUT, Status.RUNTIME_ERROR), result.reason
    assert "timed out" in result.reason or "cpu" in result.reason


# --- misbehaving benchmark scripts --------------------------------------------------------------

@pytest.mark.parametrize("compare_py,reason", [
    ("print('hello, world')\n", "compare.py printed no T/F verdict: 'hello, world'"),
    ("pass\n", "compare.py printed nothing (no T/F verdict)"),
    ("print('T')\n1 / 0\n", "compare.py failed: ZeroDivisionError: division by zero"),
    ("print('checking')\nprint('T')\n", ""),
])
def test_compare_verdicts(bench, gen_cache, compare_py, reason):
    scale = dataclasses.replace(_vecadd(bench), compare_py=compare_py)
    result = check(scale, scale.bench_cu, "cpu", gen_cache_dir=gen_cache)
    assert result.reason == reason
    assert result.status == (Status.PASSED if not reason else Status.FAILED)


def test_failing_gen_is_a_harness_error(bench, gen_cache):
    scale = _with(_vecadd(bench), gen_py="raise SystemExit('no inputs today')\n")
    result = check(scale, scale.bench_cu, "cpu", gen_cache_dir=gen_cache)
    # No verdict on the program: the benchmark's own script failed.
    assert result.status == Status.ERROR and result.error_origin == "task"
    assert result.reason == "harness: gen.py failed: no inputs today"
    assert result.cases == [] and result.compile is None


@pytest.fixture
def listener():
    """A TCP server on loopback recording whatever reaches it."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    srv.settimeout(0.2)
    got: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                got.append(conn.recv(65536))

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1], got
    stop.set()
    t.join()
    srv.close()


def test_gen_cannot_exfiltrate(bench, gen_cache, listener, tmp_path):
    port, got = listener
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    base = _vecadd(bench)
    leak = base.gen_py + (
        "import socket\n"
        "stolen = b'host data'\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(stolen)\n"
        "except OSError as exc:\n"
        "    print('blocked', exc)\n")
    result = check(_with(base, gen_py=leak), base.bench_cu, "cpu", gen_cache_dir=gen_cache)
    assert result.status == Status.ERROR and result.error_origin == "task"
    assert result.reason == "harness: gen.py refused: opened a network socket (inet)"
    assert got == []
    peek = base.gen_py + f"print(open({str(secret)!r}).read())\n"
    result = check(_with(base, gen_py=peek), base.bench_cu, "cpu", gen_cache_dir=gen_cache)
    assert result.status == Status.ERROR and result.error_origin == "task"
    assert result.reason.startswith("harness: gen.py failed: FileNotFoundError")


@pytest.mark.slow
def test_thorough_runs_every_variant_and_schedule(bench, gen_cache):
    scale = _vecadd(bench)
    result = check(scale, scale.bench_cu, "cpu", thorough=True, gen_cache_dir=gen_cache)
    assert result.status == Status.PASSED, result.reason
    assert len(result.cases) > 1
    wrong = check(scale, vecadd_cu(64, wrong=True), "cpu", thorough=True, gen_cache_dir=gen_cache)
    assert wrong.status == Status.FAILED and "[" in wrong.reason


def test_links_planted_by_the_program_are_not_followed(bench, gen_cache, tmp_path):
    victims = [tmp_path / "victim1", tmp_path / "victim2"]
    for v in victims:
        v.write_text("untouched")
    plant = ("#include <unistd.h>\n" + vecadd_cu(64)).replace(
        "    return 0;\n}",
        f'    symlink("{victims[0]}", "compare.py");\n'
        f'    symlink("{victims[1]}", "data/ref_c.bin");\n    return 0;\n}}')
    result = check(_vecadd(bench), plant, "cpu", gen_cache_dir=gen_cache)
    assert result.status == Status.PASSED, result.reason
    assert [v.read_text() for v in victims] == ["untouched", "untouched"]


def test_host_only_program_is_rejected(bench, gen_cache):
    host = vecadd_cu(64).replace("add<<<(N + 127) / 128, 128>>>(da, db, dc, N);", "").replace(
        "cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost);",
        "for (int i = 0; i < N; ++i) c[i] = a[i] + b[i];")
    result = check(_vecadd(bench), host, "cpu", gen_cache_dir=gen_cache)
    assert result.status == Status.REJECTED and "no kernel launch" in result.reason
